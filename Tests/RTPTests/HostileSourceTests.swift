import Platform
@testable import RTP
import Testing

/// RTP and RTCP from strangers, in virtual time: what the validator lets become the peer's source.
@Suite("Hostile sources: the declared address, candidate floods, SSRC collisions, strict RTCP")
struct HostileSourceTests {
    static let peer = try! SocketAddress(host: "127.0.0.1", port: 5000)
    static let otherPort = try! SocketAddress(host: "127.0.0.1", port: 5002)
    static let elsewhere = try! SocketAddress(host: "127.0.0.2", port: 7000)

    static func datagram(seq: UInt16, ssrc: UInt32) -> [UInt8] {
        SourceValidatorTests.datagram(seq: seq, ts: UInt32(seq) &* 960, ssrc: ssrc)
    }

    static func validate(_ v: inout RTPSourceValidator, seq: UInt16, ssrc: UInt32, from: SocketAddress, atMicroseconds t: UInt64)
        -> RTPSourceValidator.Verdict {
        datagram(seq: seq, ssrc: ssrc).withUnsafeBytes { v.validate($0, from: from, arrival: t * 1000) }
    }

    static func accepted(_ verdict: RTPSourceValidator.Verdict) -> Bool {
        if case .accept = verdict { true } else { false }
    }

    static func expecting(_ address: SocketAddress) -> RTPSourceValidator {
        var configuration = RTPSourceValidator.Configuration()
        configuration.expectedSource = address
        return RTPSourceValidator(configuration: configuration)
    }

    @Test("Before the lock only the declared address may become the source: a port not in the SDP that sends first is dropped, even after the peer falls silent")
    func onlyTheDeclaredAddress() {
        var v = Self.expecting(Self.peer)
        // The stranger starts 300 packets early, in perfect sequence (the issue's case: it locked and the peer's 298 were dropped).
        for k in 0..<300 {
            #expect(Self.validate(&v, seq: UInt16(k), ssrc: 66, from: Self.otherPort, atMicroseconds: UInt64(k) * 20_000) == .drop(.foreignSource))
        }
        var heard = 0
        for k in 0..<300 {
            let t = UInt64(6_000_000 + k * 20_000)
            if Self.accepted(Self.validate(&v, seq: UInt16(1000 + k), ssrc: 1, from: Self.peer, atMicroseconds: t)) { heard += 1 }
            _ = Self.validate(&v, seq: UInt16(k), ssrc: 66, from: Self.otherPort, atMicroseconds: t + 5000)
        }
        #expect(heard == 299)  // all but the first, which is probation
        #expect(v.source == Self.peer && v.generation == 1)
        #expect(v.dropped(.foreignSource) == 600)
        // 3 s of silence from the peer: the stranger still cannot take over (it could after 2 s before).
        for k in 0..<10 {
            _ = Self.validate(&v, seq: UInt16(400 + k), ssrc: 66, from: Self.otherPort, atMicroseconds: UInt64(15_000_000 + k * 20_000))
        }
        #expect(v.source == Self.peer)
    }

    @Test("A multi-homed peer: the SDP's port on the host its SIP comes from may become the source; another port there may not")
    func theSIPPeersHost() {
        let declared = try! SocketAddress(host: "192.0.2.2", port: 5000)
        var configuration = RTPSourceValidator.Configuration()
        configuration.expectedSource = declared
        configuration.alternateSource = Self.peer  // 127.0.0.1:5000: where the INVITE came from, the SDP's port
        var v = RTPSourceValidator(configuration: configuration)
        #expect(Self.validate(&v, seq: 1, ssrc: 66, from: Self.otherPort, atMicroseconds: 0) == .drop(.foreignSource))
        #expect(Self.validate(&v, seq: 1, ssrc: 7, from: Self.peer, atMicroseconds: 10_000) == .drop(.probation))
        #expect(Self.accepted(Self.validate(&v, seq: 2, ssrc: 7, from: Self.peer, atMicroseconds: 30_000)))
        #expect(v.source == Self.peer)
    }

    @Test("With latching (any source after the dialog is established), the lock still waits for it, then follows the usual rules")
    func latchingAfterTheDialog() {
        var v = Self.expecting(Self.peer)
        #expect(Self.validate(&v, seq: 1, ssrc: 9, from: Self.elsewhere, atMicroseconds: 0) == .drop(.foreignSource))
        #expect(Self.validate(&v, seq: 2, ssrc: 9, from: Self.elsewhere, atMicroseconds: 20_000) == .drop(.foreignSource))
        v.acceptAnySource()
        #expect(Self.validate(&v, seq: 3, ssrc: 9, from: Self.elsewhere, atMicroseconds: 40_000) == .drop(.probation))
        #expect(Self.accepted(Self.validate(&v, seq: 4, ssrc: 9, from: Self.elsewhere, atMicroseconds: 60_000)))
        #expect(v.source == Self.elsewhere)
    }

    /// A real source sending every 20 ms while `floodPerPacket` new SSRCs (from other addresses)
    /// arrive just before each of its packets; returns the packets of the real source that passed
    /// (of 500), and how many of its first ones were lost to probation.
    static func underFlood(_ floodPerPacket: Int, expected: SocketAddress?) -> (heard: Int, beforeLock: Int) {
        var v = expected.map(expecting) ?? RTPSourceValidator()
        var heard = 0, beforeLock = 0
        var flood: UInt32 = 100_000
        for k in 0..<500 {
            let t = UInt64(k) * 20_000
            for j in 0..<floodPerPacket {
                flood += 1
                let from = expected ?? (try! SocketAddress(host: "127.0.0.3", port: UInt16(10_000 + (Int(flood) % 50_000))))
                _ = validate(&v, seq: UInt16(truncatingIfNeeded: flood), ssrc: flood, from: from, atMicroseconds: t + UInt64(j))
            }
            if accepted(validate(&v, seq: UInt16(k), ssrc: 1, from: peer, atMicroseconds: t + 500)) {
                heard += 1
            } else if v.ssrc != 1 {
                beforeLock += 1
            }
        }
        return (heard, beforeLock)
    }

    @Test("A flood of new SSRCs cannot keep the real source in probation", arguments: [4, 50])
    func candidateFlood(floodPerPacket: Int) {
        // From other addresses once any source may lock (latching), and spoofing the declared
        // address itself (strict): the real source locks within a few packets, then every packet passes.
        for expected in [nil, Self.peer] {
            let (heard, beforeLock) = Self.underFlood(floodPerPacket, expected: expected)
            print("RTP candidate flood: \(floodPerPacket) new SSRCs per 20 ms\(expected == nil ? "" : " from the declared address"): "
                  + "locked after \(beforeLock) packets, \(heard) of 500 heard")
            #expect(beforeLock <= (floodPerPacket <= 4 ? 4 : 12))
            #expect(heard == 500 - beforeLock)
        }
    }

    @Test("Our own SSRC never becomes the peer's source (RFC 3550 section 8.2)")
    func ownSSRC() {
        var v = RTPSourceValidator()
        v.localSSRC = 77
        for k in 0..<10 {
            #expect(Self.validate(&v, seq: UInt16(k), ssrc: 77, from: Self.peer, atMicroseconds: UInt64(k) * 20_000) == .drop(.ssrcCollision))
        }
        #expect(v.source == nil && v.dropped(.ssrcCollision) == 10)
        // After the lock, a stranger with our SSRC from the locked address is a collision too.
        _ = Self.validate(&v, seq: 1, ssrc: 5, from: Self.peer, atMicroseconds: 300_000)
        #expect(Self.accepted(Self.validate(&v, seq: 2, ssrc: 5, from: Self.peer, atMicroseconds: 320_000)))
        #expect(Self.validate(&v, seq: 3, ssrc: 77, from: Self.peer, atMicroseconds: 340_000) == .drop(.ssrcCollision))
    }

    @Test("With a declared address, RTCP is accepted from the source's port, the next one or the declared RTCP address only")
    func strictRTCP() {
        var v = Self.expecting(Self.peer)
        _ = Self.validate(&v, seq: 1, ssrc: 5, from: Self.peer, atMicroseconds: 0)
        _ = Self.validate(&v, seq: 2, ssrc: 5, from: Self.peer, atMicroseconds: 20_000)
        let declared = Self.peer.with(port: 6100)
        #expect(v.acceptsRTCP(from: Self.peer, senderSSRC: 5, peerRTCP: declared))
        #expect(v.acceptsRTCP(from: Self.peer.with(port: 5001), senderSSRC: 5, peerRTCP: declared))
        #expect(v.acceptsRTCP(from: declared, senderSSRC: 5, peerRTCP: declared))
        #expect(!v.acceptsRTCP(from: Self.peer.with(port: 5003), senderSSRC: 5, peerRTCP: declared))
        #expect(!v.acceptsRTCP(from: Self.peer.with(port: 5001), senderSSRC: 6, peerRTCP: declared))
        // A bare endpoint (no declared address) accepts its host, as before.
        var bare = RTPSourceValidator()
        _ = Self.validate(&bare, seq: 1, ssrc: 5, from: Self.peer, atMicroseconds: 0)
        _ = Self.validate(&bare, seq: 2, ssrc: 5, from: Self.peer, atMicroseconds: 20_000)
        #expect(bare.acceptsRTCP(from: Self.peer.with(port: 5003), senderSSRC: 5))
    }

    @Test("DLSR saturates instead of trapping after 78 hours without a sender report")
    func delaySinceLastReportSaturates() {
        #expect(NetworkLoop.units65536(since: 0, now: 1_000_000_000) == 65536)
        #expect(NetworkLoop.units65536(since: 500_000_000, now: 2_000_000_000) == 98304)
        let hours79: UInt64 = 79 * 3600 * 1_000_000_000
        #expect(NetworkLoop.units65536(since: 0, now: hours79) == UInt32.max)
        #expect(NetworkLoop.units65536(since: 10, now: 5) == 0)
    }
}
