import Platform
import Opus
import RTP

/// An RTP datagram as the receive path takes it: the parser, the source validator, and for
/// what it accepts, the jitter buffer (with Opus decoding, concealment and FEC on each pull).
/// The validator and the buffer live across inputs, as they do across a call.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let input = UnsafeRawBufferPointer(start: data, count: size)
    if let packet = try? RTPPacket.parse(input) {
        // What parsed writes back to a packet that parses to the same header.
        let header = packet.header
        if let bytes = try? header.packet(payload: [1, 2, 3]), (try? RTPPacket.parse(bytes))?.header != header {
            fatalError("RTP header does not survive writing: \(Array(input))")
        }
    }
    now &+= 2_500_000
    if case let .accept(packet, payload) = validator.validate(input, from: source, arrival: now) {
        buffer.insert(packet, payload: UnsafeRawBufferPointer(rebasing: input[payload]))
    }
    count += 1
    if count % 8 == 0 { out.withUnsafeMutableBufferPointer { buffer.pull(into: $0, now: now) } }
    return 0
}

// The receive path's state, kept from one input to the next (an input every 2.5 ms, a pull
// of 20 ms every 8 inputs).
nonisolated(unsafe) var validator = RTPSourceValidator()
nonisolated(unsafe) var buffer = JitterBuffer(decoder: try! OpusDecoder(sampleRate: 16000))
let source = try! SocketAddress(host: "127.0.0.1", port: 9)
nonisolated(unsafe) var out = [Int16](repeating: 0, count: 320)
nonisolated(unsafe) var now: UInt64 = 0
nonisolated(unsafe) var count = 0
