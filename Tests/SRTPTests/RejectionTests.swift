import SRTP
import Testing

@Suite("SRTP rejections")
struct RejectionTests {
    static let ssrc: UInt32 = 0x0BAD_CAFE

    @Test("A flipped bit in the header fields, the payload or the tag fails authentication", arguments: SRTPProfile.allCases)
    func flippedBits(_ profile: SRTPProfile) throws {
        var pair = try Pair(profile)
        // A stream exists first, so the replay check runs too. The packets' sequence numbers (1090,
        // 1101) differ in more than one bit, so no flip turns one into the other, a replay.
        _ = try pair.inbound.unprotectRTP(try pair.outbound.protectRTP(Packets.rtp(sequence: 1090, ssrc: Self.ssrc, payloadLength: 40)))
        let plain = Packets.rtp(sequence: 1101, ssrc: Self.ssrc, payloadLength: 40)
        let protected = try pair.outbound.protectRTP(plain)
        // Byte 0 (version, padding, extension, CSRC count) is left out: libsrtp2 checks its form
        // first. The sequence number's high byte is checked apart: a flip there can put the packet
        // behind the window, which the replay check refuses before the tag is looked at.
        for byte in 1..<protected.count {
            for bit in 0..<8 {
                var forged = protected
                forged[byte] ^= 1 << bit
                let error = failure { try pair.inbound.unprotectRTP(forged) }
                if byte == 2 {
                    #expect(error == .authenticationFailed || error == .tooOld, "byte \(byte) bit \(bit): \(String(describing: error))")
                } else {
                    #expect(error == .authenticationFailed, "byte \(byte) bit \(bit)")
                }
            }
        }
        #expect(try pair.inbound.unprotectRTP(protected) == plain, "the untouched packet still passes")
    }

    @Test("A flipped bit in an SRTCP packet fails authentication", arguments: SRTPProfile.allCases)
    func flippedRTCPBits(_ profile: SRTPProfile) throws {
        var pair = try Pair(profile)
        let plain = Packets.rtcp(index: 3, ssrc: Self.ssrc)
        let protected = try pair.outbound.protectRTCP(plain)
        for byte in 1..<protected.count {
            var forged = protected
            forged[byte] ^= 0x10
            #expect(failure { try pair.inbound.unprotectRTCP(forged) } == .authenticationFailed, "byte \(byte)")
        }
        #expect(try pair.inbound.unprotectRTCP(protected) == plain)
    }

    @Test("The same packet twice is a replay", arguments: SRTPProfile.allCases)
    func replayed(_ profile: SRTPProfile) throws {
        var pair = try Pair(profile)
        let protected = try pair.outbound.protectRTP(Packets.rtp(sequence: 9, ssrc: Self.ssrc))
        _ = try pair.inbound.unprotectRTP(protected)
        let error = failure { try pair.inbound.unprotectRTP(protected) }
        #expect(error == .replayed)
        #expect(error?.isReplay == true)

        let report = try pair.outbound.protectRTCP(Packets.rtcp(index: 1, ssrc: Self.ssrc))
        _ = try pair.inbound.unprotectRTCP(report)
        #expect(failure { try pair.inbound.unprotectRTCP(report) } == .replayed)
    }

    @Test("Protecting one sequence number twice is refused: two payloads would share a keystream")
    func protectedTwice() throws {
        var pair = try Pair(.aesCM128HMACSHA1_80)
        _ = try pair.outbound.protectRTP(Packets.rtp(sequence: 3, ssrc: Self.ssrc))
        #expect(failure { try pair.outbound.protectRTP(Packets.rtp(sequence: 3, ssrc: Self.ssrc)) } == .replayed)
        _ = try pair.outbound.protectRTP(Packets.rtp(sequence: 4, ssrc: Self.ssrc))
    }

    @Test("A packet behind the replay window is too old")
    func tooOld() throws {
        var pair = try Pair(.aesCM128HMACSHA1_80, replayWindow: 64)
        let protected = try (UInt16(1)...100).map { sequence throws(SRTPError) in
            try pair.outbound.protectRTP(Packets.rtp(sequence: sequence, ssrc: Self.ssrc))
        }
        for packet in protected.dropFirst() { _ = try pair.inbound.unprotectRTP(packet) }
        let error = failure { try pair.inbound.unprotectRTP(protected[0]) }  // never received, 99 behind
        #expect(error == .tooOld)
        #expect(error?.isReplay == true)
        let next = Packets.rtp(sequence: 101, ssrc: Self.ssrc)
        #expect(try pair.inbound.unprotectRTP(try pair.outbound.protectRTP(next)) == next)
    }

    @Test("A context with another key fails authentication", arguments: SRTPProfile.allCases)
    func wrongKey(_ profile: SRTPProfile) throws {
        var pair = try Pair(profile)
        var stranger = try SRTPContext(key: .random(profile: profile), direction: .inbound)
        let protected = try pair.outbound.protectRTP(Packets.rtp(sequence: 5, ssrc: Self.ssrc))
        let error = failure { try stranger.unprotectRTP(protected) }
        #expect(error == .authenticationFailed)
        #expect(error?.isReplay == false)
        let report = try pair.outbound.protectRTCP(Packets.rtcp(index: 5, ssrc: Self.ssrc))
        #expect(failure { try stranger.unprotectRTCP(report) } == .authenticationFailed)
        #expect(stranger.streamCount == 0)
    }

    @Test("Lengths and buffers are checked before libsrtp2 sees them")
    func badParameters() throws {
        var pair = try Pair(.aesCM128HMACSHA1_80)
        let plain = Packets.rtp(sequence: 1, ssrc: Self.ssrc)
        // A buffer one byte short of the trailer: refused, and left as it was.
        let tight = Scratch(plain, room: SRTPProfile.aesCM128HMACSHA1_80.rtpTrailerLength - 1)
        #expect(failure { try pair.outbound.protectRTP(tight.bytes, length: plain.count) } == .badParameter)
        #expect(tight.prefix(tight.bytes.count) == plain + [UInt8](repeating: 0, count: 9))
        let exact = Scratch(plain, room: SRTPProfile.aesCM128HMACSHA1_80.rtpTrailerLength)
        #expect(try pair.outbound.protectRTP(exact.bytes, length: plain.count) == exact.bytes.count)
        // Shorter than a header; longer than the buffer; negative.
        #expect(failure { try pair.outbound.protectRTP(Array(plain[0..<11])) } == .badParameter)
        #expect(failure { try pair.outbound.protectRTCP(Array(Packets.rtcp(index: 1, ssrc: 1)[0..<7])) } == .badParameter)
        #expect(failure { try pair.inbound.unprotectRTP(Array(plain[0..<11])) } == .badParameter)
        #expect(failure { try pair.inbound.unprotectRTCP([0x80, 200, 0, 1, 0, 0, 0]) } == .badParameter)
        let scratch = Scratch(plain)
        #expect(failure { try pair.inbound.unprotectRTP(scratch.bytes, length: scratch.bytes.count + 1) } == .badParameter)
        #expect(failure { try pair.outbound.protectRTP(scratch.bytes, length: -1) } == .badParameter)
        // Not 4-byte aligned.
        let shifted = UnsafeMutableRawBufferPointer(rebasing: scratch.bytes[1...])
        #expect(failure { try pair.outbound.protectRTP(shifted, length: plain.count) } == .badParameter)
        // The other direction's calls.
        #expect(failure { try pair.inbound.protectRTP(plain) } == .badParameter)
        #expect(failure { try pair.inbound.protectRTCP(Packets.rtcp(index: 1, ssrc: 1)) } == .badParameter)
        let sent = try pair.outbound.protectRTP(Packets.rtp(sequence: 2, ssrc: Self.ssrc))
        #expect(failure { try pair.outbound.unprotectRTP(sent) } == .badParameter)
        let report = try pair.outbound.protectRTCP(Packets.rtcp(index: 1, ssrc: Self.ssrc))
        #expect(failure { try pair.outbound.unprotectRTCP(report) } == .badParameter)
    }

    @Test("Contexts refuse a replay window or stream cap out of range, and an inbound SSRC")
    func badConfiguration() {
        let key = SRTPMasterKey.random(profile: .aesCM128HMACSHA1_80)
        #expect(failure { try SRTPContext(key: key, direction: .inbound, replayWindow: 63) } == .badParameter)
        #expect(failure { try SRTPContext(key: key, direction: .inbound, replayWindow: 0x8000) } == .badParameter)
        #expect(failure { try SRTPContext(key: key, direction: .inbound, maximumStreams: 0) } == .badParameter)
        #expect(failure { try SRTPContext(key: key, direction: .inbound, maximumStreams: 4097) } == .badParameter)
        #expect(failure { try SRTPContext(key: key, direction: .inbound, ssrc: 1) } == .badParameter)
        #expect(failure { try SRTPContext(key: key, direction: .inbound, replayWindow: 64) } == nil)
        #expect(failure { try SRTPContext(key: key, direction: .outbound, ssrc: 1, replayWindow: 0x7FFF) } == nil)
    }
}
