import Opus
import RTP

/// An Opus payload (RFC 6716 section 3 framing): the TOC parser, the FEC probe, and the decoder
/// into a buffer sized from the parsed duration, as the jitter buffer sizes it.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let input = UnsafeRawBufferPointer(start: data, count: size)
    _ = OpusPayload.hasFEC(input)
    guard let info = OpusPayload.parse(input) else { return 0 }
    if info.duration > OpusPayload.maxDuration || info.firstFrame.upperBound > size || info.firstFrame.lowerBound < 0 {
        fatalError("Opus payload info out of bounds: \(info) for \(size) bytes")
    }
    _ = OpusPayload.hasFEC(input, info: info)
    // The duration is in 48 kHz samples; at 16 kHz a third of it.
    let frames = info.duration / 3
    _ = pcm.withUnsafeMutableBufferPointer { buffer in
        try? decoder.decode(input, into: UnsafeMutableBufferPointer(rebasing: buffer[..<frames]))
    }
    if size > 0, frames > 0 {
        _ = pcm.withUnsafeMutableBufferPointer { buffer in
            try? decoder.decodeFEC(from: input, frames: frames, into: UnsafeMutableBufferPointer(rebasing: buffer[..<frames]))
        }
    }
    return 0
}

let decoder = try! OpusDecoder(sampleRate: 16000)
nonisolated(unsafe) var pcm = [Int16](repeating: 0, count: OpusPayload.maxDuration / 3)
