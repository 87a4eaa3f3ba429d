import Platform
import Foundation
import Opus
import RTP
import Testing
import TestSupport
import WAV

@Suite("Opus RTP payload (RFC 7587, RFC 6716 framing)")
struct OpusPayloadTests {
    func info(_ bytes: [UInt8]) -> OpusPayload.Info? { bytes.withUnsafeBytes { OpusPayload.parse($0) } }
    func hasFEC(_ bytes: [UInt8]) -> Bool { bytes.withUnsafeBytes { OpusPayload.hasFEC($0) } }

    @Test("Durations of real packets match libopus at every frame size and rate", arguments: [10, 20, 40, 60])
    func durations(ms: Int) throws {
        for (rate, application) in [(16000, OpusApplication.voip), (48000, .audio), (48000, .restrictedLowDelay)]
        where !(application == .restrictedLowDelay && ms > 20) {
            let encoder = try OpusEncoder(sampleRate: rate, channels: 1, application: application)
            let frames = rate * ms / 1000
            let pcm = (0..<frames).map { Int16(2000 * sin(Double($0) * 0.05)) }
            let packet = try encoder.encode(pcm)
            let parsed = try #require(info(packet))
            #expect(parsed.duration == ms * 48)
            #expect(parsed.duration == (try OpusPacket.frameCount(packet, sampleRate: 48000)))
        }
    }

    @Test("Framing codes 0 to 3 and the malformed cases of RFC 6716 section 3.4")
    func framing() {
        // TOC config 1 (SILK NB 20 ms).
        #expect(info([0x08, 1, 2, 3])?.frameCount == 1)
        #expect(info([0x09, 1, 2, 3, 4])?.frameCount == 2)  // code 1, two frames of 2 bytes
        #expect(info([0x09, 1, 2, 3]) == nil)  // code 1 with an odd length (R3)
        #expect(info([0x0A, 2, 9, 9, 8])?.firstFrame == 2..<4)  // code 2, first frame 2 bytes
        #expect(info([0x0A, 5, 9]) == nil)  // code 2, first frame longer than the packet (R4)
        #expect(info([0x0B, 0x03, 1, 2, 3])?.duration == 3 * 960)  // code 3, CBR, 3 frames
        #expect(info([0x0B, 0x00]) == nil)  // code 3 with no frames (R5)
        #expect(info([0x0B, 0x07]) == nil)  // code 3, 7 x 20 ms > 120 ms (R5)
        #expect(info([0x0B, 0x02, 1, 2, 3]) == nil)  // code 3 CBR, 3 bytes do not split in 2 (R6)
        #expect(info([0x0B, 0x82, 1, 7, 8]) != nil)  // code 3 VBR, first frame 1 byte
        #expect(info([0x0B, 0x82, 5, 7]) == nil)  // code 3 VBR, first frame too long (R7)
        #expect(info([0x0B, 0x41, 2, 9]) == nil)  // code 3 with more padding than bytes
        #expect(info([]) == nil)
        #expect(info([0xF8])?.mode == .celt)
        #expect(info([0x70])?.mode == .hybrid)
    }

    @Test("The LBRR flag is found when the encoder adds FEC, and not otherwise")
    func lbrrFlag() throws {
        let speech = try Fixtures.speech(Fixtures.englishFemale).int16Samples
        func packets(fec: Bool, loss: Int) throws -> [[UInt8]] {
            let encoder = try OpusEncoder(sampleRate: 16000, channels: 1, application: .voip)
            try encoder.setBitrate(24000)
            try encoder.setInbandFEC(fec)
            try encoder.setExpectedPacketLoss(percent: loss)
            var out: [[UInt8]] = []
            for k in 0..<250 { out.append(try encoder.encode(Array(speech[(k * 320)..<((k + 1) * 320)]))) }
            return out
        }
        let withFEC = try packets(fec: true, loss: 10)
        let withoutFEC = try packets(fec: false, loss: 10)
        // Most packets of speech carry FEC (SILK adds none after silent frames).
        #expect(withFEC.filter(hasFEC).count >= 150)
        #expect(withoutFEC.filter(hasFEC).isEmpty)
        #expect(!hasFEC([0xF8, 1, 2, 3]))  // CELT never carries LBRR
    }
}
