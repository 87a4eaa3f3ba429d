import AudioAnalysis
import Glibc
import Opus
@testable import RTP
import Testing
import TestSupport

/// Silence suppression with comfort noise for G.711 and G.722 (RFC 3389): what the suppressor
/// decides frame by frame, what the encoder sends for it, and what our own receiver plays.
@Suite("Silence suppression with comfort noise")
struct SilenceSuppressionTests {
    /// `frames` frames of 160 samples at `levelDBov` (a 300 Hz sine for speech, noise below it).
    static func frames(_ frames: Int, levelDBov: Double, tone: Bool) -> [Int16] {
        let amplitude = 32767 * pow(10, levelDBov / 20) * (tone ? 2.0.squareRoot() : 3.0.squareRoot())
        var state: UInt32 = 7
        return (0..<(frames * 160)).map { i in
            if tone { return Int16(amplitude * sin(2 * Double.pi * 300 * Double(i) / 8000)) }
            state = state &* 1_664_525 &+ 1_013_904_223
            return Int16(amplitude * (Double(state >> 8) / Double(1 << 24) * 2 - 1))
        }
    }

    static func decisions(_ samples: [Int16], _ suppressor: inout SilenceSuppressor) -> [SilenceSuppressor.Decision] {
        samples.withUnsafeBufferPointer { pcm in
            stride(from: 0, to: pcm.count, by: 160).map { suppressor.decide(UnsafeBufferPointer(rebasing: pcm[$0..<($0 + 160)])) }
        }
    }

    @Test("Speech goes out; a silence goes after the hangover as a descriptor, then one every half second or at a level step")
    func decisions() {
        var suppressor = SilenceSuppressor()
        #expect(Self.decisions(Self.frames(5, levelDBov: -20, tone: true), &suppressor).allSatisfy { $0 == .speech })
        let quiet = Self.decisions(Self.frames(60, levelDBov: -60, tone: false), &suppressor)
        #expect(quiet.prefix(SilenceSuppressor.hangoverFrames).allSatisfy { $0 == .speech }, "the ends of words are sent")
        let afterHangover = Array(quiet.dropFirst(SilenceSuppressor.hangoverFrames))
        #expect(afterHangover.first == .descriptor(level: 60))
        let descriptors = afterHangover.enumerated().filter { $0.element != .skip }.map(\.offset)
        #expect(descriptors == [0, 25])
        // The noise grows by 6 dB: a descriptor at once, with the new level.
        #expect(Self.decisions(Self.frames(2, levelDBov: -54, tone: false), &suppressor) == [.descriptor(level: 54), .skip])
        #expect(Self.decisions(Self.frames(1, levelDBov: -20, tone: true), &suppressor) == [.speech])
        #expect(SilenceSuppressor.levelDBov(UnsafeBufferPointer(start: nil, count: 0)) == 127)
    }

    @Test("A G.711 call with DTX sends descriptors for the silence, the next talk spurt with the marker, and our receiver plays the noise at its level throughout (descriptors that refresh it included)")
    func encoderAndReceiver() throws {
        var configuration = OpusCallConfiguration(sampleRate: 8000)
        configuration.dtx = true
        var encoder = try RTPAudioEncoder(configuration: configuration, codec: .pcmu, packetizer: RTPPacketizer(payloadType: 0, timestamp: 0))
        encoder.sendComfortNoise(payloadType: 13)
        let sendsNoise = encoder.sendsComfortNoise
        #expect(sendsNoise)
        var buffer = try JitterBuffer(configuration: JitterBufferConfiguration(sampleRate: 8000), codec: .pcmu)
        let signal = Self.frames(50, levelDBov: -20, tone: true) + Self.frames(100, levelDBov: -60, tone: false)
            + Self.frames(50, levelDBov: -20, tone: true)
        let datagram = UnsafeMutableRawBufferPointer.allocate(byteCount: RTPAudioEncoder.maxDatagramSize, alignment: 16)
        let out = UnsafeMutableBufferPointer<Int16>.allocate(capacity: 160)
        defer { datagram.deallocate(); out.deallocate() }
        var sent: [RTPPacket] = [], played: [Int16] = [], sequence: Int64 = 0
        for k in 0..<200 {
            let now = UInt64(k) * 20_000_000 + 1_000_000_000
            let n = try signal.withUnsafeBufferPointer { try encoder.encode(UnsafeBufferPointer(rebasing: $0[(k * 160)..<((k + 1) * 160)]), into: datagram) }
            if n > 0 {
                let bytes = UnsafeRawBufferPointer(rebasing: datagram[0..<n])
                let packet = try RTPPacket.parse(bytes)
                sent.append(packet)
                let received = RTPReceivedPacket(sequenceNumber: sequence, timestamp: packet.header.timestamp, marker: packet.header.marker,
                                                 arrival: now, isComfortNoise: packet.header.payloadType == 13)
                sequence += 1
                buffer.insert(received, payload: UnsafeRawBufferPointer(rebasing: bytes[packet.payload]))
            }
            buffer.pull(into: out, now: now + 40_000_000)
            played += out
        }
        let descriptors = sent.filter { $0.header.payloadType == 13 }
        #expect(sent.count == 50 + SilenceSuppressor.hangoverFrames + descriptors.count + 50)
        #expect(descriptors.count == 4, "one at the start of the silence, then every half second")
        #expect(descriptors.allSatisfy { $0.payload.count == 1 && !$0.header.marker })
        let resumed = try #require(sent.first { $0.header.timestamp == 150 * 160 })
        #expect(resumed.header.marker && resumed.header.payloadType == 0, "the talk spurt after the silence is marked")
        #expect(buffer.statistics.comfortNoiseDescriptors == 4 && buffer.statistics.concealedMs == 0)
        // In the silence's middle our receiver plays noise at the descriptor's level.
        let middle = Array(played[(100 * 160)..<(130 * 160)])
        #expect(abs(Levels.dBFS(middle.map { Float($0) / 32767 }) - (-60)) < 3)
    }

    @Test("Only G.711 and G.722 with DTX on: Opus has DTX of its own, and without DTX every frame goes")
    func onlyWithDTXAndAnEightKilohertzCodec() throws {
        var dtx = OpusCallConfiguration(sampleRate: 8000)
        dtx.dtx = true
        var opus = try RTPAudioEncoder(configuration: OpusCallConfiguration(dtx: true), codec: .opus, packetizer: RTPPacketizer(payloadType: 111))
        opus.sendComfortNoise(payloadType: 13)
        var plain = try RTPAudioEncoder(configuration: OpusCallConfiguration(sampleRate: 8000), codec: .pcma, packetizer: RTPPacketizer(payloadType: 8))
        plain.sendComfortNoise(payloadType: 13)
        var g722 = try RTPAudioEncoder(configuration: OpusCallConfiguration(dtx: true), codec: .g722, packetizer: RTPPacketizer(payloadType: 9))
        g722.sendComfortNoise(payloadType: 13)
        let sends = (opus.sendsComfortNoise, plain.sendsComfortNoise, g722.sendsComfortNoise)
        #expect(sends == (false, false, true))
    }

    @Test("Deciding and sending descriptors does not allocate")
    func noAllocations() throws {
        #expect(AllocationCounter.isActive)
        var configuration = OpusCallConfiguration(sampleRate: 8000)
        configuration.dtx = true
        var encoder = try RTPAudioEncoder(configuration: configuration, codec: .pcma, packetizer: RTPPacketizer(payloadType: 8))
        encoder.sendComfortNoise(payloadType: 13)
        let signal = Self.frames(20, levelDBov: -20, tone: true) + Self.frames(60, levelDBov: -60, tone: false)
        let datagram = UnsafeMutableRawBufferPointer.allocate(byteCount: RTPAudioEncoder.maxDatagramSize, alignment: 16)
        defer { datagram.deallocate() }
        var counts: [UInt64] = []
        for k in 0..<80 {
            let before = AllocationCounter.thisThread
            _ = try signal.withUnsafeBufferPointer { try encoder.encode(UnsafeBufferPointer(rebasing: $0[(k * 160)..<((k + 1) * 160)]), into: datagram) }
            counts.append(AllocationCounter.thisThread - before)
        }
        // The first frame sets the codec up; from then on, speech, hangover, descriptors and skips.
        #expect(counts.dropFirst().reduce(0, +) == 0)
    }
}
