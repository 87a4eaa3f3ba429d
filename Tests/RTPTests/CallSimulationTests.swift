import Platform
import Simulation
import AudioAnalysis
import Opus
import RTP
import Testing
import TestSupport
import WAV

/// End-to-end in virtual time: encoder, RTP, seeded impairments, validation, jitter buffer.
@Suite("Impaired calls in virtual time")
struct CallSimulationTests {
    static let speech: [Int16] = Array(try! Fixtures.speech(Fixtures.englishFemale).int16Samples.prefix(16000 * 10))

    /// Aligned correlation of the received audio with the source: each half second aligned on its
    /// own within three frames (60 ms) of the previous one's lag, since the jitter buffer moves the
    /// delay along the way.
    static func quality(_ received: [Int16]) -> Double {
        let reference = speech.map { Float($0) / 32768 }, test = received.map { Float($0) / 32768 }
        let start = Alignment.find(reference: reference, test: test, maxLag: 3200)
        return Alignment.segmentedCorrelation(reference: reference, test: test, around: start.lag, window: 8000,
                                              search: 960, tracking: true)
    }

    @Test("With 40 +- 10 ms of jitter the delay stays within the jitter's 95th percentile + 20 ms, at any pull phase",
          arguments: [0.0, 6, 13, 19])
    func delayFollowsJitter(phase: Double) throws {
        var sim = CallSimulation()
        sim.profile = ImpairmentProfile(delayMs: 40, jitterMs: 10)
        sim.pullPhaseMs = phase
        sim.seed = UInt64(phase) + 1
        let r = try sim.run(Self.speech)
        let p95 = r.relativeDelaysMs.percentile(0.95)
        #expect(r.statistics.meanDelayMs <= p95 + 20)
        #expect(abs(r.statistics.targetDelayMs - p95) < 3)
        #expect(r.statistics.late <= 3)
        #expect(Self.quality(r.received) > 0.91)
    }

    @Test("The target follows larger jitter and comes back down")
    func targetAdapts() throws {
        var sim = CallSimulation()
        sim.profile = ImpairmentProfile(delayMs: 100, jitterMs: 60)
        let high = try sim.run(Self.speech)
        #expect(high.statistics.targetDelayMs > 90)
        #expect(high.statistics.meanDelayMs <= high.relativeDelaysMs.percentile(0.95) + 20)
        sim.profile = ImpairmentProfile(delayMs: 10, jitterMs: 2)
        let low = try sim.run(Self.speech)
        #expect(low.statistics.targetDelayMs < 6)
    }

    @Test("FEC is measurably better than PLC alone at 5 % and 10 % loss", arguments: [5.0, 10.0])
    func fecBeatsPLC(loss: Double) throws {
        var fecWins = 0
        for seed: UInt64 in 1...3 {
            var sim = CallSimulation()
            sim.seed = seed
            sim.profile = ImpairmentProfile(delayMs: 40, jitterMs: 10, lossPercent: loss)
            let withFEC = try sim.run(Self.speech)
            sim.opus.inbandFEC = false
            sim.opus.initialExpectedLossPercent = 0
            sim.jitter.useFEC = false
            let withoutFEC = try sim.run(Self.speech)
            #expect(withFEC.statistics.fecRecovered > withFEC.statistics.lost / 2)
            #expect(withoutFEC.statistics.fecRecovered == 0)
            if Self.quality(withFEC.received) > Self.quality(withoutFEC.received) + 0.005 { fecWins += 1 }
        }
        #expect(fecWins == 3)
    }

    @Test("With fecDelay the buffer holds a packet more under loss, and FEC rebuilds more", arguments: [0.0, 10])
    func fecDelay(phase: Double) throws {
        var sim = CallSimulation()
        sim.pullPhaseMs = phase
        sim.profile = ImpairmentProfile(delayMs: 40, jitterMs: 10, lossPercent: 5)
        let plain = try sim.run(Self.speech)
        sim.jitter.fecDelay = true
        let held = try sim.run(Self.speech)
        #expect(held.statistics.fecRecovered >= plain.statistics.fecRecovered)
        #expect(held.statistics.fecRecovered * 10 >= held.statistics.lost * 7)
        #expect(held.statistics.targetDelayMs > plain.statistics.targetDelayMs + 15)
    }

    @Test("Pulls of 5 ms put the delay band at the jitter's 95th percentile + 20 ms while packets are lost, and FEC rebuilds more than with 20 ms pulls")
    func shortPulls() throws {
        var recovered = (short: 0, long: 0)
        var excessOverSeeds = 0.0
        for (seed, phase) in [(1, 1.0), (2, 7), (3, 13), (4, 19)] {
            var sim = CallSimulation()
            sim.pullPhaseMs = phase
            sim.seed = UInt64(seed)
            sim.profile = ImpairmentProfile(delayMs: 40, jitterMs: 10, lossPercent: 5)
            sim.pullMs = 20
            let long = try sim.run(Self.speech)
            sim.pullMs = 5
            let short = try sim.run(Self.speech)
            recovered.short += short.statistics.fecRecovered
            recovered.long += long.statistics.fecRecovered
            let p95 = short.relativeDelaysMs.percentile(0.95)
            // A packet minus a pull above the quantile: the band the delay is kept in ends at
            // quantile + 20 ms.
            #expect(abs(short.statistics.targetDelayMs - (p95 + 15)) < 3)
            // Once settled (the first seconds play at the start's delay until a pause lets it
            // move): the delay while speech plays, 5 to 9.5 s.
            let settled = short.trace[1000..<1900].map(\.currentDelayMs).sorted()
            excessOverSeeds += settled[settled.count / 2] - p95
            // The band ends at the quantile + 20 ms; its 2 ms drop margin may take it a little past.
            #expect(settled[settled.count * 9 / 10] <= p95 + 22)
        }
        #expect(excessOverSeeds / 4 <= 20)
        #expect(recovered.short > recovered.long + recovered.long / 5)
    }

    @Test("Losses raise the target only while the peer's packets carry FEC")
    func noRoomWithoutFEC() throws {
        var sim = CallSimulation()
        sim.pullMs = 5
        sim.profile = ImpairmentProfile(delayMs: 40, jitterMs: 10, lossPercent: 5)
        sim.opus.inbandFEC = false
        sim.opus.initialExpectedLossPercent = 0
        let r = try sim.run(Self.speech)
        #expect(r.statistics.lost > 10 && r.statistics.fecRecovered == 0)
        #expect(abs(r.statistics.targetDelayMs - r.relativeDelaysMs.percentile(0.95)) < 3)
    }

    @Test("Reordering within the target delay is undone; duplicates are dropped; the rest is late and counted")
    func reorderAndDuplicates() throws {
        var sim = CallSimulation()
        sim.profile = ImpairmentProfile(delayMs: 40, jitterMs: 10, reorderPercent: 10, reorderDelayMs: 25, duplicatePercent: 10)
        let r = try sim.run(Self.speech)
        let s = r.statistics
        #expect(s.duplicates > 30)
        // The target covers the 95th percentile of delay: at most about 5 % arrive too late.
        #expect(s.late < r.sentPackets * 5 / 100)
        #expect(s.lost <= s.late + 2)
        #expect(s.targetDelayMs > 25)
        #expect(Self.quality(r.received) > 0.86)
    }

    @Test("Clock drift of +-5000 ppm is absorbed in pauses, with the delay bounded", arguments: [5000.0, -5000.0])
    func drift(ppm: Double) throws {
        var sim = CallSimulation()
        sim.profile = ImpairmentProfile(delayMs: 30, jitterMs: 5)
        let base = try sim.run(Self.speech).statistics
        sim.receiverDriftPPM = ppm
        let r = try sim.run(Self.speech)
        let s = r.statistics
        // 10 s at 5000 ppm is 50 ms to make up: whole frames beyond the slack the delay had.
        if ppm > 0 {
            #expect(s.stretchedMs + s.concealedMs >= base.stretchedMs + base.concealedMs + 20)
        } else {
            #expect(s.droppedMs >= base.droppedMs + 20)
        }
        #expect(s.overflows == 0)
        #expect(s.meanDelayMs < base.meanDelayMs + 25)
        #expect(Self.quality(r.received) > 0.91)
    }

    @Test("DTX gaps are comfort noise, not loss")
    func dtx() throws {
        // Speech, 2 s of digital silence, speech.
        let part = Array(Self.speech.prefix(16000 * 3))
        let input = part + [Int16](repeating: 0, count: 32000) + part
        var sim = CallSimulation()
        sim.opus.dtx = true
        sim.profile = ImpairmentProfile(delayMs: 30, jitterMs: 5)
        let r = try sim.run(input)
        #expect(r.sentPackets < input.count / 320 - 50)
        #expect(r.statistics.lost == 0)
        #expect(r.statistics.comfortNoiseMs > 1000)
    }

    @Test("Sequence numbers and timestamps wrap during the call")
    func wrapAround() throws {
        // The simulation starts at sequence 65000 and timestamp 4_294_000_000: both wrap within 20 s.
        let long = Array(try Fixtures.speech(Fixtures.englishFemale).int16Samples.prefix(16000 * 22))
        var sim = CallSimulation()
        sim.profile = ImpairmentProfile(delayMs: 20, jitterMs: 5)
        let r = try sim.run(long)
        #expect(r.statistics.resets == 0 && r.statistics.lost == 0 && r.statistics.late == 0)
        #expect(r.dropped.values.reduce(0, +) == 1)  // the first packet, in probation
    }

    @Test("A flood from a second source changes nothing that is heard, and is counted")
    func flood() throws {
        var sim = CallSimulation()
        sim.profile = ImpairmentProfile(delayMs: 40, jitterMs: 10, lossPercent: 3)
        let clean = try sim.run(Self.speech)
        let attacker = RTPHeader(payloadType: 96, sequenceNumber: 0, timestamp: 0, ssrc: 0x1234_5678)
        sim.extraPackets = { k, time in
            guard k >= 5 else { return [] }  // once the call's source is locked
            // Ten packets per frame from another address: same SSRC, plausible sequence and timestamps, valid Opus.
            return (0..<10).map { i in
                var h = attacker
                h.sequenceNumber = UInt16(truncatingIfNeeded: 65000 + k * 10 + i)
                h.timestamp = 4_294_000_000 &+ UInt32(k * 960)
                return (try! h.packet(payload: [0x48, UInt8(i), 0xFF]), time + UInt64(i) * 1_000_000)
            }
        }
        let flooded = try sim.run(Self.speech)
        #expect(flooded.received == clean.received)
        #expect(flooded.statistics == clean.statistics)
        #expect(flooded.dropped[.foreignSource]! == 10 * (Self.speech.count / 320 - 5))
    }
}
