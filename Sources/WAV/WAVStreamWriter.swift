#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A 16-bit PCM WAV file written as the samples come (a recording of unknown length): the
/// header's sizes are written at ``finish()``; a file never finished says its data is empty,
/// and most readers still play what is there.
///
/// Thread safety: not thread-safe; one owner (it is non-copyable), on a thread that may block
/// on the disk, never a real-time audio thread.
public struct WAVStreamWriter: ~Copyable {
    private let file: UnsafeMutablePointer<FILE>
    /// The file's path.
    public let path: String
    /// Samples per channel per second, and channels per frame.
    public let sampleRate: Int
    public let channels: Int
    /// Frames written so far.
    public private(set) var frames = 0

    /// Creates (or replaces) the file at `path` and writes its header.
    ///
    /// - Throws: ``WAVError/unsupportedSampleRate(_:)``, ``WAVError/unsupportedChannelCount(_:)``,
    ///   ``WAVError/io(path:reason:)`` when the file cannot be created.
    public init(path: String, sampleRate: Int, channels: Int) throws(WAVError) {
        guard (1...384_000).contains(sampleRate) else { throw .unsupportedSampleRate(sampleRate) }
        guard channels == 1 || channels == 2 else { throw .unsupportedChannelCount(channels) }
        guard let file = fopen(path, "wb") else { throw .io(path: path, reason: String(cString: strerror(errno))) }
        let header = Self.header(sampleRate: sampleRate, channels: channels, dataBytes: 0)
        guard header.withUnsafeBytes({ fwrite($0.baseAddress, 1, $0.count, file) }) == header.count else {
            let reason = String(cString: strerror(errno))
            fclose(file)
            throw .io(path: path, reason: reason)
        }
        self.file = file
        self.path = path
        self.sampleRate = sampleRate
        self.channels = channels
    }

    deinit { fclose(file) }

    /// Appends interleaved frames (`samples.count` a multiple of the channel count).
    public mutating func append(_ samples: UnsafeBufferPointer<Int16>) throws(WAVError) {
        guard !samples.isEmpty else { return }
        var bytes = [UInt8]()
        bytes.reserveCapacity(samples.count * 2)
        for s in samples { bytes.append(UInt8(truncatingIfNeeded: s)); bytes.append(UInt8(truncatingIfNeeded: s >> 8)) }
        try write(bytes)
        frames += samples.count / channels
    }

    /// Writes the header's sizes and flushes the file (it closes when the writer goes away);
    /// more frames may follow, and another `finish()` then.
    public mutating func finish() throws(WAVError) {
        let dataBytes = frames * channels * 2
        guard fseek(file, 0, SEEK_SET) == 0 else { throw .io(path: path, reason: String(cString: strerror(errno))) }
        try write(Self.header(sampleRate: sampleRate, channels: channels, dataBytes: dataBytes))
        guard fflush(file) == 0, fseek(file, 0, SEEK_END) == 0 else { throw .io(path: path, reason: String(cString: strerror(errno))) }
    }

    private func write(_ bytes: [UInt8]) throws(WAVError) {
        let written = bytes.withUnsafeBytes { fwrite($0.baseAddress, 1, $0.count, file) }
        guard written == bytes.count else { throw .io(path: path, reason: String(cString: strerror(errno))) }
    }

    /// The 44-byte RIFF/WAVE header of 16-bit PCM with `dataBytes` of samples.
    static func header(sampleRate: Int, channels: Int, dataBytes: Int) -> [UInt8] {
        var h = [UInt8]()
        func u32(_ v: Int) { for i in 0..<4 { h.append(UInt8(truncatingIfNeeded: v >> (8 * i))) } }
        func u16(_ v: Int) { for i in 0..<2 { h.append(UInt8(truncatingIfNeeded: v >> (8 * i))) } }
        h += Array("RIFF".utf8); u32(36 + dataBytes); h += Array("WAVE".utf8)
        h += Array("fmt ".utf8); u32(16); u16(1); u16(channels); u32(sampleRate)
        u32(sampleRate * channels * 2); u16(channels * 2); u16(16)
        h += Array("data".utf8); u32(dataBytes)
        return h
    }
}
