import DSP
import AudioAnalysis
import Simulation
import Testing
import TestSupport
import VoiceProcessing
import WAV

/// A shortened `aecbench suite` scenario run through the unit, as CI's regression check.
///
/// 10 s at 16 kHz in an image-method room (RT60 0.3 s, seed 1), far end throughout, near end
/// 5-7 s at SER 0 dB, ENR 40 dB. Floors sit about 3 dB under what the unit measured when they
/// were set (see Docs/voice-processing.md), so a real regression fails and noise does not.
@Suite("Echo cancellation regression (short suite scenarios)")
struct RegressionTests {
    struct Result {
        var erle: Double
        var postDoubleTalkERLE: Double
        var afterChangeERLE: Double?
        /// The first half second after an echo-path change.
        var changeOnsetERLE: Double?
        var statistics: VoiceProcessingStatistics
        /// Bulk delay plus the direct path, ms.
        var echoDelayMs: Double
    }

    static func run(far farName: String = Fixtures.englishFemale, near nearName: String = Fixtures.frenchFemale,
                    seed: UInt64 = 1, _ change: (inout ScenarioConfiguration) -> Void) throws -> Result {
        let far = try Fixtures.speech(farName).samples
        let near = try Fixtures.speech(nearName).samples
        var config = ScenarioConfiguration(duration: 10, doubleTalk: 5..<7, seed: seed)
        change(&config)
        let scenario = try Scenario.make(far: far, near: near, configuration: config)
        let unit = try VoiceProcessingUnit(configuration: VoiceProcessingConfiguration(maximumFramesPerPeriod: 160, agcEnabled: false))
        let farPCM = VPSignals.pcm(scenario.far)
        var out = VPSignals.pcm(scenario.mic)
        let count = out.count
        farPCM.withUnsafeBufferPointer { f in
            out.withUnsafeMutableBufferPointer { o in
                for start in stride(from: 0, to: count - 159, by: 160) {
                    unit.process(capture: UnsafeMutableBufferPointer(rebasing: o[start..<(start + 160)]),
                                 render: UnsafeBufferPointer(rebasing: f[start..<(start + 160)]), timing: .zero)
                }
            }
        }
        let output = out.map { Float($0) / 32768 }
        var echoEnergy = 0.0, residualEnergy = 0.0
        for range in scenario.farSingleTalk {
            for i in range where i >= 32000 {
                echoEnergy += Double(scenario.echo[i] * scenario.echo[i])
                residualEnergy += Double(output[i] * output[i])
            }
        }
        let postDT = VPSignals.erle(echo: scenario.echo, output: output, range: 112_000..<144_000)
        // The second after an echo-path change, from 0.5 s after it.
        let afterChange = scenario.pathChangeSample.map { VPSignals.erle(echo: scenario.echo, output: output, range: ($0 + 8000)..<min($0 + 24000, count)) }
        let onset = scenario.pathChangeSample.map { VPSignals.erle(echo: scenario.echo, output: output, range: $0..<($0 + 8000)) }
        let g = try #require(scenario.geometry)
        let delay = (config.bulkDelay + g.loudspeaker.distance(to: g.microphone) / 343) * 1000
        return Result(erle: 10 * Math.log10(echoEnergy / residualEnergy), postDoubleTalkERLE: postDT, afterChangeERLE: afterChange,
                      changeOnsetERLE: onset, statistics: unit.statistics, echoDelayMs: delay)
    }

    @Test("Base: RT60 0.3 s, 5 ms delay")
    func base() throws {
        let r = try Self.run { _ in }
        // Measured 33.8 / 38.4 dB (36.0 / 37.6 before the reference was kept 2 ms behind the loudspeaker).
        #expect(r.erle >= 31, "full-chain ERLE \(r.erle) dB")
        #expect(r.postDoubleTalkERLE >= 34, "ERLE after double talk \(r.postDoubleTalkERLE) dB")
        #expect(abs((r.statistics.estimatedDelayMs ?? 0) - r.echoDelayMs) <= 2)
        #expect(r.statistics.cancellerResets == 0)
    }

    @Test("150 ms of bulk delay is found and aligned")
    func bulkDelay() throws {
        let r = try Self.run { $0.bulkDelay = 0.15 }
        // Measured 33.7 dB (one reset at the realignment); plain SpeexDSP leaves ~150 ms of its tail unused.
        #expect(r.erle >= 30, "full-chain ERLE \(r.erle) dB")
        let estimated = try #require(r.statistics.estimatedDelayMs)
        #expect(abs(estimated - r.echoDelayMs) <= 2, "estimated \(estimated) ms, true \(r.echoDelayMs) ms")
        #expect(r.statistics.cancellerResets == 1)
    }

    @Test("An echo-path change after convergence is caught as a collapse and the canceller starts over")
    func pathChange() throws {
        // `aecbench suite`'s pathchange, seed 1: the loudspeaker moves at 16 s, in far-end single talk.
        let r = try Self.run { $0 = ScenarioConfiguration(duration: 20, pathChangeTime: 16, seed: 1) }
        // Measured: one reset, 90 dB over 0.5 to 1.5 s after the change (the startup gate holds
        // the echo while the canceller converges again), 14.7 dB over all far-end single talk.
        // Without the collapse rule: no reset, 5.7 dB after the change, 12.8 dB overall.
        #expect(r.statistics.cancellerResets == 1)
        let after = try #require(r.afterChangeERLE)
        #expect(after >= 20, "ERLE 0.5 to 1.5 s after the change \(after) dB")
        #expect(r.erle >= 13, "full-chain ERLE \(r.erle) dB")
        let onset = try #require(r.changeOnsetERLE)
        // The first half second, before the collapse rule resets it: 15.1 dB, held where the
        // output opposes the canceller's own estimate; 7.3 dB without that test.
        #expect(onset >= 12, "ERLE in the first 0.5 s after the change \(onset) dB")
    }

    @Test("100 ppm of clock drift is measured and followed, losing under 3 dB against no drift")
    func drift() throws {
        let r = try Self.run { $0.driftPPM = 100 }
        let base = try Self.run { _ in }
        // Measured (2026-11-22): after double talk 37.9 dB against 38.4 without drift; the linear
        // stage 20.5 against 21.9 dB; 101.5 ppm. With the reference read at whole samples (as it
        // was when it sat under 16 samples behind the loudspeaker): 21.9 dB after double talk.
        // The full chain over all far-end single talk (29.1 dB against 33.8) is compared with a
        // floor only: it includes the second in which the startup gate lets go, and a canceller a
        // few tenths of a dB better lets it go that second earlier (24.8 dB instead of 83 dB over
        // 3 to 4 s in this scenario), which says nothing about the drift.
        #expect(r.erle >= 27, "full-chain ERLE \(r.erle) dB")
        #expect(base.postDoubleTalkERLE - r.postDoubleTalkERLE <= 3,
                "drift loses \(base.postDoubleTalkERLE - r.postDoubleTalkERLE) dB after double talk")
        let linear = try #require(r.statistics.erleDB), baseLinear = try #require(base.statistics.erleDB)
        #expect(baseLinear - linear <= 3, "drift loses \(baseLinear - linear) dB in the linear stage")
        let ppm = try #require(r.statistics.driftPPM)
        #expect(abs(ppm - 100) <= 5, "estimated \(ppm) ppm")
    }

    @Test("The suite's pulsebursts, seed 3: 7 jumps of the echo's delay, two in double talk and one as the far end starts a word, each followed without a reset")
    func delayBursts() throws {
        let r = try Self.run(far: "en_f_echotest_16k.wav", near: "fr_f_congrats_16k.wav", seed: 3) {
            $0.duration = 20
            $0.doubleTalk = 8..<14
            $0.delayMoves = EchoPathDelayMove.bursts(duration: 20, seed: 3)
        }
        // Measured: 0 resets, 8 moves (a 35 ms jump followed in two steps). Before the delay
        // estimator's agreement and the rival test, 2 and then 1 reset.
        #expect(r.statistics.cancellerResets == 0)
        #expect(r.statistics.echoMoves >= 7)
    }
}

private enum Math {
    static func log10(_ x: Double) -> Double { Levels.decibels(power: x) / 10 }
}
