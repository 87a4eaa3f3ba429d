import SRTP
import Testing

@Suite("SRTP round trips")
struct RoundTripTests {
    static let ssrc: UInt32 = 0x1234_5678

    @Test("200 RTP packets protect and unprotect to the same bytes", arguments: SRTPProfile.allCases)
    func rtp(_ profile: SRTPProfile) throws {
        var pair = try Pair(profile)
        for sequence in UInt16(1)...200 {
            let plain = Packets.rtp(sequence: sequence, ssrc: Self.ssrc)
            let protected = try pair.outbound.protectRTP(plain)
            #expect(protected.count == plain.count + profile.rtpTrailerLength)
            #expect(protected[0..<12] == plain[0..<12], "the RTP header stays in the clear")
            #expect(protected[12..<plain.count] != plain[12...], "the payload is encrypted")
            #expect(try pair.inbound.unprotectRTP(protected) == plain)
        }
        #expect(pair.inbound.streamCount == 1)
    }

    @Test("RTCP sender reports protect and unprotect to the same bytes", arguments: SRTPProfile.allCases)
    func rtcp(_ profile: SRTPProfile) throws {
        var pair = try Pair(profile)
        for index in UInt32(1)...50 {
            let plain = Packets.rtcp(index: index, ssrc: Self.ssrc)
            let protected = try pair.outbound.protectRTCP(plain)
            #expect(protected.count == plain.count + profile.rtcpTrailerLength)
            #expect(protected[0..<8] == plain[0..<8], "the first header words stay in the clear")
            #expect(protected[8..<plain.count] != plain[8...], "the report is encrypted")
            // The E flag leads the SRTCP index, which follows the tag for GCM (RFC 7714 section 9.2).
            let index = plain.count + (profile == .aeadAES128GCM ? 16 : 0)
            #expect(protected[index] & 0x80 != 0, "the E flag is set")
            #expect(try pair.inbound.unprotectRTCP(protected) == plain)
        }
    }

    @Test("Sequence numbers wrapping past 65535 keep unprotecting (libsrtp2 estimates the rollover counter)",
          arguments: SRTPProfile.allCases)
    func rollover(_ profile: SRTPProfile) throws {
        var pair = try Pair(profile)
        for k in 0..<300 {
            let plain = Packets.rtp(sequence: UInt16(truncatingIfNeeded: 65500 + k), ssrc: Self.ssrc)
            let protected = try pair.outbound.protectRTP(plain)
            #expect(try pair.inbound.unprotectRTP(protected) == plain, "packet \(k)")
        }
    }

    @Test("Packets out of order within the window are accepted")
    func outOfOrder() throws {
        var pair = try Pair(.aesCM128HMACSHA1_80)
        let plain = (UInt16(1)...100).map { Packets.rtp(sequence: $0, ssrc: Self.ssrc) }
        let protected = try plain.map { packet throws(SRTPError) in try pair.outbound.protectRTP(packet) }
        // Neighbours swapped: 2, 1, 4, 3, ...
        for k in stride(from: 0, to: 100, by: 2) {
            #expect(try pair.inbound.unprotectRTP(protected[k + 1]) == plain[k + 1])
            #expect(try pair.inbound.unprotectRTP(protected[k]) == plain[k])
        }
        // One late by far more, still inside the 1024-packet window.
        let late = try pair.outbound.protectRTP(Packets.rtp(sequence: 101, ssrc: Self.ssrc))
        for sequence in UInt16(102)...900 {
            _ = try pair.inbound.unprotectRTP(try pair.outbound.protectRTP(Packets.rtp(sequence: sequence, ssrc: Self.ssrc)))
        }
        #expect(try pair.inbound.unprotectRTP(late) == Packets.rtp(sequence: 101, ssrc: Self.ssrc))
    }

    @Test("An outbound context protects a new SSRC through its template", arguments: SRTPProfile.allCases)
    func ssrcChange(_ profile: SRTPProfile) throws {
        var pair = try Pair(profile)
        for (ssrc, sequence) in [(Self.ssrc, UInt16(10)), (0xCAFE_F00D, 500), (Self.ssrc, 11), (0xCAFE_F00D, 501)] {
            let plain = Packets.rtp(sequence: sequence, ssrc: ssrc)
            #expect(try pair.inbound.unprotectRTP(try pair.outbound.protectRTP(plain)) == plain)
            let report = Packets.rtcp(index: UInt32(sequence), ssrc: ssrc)
            #expect(try pair.inbound.unprotectRTCP(try pair.outbound.protectRTCP(report)) == report)
        }
        #expect(pair.inbound.streamCount == 2)
    }

    @Test("An outbound context without an SSRC makes its stream at the first packet")
    func noInitialSSRC() throws {
        var pair = try Pair(.aeadAES128GCM, ssrc: nil)
        let plain = Packets.rtp(sequence: 7, ssrc: 42)
        #expect(try pair.inbound.unprotectRTP(try pair.outbound.protectRTP(plain)) == plain)
    }

    @Test("Contexts are Sendable, so they can move to the I/O thread")
    func sendable() {
        func requireSendable<T: Sendable & ~Copyable>(_: T.Type) -> Bool { true }
        #expect(requireSendable(SRTPContext.self) && requireSendable(SRTPMasterKey.self) && requireSendable(SRTPError.self))
    }
}
