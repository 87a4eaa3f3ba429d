import Platform
import Foundation
import Opus
import RTP
import Testing
import TestSupport
import WAV

/// Encoded speech as RTP payloads, for feeding a jitter buffer by hand.
struct EncodedSpeech {
    var payloads: [[UInt8]] = []
    var timestamps: [UInt32] = []
    let frame = 320

    init(seconds: Double, fec: Bool = true, startTimestamp: UInt32 = 1000, file: String = Fixtures.englishFemale) throws {
        let speech = try Fixtures.speech(file).int16Samples
        var config = OpusCallConfiguration()
        config.inbandFEC = fec
        config.initialExpectedLossPercent = fec ? 10 : 0
        let encoder = try config.makeEncoder()
        let frames = Int(seconds * 50)
        for k in 0..<frames {
            payloads.append(try encoder.encode(Array(speech[(k * frame)..<((k + 1) * frame)])))
            timestamps.append(startTimestamp &+ UInt32(k * 960))
        }
    }

    /// Whether packet `k` carries FEC for the packet before it.
    func hasFEC(_ k: Int) -> Bool { payloads[k].withUnsafeBytes { OpusPayload.hasFEC($0) } }

    /// The first index from `start` whose next `count` packets all carry FEC.
    func firstWithFEC(from start: Int, following count: Int = 1) -> Int {
        (start..<(payloads.count - count - 1)).first { k in (1...count).allSatisfy { hasFEC(k + $0) } }!
    }

    /// What a decoder makes of the payloads in order, with packet `lost` rebuilt from
    /// the next one's FEC (or concealed without FEC).
    func reference(lost: Set<Int> = [], fec: Bool = true) throws -> [Int16] {
        let decoder = try OpusDecoder(sampleRate: 16000)
        var out: [Int16] = []
        for k in payloads.indices {
            if lost.contains(k) {
                out += fec && !lost.contains(k + 1) && k + 1 < payloads.count
                    ? try decoder.decodeFEC(from: payloads[k + 1], frames: 320) : try decoder.concealLoss(frames: 320)
            } else {
                out += try decoder.decode(payloads[k])
            }
        }
        return out
    }
}

/// Drives a jitter buffer in virtual time: packet k is sent at k * 20 ms, arrives
/// `delay(k)` ms later (nil: lost), and `pullFrames` (16 kHz) are pulled every period (20 ms by default).
func play(_ speech: EncodedSpeech, config: JitterBufferConfiguration = .init(), pulls: Int? = nil, pullFrames: Int = 320,
          arrivals: (Int) -> [Double]) throws -> (audio: [Int16], stats: JitterBufferStatistics) {
    var buffer = JitterBuffer(configuration: config, decoder: try OpusDecoder(sampleRate: 16000))
    var events: [(time: UInt64, index: Int)] = []
    for k in speech.payloads.indices {
        for delay in arrivals(k) { events.append((UInt64((Double(k) * 20 + delay) * 1e6) + 1_000_000_000, k)) }
    }
    events.sort { $0.time < $1.time }
    var next = 0
    var audio: [Int16] = []
    var out = [Int16](repeating: 0, count: pullFrames)
    let period = pullFrames * 1_000_000 / 16
    for p in 0..<(pulls ?? (speech.payloads.count + 20) * 320 / pullFrames) {
        let now = UInt64(1_000_000_000 + 5_000_000 + p * period)
        while next < events.count, events[next].time <= now {
            let k = events[next].index
            let packet = RTPReceivedPacket(sequenceNumber: Int64(k), timestamp: speech.timestamps[k], arrival: events[next].time)
            speech.payloads[k].withUnsafeBytes { buffer.insert(packet, payload: $0) }
            next += 1
        }
        out.withUnsafeMutableBufferPointer { buffer.pull(into: $0, now: now) }
        audio += out
    }
    return (audio, buffer.statistics)
}

/// Where `part` starts in `whole` (searching whole frames of leading silence).
func offset(of part: [Int16], in whole: [Int16]) -> Int? {
    for start in stride(from: 0, through: min(whole.count - part.count, 320 * 40), by: 320)
    where Array(whole[start..<(start + part.count)]) == part { return start }
    return nil
}

@Suite("Adaptive jitter buffer")
struct JitterBufferTests {
    static let noStretch = JitterBufferConfiguration(timeStretch: false)

    @Test("In order and on time: the output is exactly the decoded stream")
    func inOrder() throws {
        let speech = try EncodedSpeech(seconds: 3)
        let (audio, stats) = try play(speech, config: Self.noStretch) { _ in [30] }
        let reference = try speech.reference()
        #expect(offset(of: reference, in: audio) != nil)
        #expect(stats.lost == 0 && stats.late == 0 && stats.concealedMs <= 100)
    }

    /// Sound cards run periods of their own (10 ms, 256 or 1024 frames); a period that ends
    /// inside a packet needs that packet already, which the target delay must allow for, or
    /// the buffer runs dry at some phases and conceals in the middle of the speech.
    @Test("Periods of another length than the packets' on a steady network: no concealment, delay within a period of the target",
          arguments: [160, 256, 441, 1024])
    func otherPeriodLengths(periodFrames: Int) throws {
        let speech = try EncodedSpeech(seconds: 8)
        // Stop pulling when the last packet has arrived, so no concealment is due to the stream's end.
        let pulls = speech.payloads.count * 320 / periodFrames
        let (_, stats) = try play(speech, pulls: pulls, pullFrames: periodFrames) { _ in [1] }
        let periodMs = Double(periodFrames) / 16
        print("period \(periodMs) ms: concealed \(stats.concealedMs) ms, dropped \(stats.droppedMs) ms, "
              + "mean delay \(stats.meanDelayMs) ms, target \(stats.targetDelayMs) ms")
        #expect(stats.concealedMs == 0)
        #expect(stats.stretchedMs == 0)
        #expect(stats.targetDelayMs <= stats.jitterQuantileMs + periodMs + 10)
    }

    @Test("Reordering and duplicates are undone: same audio, duplicates counted")
    func reorderAndDuplicates() throws {
        let speech = try EncodedSpeech(seconds: 3)
        // Every 10th packet arrives after the next one; every 7th twice.
        let (audio, stats) = try play(speech, config: Self.noStretch) { k in
            var d: [Double] = [k % 10 == 5 ? 55 : 30]
            if k % 7 == 3 { d.append(d[0] + 3) }
            return d
        }
        #expect(offset(of: try speech.reference(), in: audio) != nil)
        #expect(stats.duplicates == (0..<150).filter { $0 % 7 == 3 }.count)
        #expect(stats.late == 0 && stats.lost == 0)
    }

    @Test("A lost packet is rebuilt from the next packet's FEC, exactly as the decoder does it")
    func fecRecovery() throws {
        let speech = try EncodedSpeech(seconds: 3)
        let a = speech.firstWithFEC(from: 30), b = speech.firstWithFEC(from: 70, following: 2)
        let c = speech.firstWithFEC(from: b + 20)
        let lost: Set<Int> = [a, b, b + 1, c]
        // Arrivals late enough that the next packet is always there in time.
        let (audio, stats) = try play(speech, config: Self.noStretch) { k in lost.contains(k) ? [] : [10] }
        let reference = try speech.reference(lost: lost)
        #expect(offset(of: reference, in: audio) != nil)
        #expect(stats.lost == 4)
        #expect(stats.fecRecovered == 3)  // b is followed by another loss: concealed
        #expect(stats.concealedMs >= 20)
    }

    @Test("Without FEC a lost packet is concealed by PLC")
    func plc() throws {
        let speech = try EncodedSpeech(seconds: 2, fec: false)
        var config = Self.noStretch
        config.useFEC = false
        let (audio, stats) = try play(speech, config: config) { k in k == 30 ? [] : [10] }
        #expect(offset(of: try speech.reference(lost: [30], fec: false), in: audio) != nil)
        #expect(stats.lost == 1 && stats.fecRecovered == 0 && stats.concealedMs >= 20)
    }

    @Test("A packet after its playout time is dropped as late, and not as a duplicate")
    func late() throws {
        let speech = try EncodedSpeech(seconds: 2)
        let late = speech.firstWithFEC(from: 40)
        let (_, stats) = try play(speech, config: Self.noStretch) { k in k == late ? [400] : [10] }
        #expect(stats.late == 1 && stats.duplicates == 0)
        #expect(stats.lost == 1 && stats.fecRecovered == 1)
    }

    @Test("Timestamp wrap-around in the middle of a stream")
    func timestampWrap() throws {
        let speech = try EncodedSpeech(seconds: 2, startTimestamp: UInt32.max - 960 * 30)
        let (audio, stats) = try play(speech, config: Self.noStretch) { _ in [25] }
        #expect(offset(of: try speech.reference(), in: audio) != nil)
        #expect(stats.resets == 0 && stats.lost == 0)
    }

    @Test("Memory is bounded: a burst beyond the capacity is counted, not stored")
    func bounded() throws {
        let speech = try EncodedSpeech(seconds: 3)
        var config = Self.noStretch
        config.capacity = 16
        // Everything arrives at once after 1 s.
        let (_, stats) = try play(speech, config: config) { k in [1000 - Double(k) * 20] }
        #expect(stats.overflows > 0)
        #expect(stats.packetsInserted + stats.overflows + stats.late + stats.timestampJumps == 150)
    }

    @Test("A new source generation starts the buffer over")
    func sourceChange() throws {
        let first = try EncodedSpeech(seconds: 1, startTimestamp: 5000)
        let second = try EncodedSpeech(seconds: 1, startTimestamp: 3_000_000_000)
        var buffer = JitterBuffer(configuration: Self.noStretch, decoder: try OpusDecoder(sampleRate: 16000))
        var out = [Int16](repeating: 0, count: 320)
        for k in 0..<100 {
            let now = UInt64(k) * 20_000_000 + 30_000_000
            let (speech, index, generation): (EncodedSpeech, Int, UInt32) = k < 50 ? (first, k, 1) : (second, k - 50, 2)
            let packet = RTPReceivedPacket(sequenceNumber: Int64(k < 50 ? k : 9000 + k), timestamp: speech.timestamps[index],
                                           arrival: now - 10_000_000, sourceGeneration: generation)
            speech.payloads[index].withUnsafeBytes { buffer.insert(packet, payload: $0) }
            out.withUnsafeMutableBufferPointer { buffer.pull(into: $0, now: now) }
        }
        let stats = buffer.statistics
        #expect(stats.resets == 1)
        #expect(stats.late == 0 && stats.lost == 0)
        #expect(stats.packetsInserted == 100)
    }

    @Test("One packet with a wild timestamp is dropped; two in a row restart the buffer")
    func timestampJumps() throws {
        let speech = try EncodedSpeech(seconds: 2)
        var buffer = JitterBuffer(configuration: Self.noStretch, decoder: try OpusDecoder(sampleRate: 16000))
        var out = [Int16](repeating: 0, count: 320)
        for k in 0..<100 {
            let now = UInt64(k) * 20_000_000 + 30_000_000
            var timestamp = speech.timestamps[k]
            if k == 40 || k == 70 || k == 71 { timestamp &+= 1_000_000 }  // 20 s ahead
            let packet = RTPReceivedPacket(sequenceNumber: Int64(k), timestamp: timestamp, arrival: now - 10_000_000)
            speech.payloads[k].withUnsafeBytes { buffer.insert(packet, payload: $0) }
            out.withUnsafeMutableBufferPointer { buffer.pull(into: $0, now: now) }
        }
        let stats = buffer.statistics
        // Dropped: 40 (alone), 70 (then confirmed by 71: restart), 72 (back to the old
        // timeline, confirmed by 73: restart).
        #expect(stats.timestampJumps == 3)
        #expect(stats.resets == 2)
    }

    @Test("Invalid payloads are counted and never decoded")
    func invalidPayloads() throws {
        var buffer = JitterBuffer(decoder: try OpusDecoder(sampleRate: 16000))
        for bad: [UInt8] in [[], [0x0B, 0x00], [0x0B, 0x3F]] {
            bad.withUnsafeBytes { buffer.insert(RTPReceivedPacket(sequenceNumber: 1, timestamp: 0, arrival: 0), payload: $0) }
        }
        #expect(buffer.statistics.undecodable == 3 && buffer.statistics.packetsInserted == 0)
    }

    @Test("The monitor hands every statistic over unchanged")
    func monitorRoundTrip() {
        var s = JitterBufferStatistics()
        (s.packetsInserted, s.late, s.duplicates, s.lost, s.fecRecovered, s.undecodable) = (1, 2, 3, 4, 5, 6)
        (s.overflows, s.resets, s.timestampJumps) = (7, 8, 9)
        (s.concealedMs, s.comfortNoiseMs, s.droppedMs, s.stretchedMs, s.currentDelayMs) = (10.5, 11.5, 12.5, 13.5, 14.5)
        (s.targetDelayMs, s.jitterQuantileMs, s.meanDelayMs, s.bufferedMs) = (15.5, 16.5, 17.5, 18.5)
        let monitor = JitterBufferMonitor()
        monitor.publish(s)
        #expect(monitor.snapshot == s)
    }
}
