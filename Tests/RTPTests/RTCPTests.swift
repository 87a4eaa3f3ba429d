import Platform
import RTP
import Testing

@Suite("RTCP packets and timing (RFC 3550 sections 6 and A.7)")
struct RTCPTests {
    static let block = RTCPReportBlock(ssrc: 0x0102_0304, fractionLost: 51, cumulativeLost: -3,
                                       extendedHighestSequence: 0x0001_0005, jitter: 77,
                                       lastSenderReport: 0xB705_2000, delaySinceLastSenderReport: 0x0005_4000)

    @Test("An RR written by hand parses, and writes back to the same bytes")
    func handWrittenReceiverReport() throws {
        let bytes: [UInt8] = [
            0x81, 201, 0x00, 0x07, 0xAA, 0xBB, 0xCC, 0xDD,  // RR, 1 block, 8 words, sender SSRC
            0x01, 0x02, 0x03, 0x04, 51, 0xFF, 0xFF, 0xFD,  // block SSRC, fraction 51, cumulative -3
            0x00, 0x01, 0x00, 0x05, 0x00, 0x00, 0x00, 77,  // extended highest sequence, jitter
            0xB7, 0x05, 0x20, 0x00, 0x00, 0x05, 0x40, 0x00,  // LSR, DLSR
        ]
        let packets = try RTCPCompound.parse(bytes)
        #expect(packets == [.receiverReport(ssrc: 0xAABB_CCDD, reports: [Self.block])])
        #expect(try RTCPCompound.serialize(packets) == bytes)
    }

    @Test("A compound SR + SDES + BYE round-trips")
    func compoundRoundTrip() throws {
        let info = RTCPSenderInfo(ntpTimestamp: NTPTimestamp(seconds: 3_900_000_000, fraction: 0x1234_5678),
                                  rtpTimestamp: 960_000, packetCount: 500, octetCount: 30_000)
        let packets: [RTCPPacket] = [
            .senderReport(ssrc: 42, sender: info, reports: [Self.block]),
            .sourceDescription([RTCPSourceDescriptionChunk(ssrc: 42, items: [.init(type: 1, text: "user@host"),
                                                                              .init(type: 6, text: "CallAudio")]),
                                RTCPSourceDescriptionChunk(ssrc: 43, items: [.init(type: 1, text: "a")])]),
            .goodbye(sources: [42], reason: "done"),
        ]
        let bytes = try RTCPCompound.serialize(packets)
        #expect(bytes.count % 4 == 0)
        #expect(try RTCPCompound.parse(bytes) == packets)
        if case let .sourceDescription(chunks) = packets[1] { #expect(chunks[0].cname == "user@host") }
    }

    @Test("Validation of appendix A.2")
    func validation() throws {
        let rr = try RTCPCompound.serialize([.receiverReport(ssrc: 1, reports: [])])
        let sdes = try RTCPCompound.serialize([.sourceDescription([.init(ssrc: 1, items: [.init(type: 1, text: "x")])])])
        #expect(throws: RTCPParseError.notCompound) { try RTCPCompound.parse(sdes) }  // must start with SR or RR
        var badVersion = rr + sdes
        badVersion[8] = (badVersion[8] & 0x3F) | 0x40
        #expect(throws: RTCPParseError.badVersion) { try RTCPCompound.parse(badVersion) }
        var padded = rr + sdes
        padded[0] |= 0x20  // padding on the first of two packets
        #expect(throws: RTCPParseError.notCompound) { try RTCPCompound.parse(padded) }
        var paddedMiddle = rr + sdes + rr
        paddedMiddle[8] |= 0x20
        #expect(throws: RTCPParseError.badPadding) { try RTCPCompound.parse(paddedMiddle) }
        #expect(throws: RTCPParseError.badLength) { try RTCPCompound.parse(rr + [0]) }
        var long = rr + sdes
        long[3] = 9  // the RR claims more words than the datagram has
        #expect(throws: RTCPParseError.truncated) { try RTCPCompound.parse(long) }
        var blocks = rr
        blocks[0] |= 1  // one report block announced, none present
        #expect(throws: RTCPParseError.malformed) { try RTCPCompound.parse(blocks) }
        // Unknown types inside a compound packet are skipped.
        let app = try RTCPCompound.serialize([.receiverReport(ssrc: 1, reports: []),
                                              .other(packetType: 204, count: 0, bodyLength: 8)])
        #expect(try RTCPCompound.parse(app).count == 2)
    }

    @Test("rtcp-mux demultiplexing by the second byte (RFC 5761)")
    func muxDemux() throws {
        let rr = try RTCPCompound.serialize([.receiverReport(ssrc: 1, reports: [])])
        let rtp = try RTPHeader(marker: true, payloadType: 96, sequenceNumber: 1, timestamp: 1, ssrc: 1).packet(payload: [8])
        #expect(rr.withUnsafeBytes { RTCPCompound.isRTCP($0) })
        #expect(!rtp.withUnsafeBytes { RTCPCompound.isRTCP($0) })
    }

    @Test("Interval of A.7, hand-computed")
    func interval() {
        func t(_ members: Int, _ senders: Int, _ weSent: Bool, _ size: Double, _ initial: Bool, _ random: Double) -> Double {
            RTCPInterval.seconds(members: members, senders: senders, rtcpBandwidth: 250, weSent: weSent,
                                 averagePacketSize: size, initial: initial, random: random)
        }
        // Two senders: 100 * 2 / 250 = 0.8 s, below the minimum: 2.5 s initially, 5 s after.
        #expect(abs(t(2, 2, true, 100, true, 0.5) - 2.0520734149784943) < 1e-12)
        #expect(abs(t(2, 2, true, 100, false, 0.5) - 4.1041468299569885) < 1e-12)
        // 1000 members, 10 senders: receivers share 75 %: 200 * 990 / 187.5 = 1056 s, times 0.5 / 1.21828.
        #expect(abs(t(1000, 10, false, 200, false, 0) - 433.39790524345796) < 1e-9)
        // A sender among them shares 25 % with 9 others: 200 * 10 / 62.5 = 32 s, times 1.5 / 1.21828.
        #expect(abs(t(1000, 10, true, 200, false, 1) - 39.39980956758709) < 1e-9)
    }

    @Test("The scheduler reconsiders the timer (6.3.6) and averages packet sizes (6.3.3)")
    func scheduler() {
        var s = RTCPScheduler(now: 0, sessionBandwidth: 40_000, firstPacketSize: 100, seed: 7)
        // First report within [0.5, 1.5] * 2.5 s / 1.21828.
        #expect(s.nextDue >= 1.02 && s.nextDue <= 3.08)
        #expect(s.initial)
        let due = s.expired(now: 10)
        #expect(due)
        s.sent(now: 3, size: 116)
        #expect(!s.initial)
        #expect(abs(s.averagePacketSize - (116.0 / 16 + 100 * 15.0 / 16)) < 1e-12)
        #expect(s.nextDue >= 3 + 2.05 && s.nextDue <= 3 + 6.16)
        // Too early: not sent, rescheduled at lastSent + T.
        let early = s.expired(now: 3.5)
        #expect(!early)
        #expect(s.nextDue > 3.5)
    }
}
