import Foundation
import AudioAnalysis
import Simulation
import Testing
import TestSupport
@testable import VoiceProcessing

/// Feeds whole signals through a unit period by period; returns the processed capture.
private func run(_ unit: VoiceProcessingUnit, far: [Int16], mic: [Int16], period: Int,
                 timing: VoiceProcessingTiming = .zero) -> [Int16] {
    run(unit, far: far, mic: mic, period: period) { _ in timing }
}

/// The same, with the timing the I/O layer reports for the period starting at each sample.
private func run(_ unit: VoiceProcessingUnit, far: [Int16], mic: [Int16], period: Int,
                 timing: (Int) -> VoiceProcessingTiming) -> [Int16] {
    var out = mic
    let count = min(far.count, mic.count) / period * period
    far.withUnsafeBufferPointer { f in
        out.withUnsafeMutableBufferPointer { o in
            for start in stride(from: 0, to: count, by: period) {
                unit.process(capture: UnsafeMutableBufferPointer(rebasing: o[start..<(start + period)]),
                             render: UnsafeBufferPointer(rebasing: f[start..<(start + period)]), timing: timing(start))
            }
        }
    }
    return out
}

/// Far-end speech, its echo through a small room after `bulkDelay`, and noise 40 dB down.
private func echoScene(seconds: Double, bulkDelay: Double = 0.005, sampleRate: Int = 16000) throws
    -> (far: [Float], echo: [Float], mic: [Float]) {
    let far16 = try VPSignals.speech(Fixtures.englishFemale, seconds: seconds)
    let far: [Float]
    if sampleRate == 16000 {
        far = far16
    } else {
        let resampler = try SpeexResamplerForTests.make(from: 16000, to: sampleRate)
        far = resampler(far16)
    }
    let room = ShoeboxRoom(size: Point3(3.2, 2.6, 2.4), rt60: 0.2)
        .impulseResponse(source: Point3(1.0, 1.2, 1.1), microphone: Point3(1.4, 1.3, 1.1), sampleRate: sampleRate, length: 0.1)
    let echo = try EchoPath.render(EchoPathConfiguration(sampleRate: sampleRate, impulseResponse: room, gain: 2,
                                                         bulkDelay: bulkDelay), signal: far)
    let noise = Tone.noise(count: far.count, rms: Levels.rms(echo) * 0.01, seed: 8)
    return (far, echo, zip(echo, noise).map { $0 + $1 })
}

@Suite("Voice-processing unit")
struct VoiceProcessingUnitTests {
    static func unit(_ change: (inout VoiceProcessingConfiguration) -> Void = { _ in }) throws -> VoiceProcessingUnit {
        var c = VoiceProcessingConfiguration(maximumFramesPerPeriod: 320)
        change(&c)
        return try VoiceProcessingUnit(configuration: c)
    }

    @Test("Bypass leaves the capture bit-exact, before and after processing")
    func bypassIsBitExact() throws {
        let unit = try Self.unit()
        let far = VPSignals.pcm(Tone.noise(count: 16000, rms: 0.1, seed: 1))
        let mic = VPSignals.pcm(Tone.noise(count: 16000, rms: 0.1, seed: 2))
        _ = run(unit, far: far, mic: mic, period: 320)  // processing first: state to carry over
        unit.isBypassed = true
        #expect(run(unit, far: far, mic: mic, period: 320) == mic)
        #expect(unit.statistics.isBypassed)
        unit.isBypassed = false
        #expect(run(unit, far: far, mic: mic, period: 320) != mic)
    }

    @Test("Modes other than voice and video chat are transparent")
    func otherModesAreTransparent() throws {
        let unit = try Self.unit { $0.mode = .other }
        let mic = VPSignals.pcm(Tone.noise(count: 8000, rms: 0.1, seed: 3))
        #expect(run(unit, far: mic, mic: mic, period: 160) == mic)
        #expect(unit.statistics.blocksProcessed == 0)
        unit.mode = .videoChat
        #expect(run(unit, far: mic, mic: mic, period: 160) != mic)
        #expect(unit.statistics.blocksProcessed == 50)
    }

    @Test("Mute sends zeros and still reports near-end speech")
    func muteReportsSpeech() throws {
        let unit = try Self.unit()
        unit.isInputMuted = true
        let near = VPSignals.pcm(try VPSignals.speech(Fixtures.englishMale, seconds: 4))
        let silence = [Int16](repeating: 0, count: near.count)
        let out = run(unit, far: silence, mic: near, period: 320)
        #expect(out.allSatisfy { $0 == 0 })
        let stats = unit.statistics
        #expect(stats.isInputMuted)
        #expect(stats.speechWhileMutedEvents >= 1)
        // Unmuted, the speech comes through.
        unit.isInputMuted = false
        let after = run(unit, far: silence, mic: near, period: 320)
        #expect(Levels.rms(after.map { Float($0) }) > 100)
    }

    @Test("Control properties read back and take effect")
    func controls() throws {
        let unit = try Self.unit()
        #expect(unit.isAGCEnabled, "AGC is on by default")
        unit.isAGCEnabled = false
        let mic = VPSignals.pcm(Tone.noise(count: 3200, rms: 0.05, seed: 4))
        _ = run(unit, far: mic, mic: mic, period: 320)
        #expect(!unit.statistics.isAGCEnabled)
        // Ducking: a fixed gain, or none while nobody talks with advanced ducking.
        #expect(abs(unit.statistics.otherAudioGain - 0.1) < 1e-6, "default ducking is -20 dB")
        unit.ducking = OtherAudioDucking(isAdvanced: false, level: .max)
        _ = run(unit, far: mic, mic: mic, period: 320)
        #expect(abs(Double(unit.statistics.otherAudioGain) - 0.0316) < 1e-3)
        unit.ducking = OtherAudioDucking(isAdvanced: true, level: .min)
        let silence = [Int16](repeating: 0, count: 16000)
        _ = run(unit, far: silence, mic: silence, period: 320)
        #expect(unit.statistics.otherAudioGain == 1)
        #expect(unit.ducking == OtherAudioDucking(isAdvanced: true, level: .min))
    }

    @Test("Invalid configurations are rejected")
    func rejectsInvalid() {
        #expect(throws: VoiceProcessingError.self) { try Self.unit { $0.processingSampleRate = 32000 } }
        #expect(throws: VoiceProcessingError.self) { try Self.unit { $0.blockMilliseconds = 15 } }
        #expect(throws: VoiceProcessingError.self) { try Self.unit { $0.echoCanceller = .speex(tailSeconds: 5) } }
        #expect(throws: VoiceProcessingError.self) {
            try VoiceProcessingUnit(configuration: VoiceProcessingConfiguration(),
                                    canceller: PassthroughEchoCanceller(blockSize: 100, sampleRate: 16000))
        }
    }

    @Test("The device delay places the reference; the estimate refines it")
    func deviceDelay() throws {
        let unit = try Self.unit()
        let scene = try echoScene(seconds: 3, bulkDelay: 0.07)
        // The I/O layer reports 70 ms (playback 800 + capture 320 frames); the echo is 70 ms plus acoustics.
        _ = run(unit, far: VPSignals.pcm(scene.far), mic: VPSignals.pcm(scene.mic), period: 320,
                timing: VoiceProcessingTiming(deviceDelayFrames: 800 + 320))
        let stats = unit.statistics
        #expect(stats.deviceDelayMs == 70)
        let estimated = try #require(stats.estimatedDelayMs)
        let truth = 70 + Point3(1.0, 1.2, 1.1).distance(to: Point3(1.4, 1.3, 1.1)) / 343 * 1000
        #expect(abs(estimated - truth) < 2, "estimated \(estimated) ms, true \(truth) ms")
        // The acoustic 1.2 ms is inside the band: the reference stays at the device delay less the 4 ms margin.
        #expect(abs(stats.referenceDelayMs - 66) < 0.1)
        #expect(stats.cancellerResets == 0)
    }

    /// Cancels 8 s of echo that comes after 70 ms, or after `movedEcho` ms from 4 s on, with the
    /// device delay the I/O layer reports for each period's start sample; ERLE over 5 to 8 s.
    private func cancel(movedEcho: Double? = nil, tuning: VoiceProcessingTuning = .init(),
                        report: (Int) -> Int) throws -> (erle: Double, stats: VoiceProcessingStatistics) {
        let unit = try Self.unit { $0.agcEnabled = false; $0.tuning = tuning }
        let scene = try echoScene(seconds: 8, bulkDelay: 0.07)
        var echo = scene.echo, mic = scene.mic
        if let movedEcho {
            let moved = try echoScene(seconds: 8, bulkDelay: movedEcho / 1000)
            echo.replaceSubrange((4 * 16000)..., with: moved.echo[(4 * 16000)...])
            mic.replaceSubrange((4 * 16000)..., with: moved.mic[(4 * 16000)...])
        }
        let out = run(unit, far: VPSignals.pcm(scene.far), mic: VPSignals.pcm(mic), period: 320) { start in
            VoiceProcessingTiming(deviceDelayFrames: report(start))
        }
        let tail = (5 * 16000)..<(8 * 16000)
        return (VPSignals.erle(echo: echo, output: out.map { Float($0) / 32768 }, range: tail), unit.statistics)
    }

    /// The `pulse` plugin on pipewire-pulse: the held report moves between two values 15 ms
    /// apart every 1.5 s while the echo stays at 70 ms.
    @Test("A device report that wanders while the echo stays does not move the reference off the echo")
    func wanderingDeviceDelay() throws {
        let wander = { (start: Int) in 1120 + ((start / 24000) % 2 == 1 ? 240 : 0) }
        let held = try cancel(report: wander)
        #expect(held.stats.cancellerResets == 0)
        #expect(held.stats.echoMoves == 0)
        #expect(abs(held.stats.referenceDelayMs - 66) < 1, "reference at \(held.stats.referenceDelayMs) ms")
        // Followed as steps of the echo (the detector off), the same reports cost the canceller.
        var off = VoiceProcessingTuning()
        off.echoShift.enabled = false
        let followed = try cancel(tuning: off, report: wander)
        #expect(held.erle > followed.erle + 3, "ERLE \(held.erle) dB, \(followed.erle) dB following the reports")
    }

    /// The reports of a real call through `pulse` on pipewire-pulse (68 to 105 ms, 28 moves),
    /// over an echo that stays at 84.7 ms as it did in that call: when the delay estimator has
    /// locked (seconds), the ERLE over 3 to 10 s, and the statistics.
    private func cancelWithRecordedReports(tuning: VoiceProcessingTuning = .init()) throws
        -> (lockedAt: Double?, erle: Double, stats: VoiceProcessingStatistics) {
        let text = try String(contentsOfFile: "\(Fixtures.directory)/delay/pipewire-pulse-reports.txt", encoding: .utf8)
        let reports = text.split(separator: "\n").filter { !$0.hasPrefix("#") }.compactMap { Int($0.split(separator: " ")[1]) }
        let unit = try Self.unit { $0.agcEnabled = false; $0.tuning = tuning }
        let acoustic = Point3(1.0, 1.2, 1.1).distance(to: Point3(1.4, 1.3, 1.1)) / 343
        let scene = try echoScene(seconds: 10, bulkDelay: 0.0847 - acoustic)
        var lockedAt: Double?
        let out = run(unit, far: VPSignals.pcm(scene.far), mic: VPSignals.pcm(scene.mic), period: 320) { start in
            if lockedAt == nil && unit.echo.alignment.isLocked { lockedAt = Double(start) / 16000 }
            return VoiceProcessingTiming(deviceDelayFrames: reports[min(start / 320, reports.count - 1)])
        }
        let erle = VPSignals.erle(echo: scene.echo, output: out.map { Float($0) / 32768 }, range: (3 * 16000)..<(10 * 16000))
        return (lockedAt, erle, unit.statistics)
    }

    @Test("A real call's reports from pipewire-pulse: the echo found early and cancelled, without a move or a reset")
    func recordedPipewirePulseReports() throws {
        let run = try cancelWithRecordedReports()
        #expect(run.stats.echoMoves == 0)
        #expect(run.stats.cancellerResets == 0)
        #expect(run.erle > 25, "ERLE \(run.erle) dB")
        let locked = try #require(run.lockedAt)
        // A search that moved with every creep of the report found the echo only later.
        var everyMove = VoiceProcessingTuning()
        everyMove.alignment.searchMoveMilliseconds = 0
        let moving = try cancelWithRecordedReports(tuning: everyMove)
        #expect(locked < (moving.lockedAt ?? 10), "locked at \(locked) s, \(moving.lockedAt ?? -1) s with every move")
    }

    @Test("A device step the echo makes too is followed, without a reset")
    func realDeviceStep() throws {
        // The echo moves from 70 to 85 ms at 4 s; the report follows 0.1 s later.
        let step = { (start: Int) in start < 4 * 16000 + 1600 ? 1120 : 1360 }
        // The detector's own search finds the move first,
        let found = try cancel(movedEcho: 85, report: step)
        // and with it off (no correlation is that high) the report's step, tested, is followed.
        var searchOff = VoiceProcessingTuning()
        searchOff.echoShift.minimumCorrelation = 1
        let reported = try cancel(movedEcho: 85, tuning: searchOff, report: step)
        for run in [found, reported] {
            #expect(run.stats.cancellerResets == 0)
            #expect(run.stats.echoMoves == 1)
            #expect(abs(run.stats.referenceDelayMs - 81) < 1, "reference at \(run.stats.referenceDelayMs) ms")
            #expect(run.erle > 20, "ERLE \(run.erle) dB")
        }
    }

    @Test("A 48 kHz device runs through 16 kHz processing and cancels echo")
    func deviceRate48k() throws {
        let unit = try Self.unit { $0.deviceSampleRate = 48000; $0.maximumFramesPerPeriod = 960; $0.agcEnabled = false }
        let scene = try echoScene(seconds: 4, sampleRate: 48000)
        let out = run(unit, far: VPSignals.pcm(scene.far), mic: VPSignals.pcm(scene.mic), period: 960)
        #expect(out.count == scene.mic.count / 960 * 960)
        let tail = (2 * 48000)..<(4 * 48000)
        let erle = VPSignals.erle(echo: scene.echo, output: out.map { Float($0) / 32768 }, range: tail)
        #expect(erle > 15, "ERLE \(erle) dB")
        let latency = unit.statistics.addedLatencyMs
        #expect(latency > 10, "added latency \(latency) ms")
        #expect(latency < 14, "added latency \(latency) ms")
    }

    /// At 48 kHz the unit resamples both ways around the 16 kHz processing; that path must not allocate either.
    @Test("Processing allocates nothing once running, with and without resampling", arguments: [16000, 48000])
    func noAllocation(deviceRate: Int) throws {
        let period = deviceRate / 50
        let unit = try Self.unit { $0.deviceSampleRate = deviceRate; $0.maximumFramesPerPeriod = period }
        let scene = try echoScene(seconds: 4, sampleRate: deviceRate)
        var far = VPSignals.pcm(scene.far), mic = VPSignals.pcm(scene.mic)
        let second = deviceRate
        // Warm up (the first estimator hops, the canceller's first frames).
        _ = run(unit, far: Array(far[..<(2 * second)]), mic: Array(mic[..<(2 * second)]), period: period)
        unit.isAGCEnabled = false
        unit.isInputMuted = true
        let before = AllocationCounter.thisThread
        far.withUnsafeBufferPointer { f in
            mic.withUnsafeMutableBufferPointer { m in
                for start in stride(from: 2 * second, to: 4 * second, by: period) {
                    unit.process(capture: UnsafeMutableBufferPointer(rebasing: m[start..<(start + period)]),
                                 render: UnsafeBufferPointer(rebasing: f[start..<(start + period)]),
                                 timing: VoiceProcessingTiming(deviceDelayFrames: period + period / 2))
                }
            }
        }
        let after = AllocationCounter.thisThread
        #expect(AllocationCounter.isActive)
        #expect(after - before == 0, "\(after - before) allocations in 2 s of processing at \(deviceRate) Hz")
        _ = far.count
    }
}

/// Converts test signals between rates with SpeexDSP (through the unit's own resampler type).
enum SpeexResamplerForTests {
    static func make(from input: Int, to output: Int) throws -> ([Float]) -> [Float] {
        let r = try Resampler(from: input, to: output)
        return { x in
            let pcm = VPSignals.pcm(x)
            var out = [Int16](repeating: 0, count: x.count * output / input + 64)
            let n = pcm.withUnsafeBufferPointer { i in
                out.withUnsafeMutableBufferPointer { o in r.convert(i.baseAddress!, pcm.count, into: o.baseAddress!, capacity: o.count) }
            }
            return out[..<n].map { Float($0) / 32768 }
        }
    }
}
