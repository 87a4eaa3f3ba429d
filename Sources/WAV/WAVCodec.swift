#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Reads and writes WAV files: 16-bit PCM and 32-bit float, mono and stereo, any rate.
///
/// Thread safety: stateless; every function is safe to call from any thread
/// (but not from a real-time audio thread: they allocate and do file I/O).
public enum WAV {
    /// Reads a WAV file.
    ///
    /// Accepts `WAVE_FORMAT_PCM` (16-bit), `WAVE_FORMAT_IEEE_FLOAT` (32-bit) and
    /// `WAVE_FORMAT_EXTENSIBLE` carrying either; skips unknown chunks.
    /// - Throws: ``WAVError`` naming what was found when the file is not one of those.
    public static func read(_ path: String) throws(WAVError) -> WAVAudio {
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw .io(path: path, reason: String(describing: error))
        }
        return try decode([UInt8](data))
    }

    /// Writes `audio` to `path` in `audio.format`, replacing any existing file.
    public static func write(_ audio: WAVAudio, to path: String) throws(WAVError) {
        let bytes = try encode(audio)
        do {
            try Data(bytes).write(to: URL(fileURLWithPath: path))
        } catch {
            throw .io(path: path, reason: String(describing: error))
        }
    }

    /// Decodes WAV file bytes.
    public static func decode(_ bytes: [UInt8]) throws(WAVError) -> WAVAudio {
        let reader = ByteReader(bytes)
        guard bytes.count >= 12, reader.fourCC(at: 0) == "RIFF", reader.fourCC(at: 8) == "WAVE" else {
            throw .notWAV(found: String(decoding: bytes.prefix(12).map { (32...126).contains($0) ? $0 : 46 }, as: UTF8.self))
        }
        var offset = 12
        var format: (tag: UInt16, channels: Int, rate: Int, bits: UInt16)?
        var payload: ArraySlice<UInt8>?
        while offset + 8 <= bytes.count, payload == nil {
            let id = reader.fourCC(at: offset)
            let size = Int(reader.uint32(at: offset + 4))
            let body = offset + 8
            let available = bytes.count - body
            if id == "fmt " {
                guard size >= 16, available >= 16 else {
                    throw .truncated(what: "'fmt ' chunk", declared: size, available: available)
                }
                var tag = reader.uint16(at: body)
                let bits = reader.uint16(at: body + 14)
                if tag == 0xFFFE {
                    // WAVE_FORMAT_EXTENSIBLE: the real tag is the first two bytes of the sub-format GUID.
                    guard size >= 40, available >= 40 else {
                        throw .truncated(what: "extensible 'fmt ' chunk", declared: size, available: available)
                    }
                    tag = reader.uint16(at: body + 24)
                }
                format = (tag, Int(reader.uint16(at: body + 2)), Int(reader.uint32(at: body + 4)), bits)
            } else if id == "data" {
                guard size <= available else {
                    throw .truncated(what: "'data' chunk", declared: size, available: available)
                }
                payload = bytes[body..<(body + size)]
            }
            offset = body + size + (size & 1)  // chunks are padded to even sizes
        }
        guard let format else { throw .missingChunk("fmt ") }
        guard let payload else { throw .missingChunk("data") }

        let sampleFormat: WAVSampleFormat
        switch (format.tag, format.bits) {
        case (1, 16): sampleFormat = .int16
        case (3, 32): sampleFormat = .float32
        default: throw .unsupportedEncoding(formatTag: format.tag, bitsPerSample: format.bits)
        }
        guard format.channels == 1 || format.channels == 2 else { throw .unsupportedChannelCount(format.channels) }
        guard (1...384_000).contains(format.rate) else { throw .unsupportedSampleRate(format.rate) }

        let samples = Self.samples(payload, format: sampleFormat, channels: format.channels, reader: reader)
        return WAVAudio(sampleRate: format.rate, channels: format.channels, format: sampleFormat, samples: samples)
    }

    /// The samples of a `data` chunk as floats; a partial last frame is dropped.
    private static func samples(_ payload: ArraySlice<UInt8>, format: WAVSampleFormat, channels: Int,
                                reader: ByteReader) -> [Float] {
        let frameBytes = format.bytesPerSample * channels
        let usable = payload.count - payload.count % frameBytes
        var samples = [Float]()
        samples.reserveCapacity(usable / format.bytesPerSample)
        var i = payload.startIndex
        let end = payload.startIndex + usable
        switch format {
        case .int16:
            while i < end {
                samples.append(Float(Int16(bitPattern: reader.uint16(at: i))) / 32768)
                i += 2
            }
        case .float32:
            while i < end {
                samples.append(Float(bitPattern: reader.uint32(at: i)))
                i += 4
            }
        }
        return samples
    }

    /// Encodes audio as WAV file bytes in `audio.format`.
    public static func encode(_ audio: WAVAudio) throws(WAVError) -> [UInt8] {
        guard audio.channels == 1 || audio.channels == 2 else { throw .unsupportedChannelCount(audio.channels) }
        guard (1...384_000).contains(audio.sampleRate) else { throw .unsupportedSampleRate(audio.sampleRate) }
        let bytesPerSample = audio.format.bytesPerSample
        let dataSize = audio.samples.count * bytesPerSample
        var out = [UInt8]()
        out.reserveCapacity(44 + dataSize)
        out.append(contentsOf: Array("RIFF".utf8))
        out.appendLE(UInt32(36 + dataSize))
        out.append(contentsOf: Array("WAVEfmt ".utf8))
        out.appendLE(UInt32(16))
        out.appendLE(UInt16(audio.format == .int16 ? 1 : 3))
        out.appendLE(UInt16(audio.channels))
        out.appendLE(UInt32(audio.sampleRate))
        out.appendLE(UInt32(audio.sampleRate * audio.channels * bytesPerSample))
        out.appendLE(UInt16(audio.channels * bytesPerSample))
        out.appendLE(UInt16(bytesPerSample * 8))
        out.append(contentsOf: Array("data".utf8))
        out.appendLE(UInt32(dataSize))
        switch audio.format {
        case .int16:
            for s in audio.samples { out.appendLE(UInt16(bitPattern: WAVAudio.int16(s))) }
        case .float32:
            for s in audio.samples { out.appendLE(s.bitPattern) }
        }
        return out
    }
}

/// Little-endian field access into a byte array.
private struct ByteReader {
    let bytes: [UInt8]
    init(_ bytes: [UInt8]) { self.bytes = bytes }

    func uint16(at i: Int) -> UInt16 { UInt16(bytes[i]) | UInt16(bytes[i + 1]) << 8 }
    func uint32(at i: Int) -> UInt32 {
        UInt32(bytes[i]) | UInt32(bytes[i + 1]) << 8 | UInt32(bytes[i + 2]) << 16 | UInt32(bytes[i + 3]) << 24
    }
    func fourCC(at i: Int) -> String { String(decoding: bytes[i..<(i + 4)], as: UTF8.self) }
}

extension [UInt8] {
    fileprivate mutating func appendLE(_ v: UInt16) {
        append(UInt8(truncatingIfNeeded: v))
        append(UInt8(truncatingIfNeeded: v >> 8))
    }
    fileprivate mutating func appendLE(_ v: UInt32) {
        for shift in stride(from: 0, to: 32, by: 8) { append(UInt8(truncatingIfNeeded: v >> UInt32(shift))) }
    }
}
