import SRTP
import Testing

@Suite("SRTP inbound stream cap")
struct StreamCapTests {
    static let ssrcs: [UInt32] = (1...9).map { 0x5000_0000 + $0 }

    @Test("Eight authenticated SSRCs are accepted; the ninth is refused before libsrtp2", arguments: SRTPProfile.allCases)
    func cap(_ profile: SRTPProfile) throws {
        var pair = try Pair(profile, ssrc: nil)
        for ssrc in Self.ssrcs.prefix(8) {
            let plain = Packets.rtp(sequence: 1, ssrc: ssrc)
            #expect(try pair.inbound.unprotectRTP(try pair.outbound.protectRTP(plain)) == plain)
        }
        #expect(pair.inbound.streamCount == 8)
        let ninth = try pair.outbound.protectRTP(Packets.rtp(sequence: 1, ssrc: Self.ssrcs[8]))
        #expect(failure { try pair.inbound.unprotectRTP(ninth) } == .tooManyStreams)
        let ninthReport = try pair.outbound.protectRTCP(Packets.rtcp(index: 1, ssrc: Self.ssrcs[8]))
        #expect(failure { try pair.inbound.unprotectRTCP(ninthReport) } == .tooManyStreams)
        #expect(pair.inbound.streamCount == 8)
        // The eight keep working, over RTP and RTCP.
        for ssrc in Self.ssrcs.prefix(8) {
            let plain = Packets.rtp(sequence: 2, ssrc: ssrc)
            #expect(try pair.inbound.unprotectRTP(try pair.outbound.protectRTP(plain)) == plain)
            let report = Packets.rtcp(index: 2, ssrc: ssrc)
            #expect(try pair.inbound.unprotectRTCP(try pair.outbound.protectRTCP(report)) == report)
        }
    }

    @Test("Forged packets from new SSRCs never count against the cap", arguments: SRTPProfile.allCases)
    func forgeriesDoNotCount(_ profile: SRTPProfile) throws {
        var pair = try Pair(profile, ssrc: nil, maximumStreams: 2)
        var forger = try SRTPContext(key: .random(profile: profile), direction: .outbound)
        for k in UInt32(0)..<50 {
            let forged = try forger.protectRTP(Packets.rtp(sequence: 1, ssrc: 0x6000_0000 + k))
            #expect(failure { try pair.inbound.unprotectRTP(forged) } == .authenticationFailed)
            let forgedReport = try forger.protectRTCP(Packets.rtcp(index: 1, ssrc: 0x7000_0000 + k))
            #expect(failure { try pair.inbound.unprotectRTCP(forgedReport) } == .authenticationFailed)
        }
        #expect(pair.inbound.streamCount == 0)
        // A packet from the first SSRC arrives over RTCP, the second's over RTP: both count, once.
        let report = Packets.rtcp(index: 1, ssrc: Self.ssrcs[0])
        #expect(try pair.inbound.unprotectRTCP(try pair.outbound.protectRTCP(report)) == report)
        for sequence in UInt16(1)...3 {
            for ssrc in Self.ssrcs.prefix(2) {
                let plain = Packets.rtp(sequence: sequence, ssrc: ssrc)
                #expect(try pair.inbound.unprotectRTP(try pair.outbound.protectRTP(plain)) == plain)
            }
        }
        #expect(pair.inbound.streamCount == 2)
        let third = try pair.outbound.protectRTP(Packets.rtp(sequence: 1, ssrc: Self.ssrcs[2]))
        #expect(failure { try pair.inbound.unprotectRTP(third) } == .tooManyStreams)
    }
}
