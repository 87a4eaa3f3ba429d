import Opus
import Platform
import RTP
import Testing
import TestSupport

/// Comfort noise (RFC 3389) from a G.711 or G.722 peer: accepted, played at its level, never loss.
@Suite("Comfort noise descriptors")
struct ComfortNoiseTests {
    static let peer = try! SocketAddress(host: "127.0.0.1", port: 5000)

    @Test("The validator takes descriptors of the negotiated type only, and drops malformed ones")
    func validation() {
        var configuration = RTPSourceValidator.Configuration(payloadType: 0)
        configuration.codec = .pcmu
        configuration.comfortNoisePayloadType = ComfortNoisePayload.payloadType
        var v = RTPSourceValidator(configuration: configuration)
        func send(_ seq: UInt16, pt: UInt8, _ payload: [UInt8]) -> RTPSourceValidator.Verdict {
            let bytes = try! RTPHeader(payloadType: pt, sequenceNumber: seq, timestamp: UInt32(seq) * 160, ssrc: 7).packet(payload: payload)
            return bytes.withUnsafeBytes { v.validate($0, from: Self.peer, arrival: UInt64(seq) * 20_000_000) }
        }
        let audio = [UInt8](repeating: 0xFF, count: 160)
        _ = send(1, pt: 0, audio)
        _ = send(2, pt: 0, audio)
        guard case let .accept(packet, _) = send(3, pt: 13, [40]) else { Issue.record("descriptor dropped"); return }
        #expect(packet.isComfortNoise && !packet.isTelephoneEvent)
        #expect(send(4, pt: 13, [200]) == .drop(.malformed))  // a level past 127 dBov
        #expect(send(5, pt: 13, [UInt8](repeating: 30, count: 65)) == .drop(.malformed))
        #expect(send(6, pt: 19, [40]) == .drop(.wrongPayloadType))
        var plain = RTPSourceValidator.Configuration(payloadType: 0)
        plain.codec = .pcmu
        v = RTPSourceValidator(configuration: plain)
        _ = send(1, pt: 0, audio)
        _ = send(2, pt: 0, audio)
        #expect(send(3, pt: 13, [40]) == .drop(.wrongPayloadType))  // not negotiated
    }

    @Test("A described silence plays as noise at the descriptor's level, and its sequence number is no loss",
          arguments: [AudioCodec.pcmu, .g722])
    func silenceAtItsLevel(codec: AudioCodec) throws {
        var buffer = try JitterBuffer(configuration: JitterBufferConfiguration(sampleRate: 16000), codec: codec)
        var out = [Int16](repeating: 0, count: 320)
        var played: [Int16] = []
        let tone = (0..<160).map { UInt8(truncatingIfNeeded: $0 * 37) }  // any G.711/G.722 codes: loud audio
        var sequence: Int64 = 0
        func pull(_ k: Int) {
            out.withUnsafeMutableBufferPointer { buffer.pull(into: $0, now: UInt64(k) * 20_000_000 + 1_000_000_000) }
            played += out
        }
        func insert(_ payload: [UInt8], frame k: Int, noise: Bool = false) {
            let packet = RTPReceivedPacket(sequenceNumber: sequence, timestamp: UInt32(k * 160),
                                           arrival: UInt64(k) * 20_000_000 + 1_000_000_000, isComfortNoise: noise)
            payload.withUnsafeBytes { buffer.insert(packet, payload: $0) }
            sequence += 1
        }
        // 1 s of audio, a descriptor at 40 dBov, 1 s with nothing sent, 1 s of audio again.
        for k in 0..<150 {
            if k < 50 || k >= 100 { insert(tone, frame: k) }
            if k == 50 { insert([40], frame: k, noise: true) }
            pull(k)
        }
        let s = buffer.statistics
        #expect(s.lost == 0 && s.comfortNoiseDescriptors == 1)
        let silence = played[(70 * 320)..<(95 * 320)].map { Double($0) }
        let rms = (silence.reduce(0) { $0 + $1 * $1 } / Double(silence.count)).squareRoot()
        let expected = 32767 * 0.01  // 40 dB under full scale
        #expect(rms > expected / 1.5 && rms < expected * 1.5, "noise RMS \(rms), wanted \(expected)")
    }
}
