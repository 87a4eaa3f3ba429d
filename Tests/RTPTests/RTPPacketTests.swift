import Platform
import RTP
import Testing

@Suite("RTP packets (RFC 3550 section 5.1)")
struct RTPPacketTests {
    /// A packet written by hand: V=2, P=1, X=1, CC=2, M=1, PT=96, seq 0xABCD, ts 0x01020304,
    /// SSRC 0xDEADBEEF, two CSRCs, a one-word extension, 3 payload bytes, 4 bytes of padding.
    static let handWritten: [UInt8] = [
        0b1011_0010, 0x80 | 96, 0xAB, 0xCD, 0x01, 0x02, 0x03, 0x04, 0xDE, 0xAD, 0xBE, 0xEF,
        0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x02,  // CSRCs
        0xBE, 0xDE, 0x00, 0x01, 0x11, 0x22, 0x33, 0x44,  // extension: profile, 1 word, data
        0xA1, 0xA2, 0xA3,  // payload
        0x00, 0x00, 0x00, 0x04,  // padding, count 4
    ]

    @Test("A hand-written packet parses field by field")
    func parseHandWritten() throws {
        let p = try RTPPacket.parse(Self.handWritten)
        #expect(p.header.marker)
        #expect(p.header.payloadType == 96)
        #expect(p.header.sequenceNumber == 0xABCD)
        #expect(p.header.timestamp == 0x0102_0304)
        #expect(p.header.ssrc == 0xDEAD_BEEF)
        #expect(Array(p.header.csrcs) == [1, 2])
        #expect(p.header.extensionProfile == 0xBEDE)
        #expect(p.extensionData == 24..<28)
        #expect(p.payload == 28..<31)
        #expect(p.paddingCount == 4)
    }

    @Test("Writing the parsed header back gives the same bytes")
    func writeHandWritten() throws {
        let p = try RTPPacket.parse(Self.handWritten)
        let bytes = try p.header.packet(payload: [0xA1, 0xA2, 0xA3], extensionData: [0x11, 0x22, 0x33, 0x44], padding: 4)
        #expect(bytes == Self.handWritten)
    }

    @Test("Every truncation of a valid packet is rejected, never misread")
    func truncations() throws {
        for length in 0..<(Self.handWritten.count) {
            #expect(throws: RTPParseError.self) { try RTPPacket.parse(Array(Self.handWritten.prefix(length))) }
        }
    }

    @Test("Bad version, bad padding and RTCP payload types are rejected")
    func rejections() {
        var v1 = Self.handWritten
        v1[0] = (v1[0] & 0x3F) | 0x40
        #expect(throws: RTPParseError.badVersion) { try RTPPacket.parse(v1) }
        var zeroPad = Self.handWritten
        zeroPad[zeroPad.count - 1] = 0
        #expect(throws: RTPParseError.badPadding) { try RTPPacket.parse(zeroPad) }
        var longPad = Self.handWritten
        longPad[longPad.count - 1] = 200
        #expect(throws: RTPParseError.badPadding) { try RTPPacket.parse(longPad) }
        // M=1 with PT 72 is 200, an SR: RFC 5761 keeps those apart.
        var rtcp = [UInt8](repeating: 0, count: 12)
        rtcp[0] = 0x80
        rtcp[1] = 200
        #expect(throws: RTPParseError.rtcpPayloadType) { try RTPPacket.parse(rtcp) }
    }

    @Test("A minimal header round-trips; fields at their limits", arguments: [
        RTPHeader(marker: false, payloadType: 0, sequenceNumber: 0, timestamp: 0, ssrc: 0),
        RTPHeader(marker: true, payloadType: 127, sequenceNumber: .max, timestamp: .max, ssrc: .max,
                  csrcs: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15]),
        RTPHeader(payloadType: 96, sequenceNumber: 1, timestamp: 2, ssrc: 3, extensionProfile: 0x1000),
    ])
    func roundTrip(header: RTPHeader) throws {
        let bytes = try header.packet(payload: [1, 2, 3, 4, 5])
        let parsed = try RTPPacket.parse(bytes)
        #expect(parsed.header == header)
        #expect(Array(bytes[parsed.payload]) == [1, 2, 3, 4, 5])
    }

    @Test("Writing refuses what cannot be encoded")
    func writeErrors() {
        let header = RTPHeader(payloadType: 96, sequenceNumber: 1, timestamp: 2, ssrc: 3, extensionProfile: 1)
        #expect(throws: RTPWriteError.badExtensionLength) { try header.packet(payload: [], extensionData: [1, 2, 3]) }
        #expect(throws: RTPWriteError.badPadding) { try header.packet(payload: [], padding: 256) }
        var bad = header
        bad.payloadType = 128
        #expect(throws: RTPWriteError.badPayloadType) { try bad.packet(payload: []) }
    }

    @Test("The packetizer wraps sequence number and timestamp, and marks talk spurts")
    func packetizerWraps() throws {
        var packetizer = RTPPacketizer(payloadType: 96, ssrc: 7, sequenceNumber: 65534, timestamp: UInt32.max - 959)
        var buffer = [UInt8](repeating: 0, count: 64)
        var headers: [RTPHeader] = []
        for i in 0..<4 {
            if i == 2 { packetizer.skip(duration: 960) }  // a DTX frame
            let n = try buffer.withUnsafeMutableBytes { out in
                try [UInt8(0x08)].withUnsafeBytes { try packetizer.write(payload: $0, duration: 960, into: out) }
            }
            headers.append(try RTPPacket.parse(Array(buffer[0..<n])).header)
        }
        #expect(headers.map(\.sequenceNumber) == [65534, 65535, 0, 1])
        #expect(headers.map(\.timestamp) == [UInt32.max - 959, 0, 1920, 2880])
        #expect(headers.map(\.marker) == [true, false, true, false])
        #expect(headers.allSatisfy { $0.ssrc == 7 })
    }

    @Test("Random initial values differ between streams")
    func randomInitialValues() {
        let streams = (0..<8).map { _ in RTPPacketizer(payloadType: 96) }
        #expect(Set(streams.map(\.ssrc)).count > 1)
        #expect(Set(streams.map(\.timestamp)).count > 1)
        #expect(streams.allSatisfy { $0.ssrc != 0 })
    }
}
