import Platform
import RTP
import Testing

@Suite("Source validation and locking (RFC 3550 A.1, section 8.2)")
struct SourceValidatorTests {
    static let a = try! SocketAddress(host: "127.0.0.1", port: 5000)
    static let b = try! SocketAddress(host: "127.0.0.1", port: 6000)
    static let c = try! SocketAddress(host: "::1", port: 5000)

    /// An RTP datagram with a valid one-frame Opus payload (SILK WB 20 ms TOC).
    static func datagram(seq: UInt16, ts: UInt32, ssrc: UInt32 = 1, pt: UInt8 = 96, payload: [UInt8] = [0x48, 1, 2]) -> [UInt8] {
        try! RTPHeader(payloadType: pt, sequenceNumber: seq, timestamp: ts, ssrc: ssrc).packet(payload: payload)
    }

    func validate(_ v: inout RTPSourceValidator, _ bytes: [UInt8], from: SocketAddress, at ms: UInt64) -> RTPSourceValidator.Verdict {
        bytes.withUnsafeBytes { v.validate($0, from: from, arrival: ms * 1_000_000) }
    }

    func accepted(_ verdict: RTPSourceValidator.Verdict) -> Bool {
        if case .accept = verdict { return true } else { return false }
    }

    @Test("The first source to send two packets in sequence is locked")
    func locks() {
        var v = RTPSourceValidator()
        #expect(validate(&v, Self.datagram(seq: 10, ts: 0), from: Self.a, at: 0) == .drop(.probation))
        let verdict = validate(&v, Self.datagram(seq: 11, ts: 960), from: Self.a, at: 20)
        #expect(accepted(verdict))
        if case let .accept(packet, payload) = verdict {
            #expect(packet.sequenceNumber == 11 && packet.timestamp == 960 && packet.sourceGeneration == 1)
            #expect(payload == 12..<15)
        }
        #expect(v.source == Self.a && v.ssrc == 1 && v.generation == 1)
    }

    @Test("Interleaved candidates do not stall each other")
    func interleavedCandidates() {
        var v = RTPSourceValidator()
        _ = validate(&v, Self.datagram(seq: 1, ts: 0, ssrc: 1), from: Self.a, at: 0)
        _ = validate(&v, Self.datagram(seq: 500, ts: 0, ssrc: 2), from: Self.b, at: 1)
        #expect(accepted(validate(&v, Self.datagram(seq: 2, ts: 960, ssrc: 1), from: Self.a, at: 20)))
        #expect(v.source == Self.a)
    }

    @Test("Two interleaved candidates never evict each other, whichever slots they hash to")
    func interleavedCandidatesAnySlots() {
        // 1000 pairs: with one slot per candidate, about four would share it.
        var locked = 0
        for ssrc in UInt32(1)...1000 {
            var v = RTPSourceValidator()
            _ = validate(&v, Self.datagram(seq: 1, ts: 0, ssrc: ssrc), from: Self.a, at: 0)
            _ = validate(&v, Self.datagram(seq: 500, ts: 0, ssrc: ssrc &+ 7), from: Self.b, at: 1)
            if accepted(validate(&v, Self.datagram(seq: 2, ts: 960, ssrc: ssrc), from: Self.a, at: 20)) { locked += 1 }
        }
        #expect(locked == 1000)
    }

    @Test("Malformed packets, wrong payload types and bad Opus never pass")
    func rejects() {
        var v = RTPSourceValidator()
        #expect(validate(&v, [0x80, 96, 0], from: Self.a, at: 0) == .drop(.malformed))
        #expect(validate(&v, Self.datagram(seq: 1, ts: 0, pt: 0), from: Self.a, at: 0) == .drop(.wrongPayloadType))
        #expect(validate(&v, Self.datagram(seq: 1, ts: 0, payload: []), from: Self.a, at: 0) == .drop(.malformed))
        #expect(validate(&v, Self.datagram(seq: 1, ts: 0, payload: [0x0B, 0x00]), from: Self.a, at: 0) == .drop(.malformed))
        #expect(v.dropped(.malformed) == 3 && v.dropped(.wrongPayloadType) == 1 && v.accepted == 0)
        // A truncated datagram, dropped by the network thread without validating it.
        v.recordDrop(.malformed)
        #expect(v.dropped(.malformed) == 4 && v.accepted == 0 && v.source == nil)
    }

    @Test("After the lock, a flood from another address or SSRC is dropped and counted")
    func flood() {
        var v = RTPSourceValidator()
        _ = validate(&v, Self.datagram(seq: 1, ts: 0), from: Self.a, at: 0)
        _ = validate(&v, Self.datagram(seq: 2, ts: 960), from: Self.a, at: 20)
        var legit = 0
        for i in 0..<1000 {
            let t = UInt64(40 + i)
            if i % 20 == 0 {
                let seq = UInt16(3 + i / 20)
                if accepted(validate(&v, Self.datagram(seq: seq, ts: UInt32(seq) * 960), from: Self.a, at: t)) { legit += 1 }
            }
            // Another address in perfect sequence, and the locked address with another SSRC.
            #expect(!accepted(validate(&v, Self.datagram(seq: UInt16(i), ts: UInt32(i) * 960, ssrc: 9), from: Self.b, at: t)))
            #expect(!accepted(validate(&v, Self.datagram(seq: UInt16(i), ts: UInt32(i) * 960, ssrc: 8), from: Self.a, at: t)))
        }
        #expect(legit == 50)
        #expect(v.dropped(.foreignSource) == 1000)
        #expect(v.dropped(.foreignSSRC) == 1000)
        #expect(v.source == Self.a && v.ssrc == 1 && v.generation == 1)
    }

    @Test("An SSRC change from the locked address takes over after the hold-off")
    func ssrcChange() {
        var v = RTPSourceValidator()
        _ = validate(&v, Self.datagram(seq: 1, ts: 0, ssrc: 1), from: Self.a, at: 0)
        _ = validate(&v, Self.datagram(seq: 2, ts: 960, ssrc: 1), from: Self.a, at: 20)
        // The sender restarts with SSRC 2 at 40 ms, every 20 ms.
        var firstAccepted: UInt64?
        for k in 0..<20 {
            let t = UInt64(40 + 20 * k)
            if accepted(validate(&v, Self.datagram(seq: UInt16(7000 + k), ts: UInt32(k) * 960, ssrc: 2), from: Self.a, at: t)),
               firstAccepted == nil {
                firstAccepted = t
            }
        }
        // Old SSRC last heard at 20 ms; 100 ms hold-off: the new one is accepted from 120 ms.
        #expect(firstAccepted == 120)
        #expect(v.ssrc == 2 && v.generation == 2)
        // The old SSRC is now the foreign one.
        #expect(!accepted(validate(&v, Self.datagram(seq: 3, ts: 1920, ssrc: 1), from: Self.a, at: 500)))
    }

    @Test("After a BYE the new SSRC takes over at once")
    func goodbye() {
        var v = RTPSourceValidator()
        _ = validate(&v, Self.datagram(seq: 1, ts: 0, ssrc: 1), from: Self.a, at: 0)
        _ = validate(&v, Self.datagram(seq: 2, ts: 960, ssrc: 1), from: Self.a, at: 20)
        v.goodbye()
        _ = validate(&v, Self.datagram(seq: 50, ts: 0, ssrc: 3), from: Self.a, at: 25)
        #expect(accepted(validate(&v, Self.datagram(seq: 51, ts: 960, ssrc: 3), from: Self.a, at: 30)))
    }

    @Test("Another address takes over only after the source timeout")
    func addressTimeout() {
        var v = RTPSourceValidator()
        _ = validate(&v, Self.datagram(seq: 1, ts: 0), from: Self.a, at: 0)
        _ = validate(&v, Self.datagram(seq: 2, ts: 960), from: Self.a, at: 20)
        _ = validate(&v, Self.datagram(seq: 1, ts: 0, ssrc: 5), from: Self.c, at: 1000)
        #expect(validate(&v, Self.datagram(seq: 2, ts: 960, ssrc: 5), from: Self.c, at: 1020) == .drop(.foreignSource))
        #expect(accepted(validate(&v, Self.datagram(seq: 3, ts: 1920, ssrc: 5), from: Self.c, at: 2020)))
        #expect(v.source == Self.c && v.generation == 2)
    }

    @Test("After the peer says it moved, a source at its new host takes over once through probation; others still wait")
    func announcedMove() {
        var v = RTPSourceValidator()
        _ = validate(&v, Self.datagram(seq: 1, ts: 0), from: Self.a, at: 0)
        _ = validate(&v, Self.datagram(seq: 2, ts: 960), from: Self.a, at: 20)
        v.peerMoved(to: try! SocketAddress(host: "::1", port: 7000))  // the host counts, not the port
        // A stranger elsewhere still cannot take over while the old source is fresh.
        _ = validate(&v, Self.datagram(seq: 1, ts: 0, ssrc: 9), from: Self.b, at: 40)
        #expect(validate(&v, Self.datagram(seq: 2, ts: 960, ssrc: 9), from: Self.b, at: 60) == .drop(.foreignSource))
        // The announced host: probation, then at once.
        #expect(validate(&v, Self.datagram(seq: 100, ts: 0, ssrc: 5), from: Self.c, at: 80) == .drop(.probation))
        #expect(accepted(validate(&v, Self.datagram(seq: 101, ts: 960, ssrc: 5), from: Self.c, at: 100)))
        #expect(v.source == Self.c && v.ssrc == 5 && v.generation == 2)
        // The announcement is used up: the old address is now a stranger.
        _ = validate(&v, Self.datagram(seq: 3, ts: 1920), from: Self.a, at: 120)
        #expect(validate(&v, Self.datagram(seq: 4, ts: 2880), from: Self.a, at: 140) == .drop(.foreignSource))
    }

    @Test("An announced move that never comes expires after 5 s")
    func announcedMoveExpires() {
        var v = RTPSourceValidator()
        _ = validate(&v, Self.datagram(seq: 1, ts: 0), from: Self.a, at: 0)
        _ = validate(&v, Self.datagram(seq: 2, ts: 960), from: Self.a, at: 20)
        v.peerMoved(to: Self.c)
        for k in 3..<300 { _ = validate(&v, Self.datagram(seq: UInt16(k), ts: UInt32(k) * 960), from: Self.a, at: UInt64(k) * 20) }
        // 6 s later the peer still sends from where it was; a source at the announced host waits like any other.
        _ = validate(&v, Self.datagram(seq: 1, ts: 0, ssrc: 5), from: Self.c, at: 6000)
        #expect(validate(&v, Self.datagram(seq: 2, ts: 960, ssrc: 5), from: Self.c, at: 6020) == .drop(.foreignSource))
        #expect(v.source == Self.a)
    }

    @Test("Sequence jumps are held back until confirmed; RTCP is accepted only from the locked source")
    func jumpsAndRTCP() {
        var v = RTPSourceValidator()
        _ = validate(&v, Self.datagram(seq: 1, ts: 0), from: Self.a, at: 0)
        _ = validate(&v, Self.datagram(seq: 2, ts: 960), from: Self.a, at: 20)
        #expect(validate(&v, Self.datagram(seq: 30000, ts: 1920), from: Self.a, at: 40) == .drop(.badSequence))
        #expect(accepted(validate(&v, Self.datagram(seq: 30001, ts: 2880), from: Self.a, at: 60)))
        #expect(v.acceptsRTCP(from: Self.a.with(port: 5001), senderSSRC: 1))
        #expect(!v.acceptsRTCP(from: Self.a.with(port: 5001), senderSSRC: 2))
        #expect(!v.acceptsRTCP(from: Self.c, senderSSRC: 1))
    }
}
