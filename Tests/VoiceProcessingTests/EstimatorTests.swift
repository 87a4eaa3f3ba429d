import DSP
import Platform
import AudioAnalysis
import Simulation
import Testing
import TestSupport
@testable import VoiceProcessing

private let smallRoom = ShoeboxRoom(size: Point3(3.2, 2.6, 2.4), rt60: 0.2)

/// Runs a delay estimator (and a drift estimator) over far-end speech and its echo.
/// The drift estimator is fed the tracked delay, as the unit does, or with `followPeak` the peak's.
private func estimate(bulkDelay: Double, driftPPM: Double, seconds: Double, processingRate: Int = 16000,
                      impulseResponse: [Float]? = nil, followPeak: Bool = false)
    throws -> (delays: [DelayEstimator.Estimate], drift: DriftEstimator) {
    let far16 = try VPSignals.speech(Fixtures.englishFemale, seconds: seconds)
    let far: [Float]
    if processingRate == 16000 {
        far = far16
    } else {
        // Upsample by repetition plus a short smoothing: enough band-limited content for the test.
        far = far16.flatMap { [Float](repeating: $0, count: processingRate / 16000) }
    }
    // A small room (loudspeaker 0.343 m from the microphone: 1 ms of direct path) after the bulk
    // delay, plus noise 40 dB down.
    let room = impulseResponse ?? smallRoom.impulseResponse(source: Point3(1.0, 1.2, 1.1), microphone: Point3(1.343, 1.2, 1.1),
                                                            sampleRate: processingRate, length: 0.08).map { $0 * 2 }
    let path = EchoPathConfiguration(sampleRate: processingRate, impulseResponse: room, bulkDelay: bulkDelay, driftPPM: driftPPM)
    let echo = try EchoPath.render(path, signal: far)
    let noise = Tone.noise(count: far.count, rms: 0.001, seed: 5)
    let mic = zip(echo, noise).map { $0 + $1 }
    let estimator = DelayEstimator(processingRate: processingRate, maximumLag: 0.5)
    let drift = DriftEstimator(sampleRate: processingRate)
    let frame = processingRate / 100
    var found: [DelayEstimator.Estimate] = []
    far.withUnsafeBufferPointer { f in
        mic.withUnsafeBufferPointer { m in
            for start in stride(from: 0, to: far.count - frame, by: frame) {
                estimator.pushRender(f.baseAddress! + start, frame)
                if let e = estimator.pushCapture(m.baseAddress! + start, frame), e.confidence >= estimator.confident {
                    found.append(e)
                    if followPeak {
                        drift.add(time: e.time, delay: e.delay)
                    } else if let tracked = e.trackedDelay {
                        drift.add(time: e.time, delay: tracked)
                    }
                }
            }
        }
    }
    return (found, drift)
}

/// Decaying noise (RT60 0.3 s, 0.1 s long) from the first sample: a diffuse room with no direct path.
private func diffuseResponse(seed: UInt64) -> [Float] {
    var random = SeededRandom(seed: seed)
    return (0..<1600).map { i in Float(random.gaussian() * 0.3 * Math.pow(10, -3 * Double(i) / (0.3 * 16000))) }
}

@Suite("Delay and drift estimation")
struct EstimatorTests {
    @Test("The delay estimator recovers 0 to 300 ms within 2 ms", arguments: [0.0, 0.02, 0.075, 0.15, 0.3])
    func recoversDelay(bulk: Double) throws {
        let (delays, _) = try estimate(bulkDelay: bulk, driftPPM: 0, seconds: 4)
        let truth = (bulk + 0.001) * 16000  // bulk delay + the room's direct path
        #expect(delays.count >= 10, "only \(delays.count) confident estimates")
        let last = try #require(delays.last)
        #expect(abs(last.delay - truth) <= 32, "estimated \(last.delay / 16) ms, true \(truth / 16) ms")
        // Every confident estimate after the first second agrees.
        for e in delays where e.time > 16000 { #expect(abs(e.delay - truth) <= 32) }
    }

    @Test("In a diffuse room the onset marks where the echo starts, before the peak; in an image room it is the peak")
    func onsetBeforeADiffusePeak() throws {
        // Decaying noise (RT60 0.3 s) from the first sample: the echo starts at the bulk delay,
        // and its strongest tap, where the correlation peaks, may come several ms later.
        let (delays, _) = try estimate(bulkDelay: 0.15, driftPPM: 0, seconds: 4, impulseResponse: diffuseResponse(seed: 11))
        let last = try #require(delays.last)
        let start = 0.15 * 16000
        #expect(last.onset <= last.delay)
        #expect(abs(last.onset - start) <= 40, "onset \(last.onset / 16) ms, peak \(last.delay / 16) ms, echo starts at 150 ms")
        let (image, _) = try estimate(bulkDelay: 0.15, driftPPM: 0, seconds: 4)
        let direct = try #require(image.last)
        #expect(direct.delay - direct.onset <= 32, "image room: onset \(direct.onset / 16) ms, peak \(direct.delay / 16) ms")
    }

    @Test("The delay estimator works at 48 kHz")
    func recoversDelayAt48k() throws {
        let (delays, _) = try estimate(bulkDelay: 0.1, driftPPM: 0, seconds: 3, processingRate: 48000)
        let last = try #require(delays.last)
        #expect(abs(last.delay - 0.101 * 48000) <= 96, "estimated \(last.delay / 48) ms")
    }

    @Test("The drift estimator recovers +-100 ppm within 5 ppm", arguments: [100.0, -100.0, 0.0])
    func recoversDrift(ppm: Double) throws {
        let (_, drift) = try estimate(bulkDelay: 0.02, driftPPM: ppm, seconds: 12)
        #expect(drift.isConfident)
        #expect(abs(drift.ppm - ppm) <= 5, "estimated \(drift.ppm) ppm")
        // Only a drift that is really there is compensated (the reference is then read
        // through the fractional interpolator); the estimate's noise around 0 is not.
        if ppm == 0 {
            #expect(drift.significantSlope == 0, "noise of \(drift.ppm) ppm taken for drift")
        } else {
            #expect(drift.significantSlope == drift.slope)
        }
    }

    @Test("In a diffuse room the drift is read from the whole response's shift, not from a peak that jumps between taps")
    func driftInADiffuseRoom() throws {
        let diffuse = diffuseResponse(seed: 11)
        let (delays, drift) = try estimate(bulkDelay: 0.02, driftPPM: 50, seconds: 12, impulseResponse: diffuse)
        #expect(drift.isConfident)
        #expect(abs(drift.ppm - 50) <= 5, "estimated \(drift.ppm) ppm")
        // The tracked delay moves smoothly: 50 ppm is 0.1 sample per 128 ms hop.
        let tracked = delays.compactMap(\.trackedDelay)
        for (a, b) in zip(tracked, tracked.dropFirst()) { #expect(abs(b - a) < 1, "tracked delay jumped \(a) -> \(b)") }
    }

    @Test("A step in the delay is not taken for drift")
    func stepIsNotDrift() {
        let drift = DriftEstimator(sampleRate: 16000)
        // 6 s of a steady 100-sample delay, then a 10-sample step (the loudspeaker moved).
        for hop in 0..<48 { drift.add(time: hop * 2048, delay: 100 + Double(hop % 3) * 0.05) }
        #expect(drift.isConfident && abs(drift.ppm) < 1)
        for hop in 48..<60 { drift.add(time: hop * 2048, delay: 110) }
        #expect(!drift.isConfident || abs(drift.ppm) < 5, "a step read as \(drift.ppm) ppm")
    }

    @Test("Less than a sample of movement over the fit is estimator wander, not drift; a real 50 ppm counts within 2 s")
    func subSampleWanderIsNotDrift() {
        // Delay estimates creeping by 0.6 samples over 2.3 s (a diffuse room's estimates wander
        // so): a tight fit of about -16 ppm, but the echo has not moved by a whole sample.
        let wander = DriftEstimator(sampleRate: 16000)
        for hop in 0..<19 { wander.add(time: hop * 2048, delay: 108 - Double(hop) * 0.033) }
        #expect(wander.isConfident && abs(wander.ppm) > 10)
        #expect(wander.significantSlope == 0)
        // 50 ppm: 0.1 sample per 2048-sample hop, 1.8 samples over the same span.
        let real = DriftEstimator(sampleRate: 16000)
        for hop in 0..<19 { real.add(time: hop * 2048, delay: 108 + Double(hop * 2048) * 50e-6) }
        #expect(real.isConfident && abs(real.significantSlope * 1e6 - 50) < 1)
    }

    @Test("A large drift is followed from the minimum span on, despite the estimator's jitter")
    func largeDriftIsFollowedEarly() {
        // 150 ppm (0.31 sample per 2048-sample hop) measured with 0.4 samples of jitter, what
        // the estimator gives on speech at that drift. After 2.4 s the slope's standard error is
        // about 8 ppm: too loose for a drift of a few ppm, but a tenth of this one.
        var random = SeededRandom(seed: 3)
        let drift = DriftEstimator(sampleRate: 16000)
        for hop in 0..<20 { drift.add(time: hop * 2048, delay: 90 + Double(hop * 2048) * 150e-6 + 0.4 * random.gaussian()) }
        #expect(drift.isConfident, "not confident after 2.4 s: \(drift.ppm) ppm +- \(drift.slopeError * 1e6)")
        #expect(abs(drift.significantSlope * 1e6 - 150) < 20, "estimated \(drift.ppm) ppm")
        // The same jitter without drift is not taken for one.
        var again = SeededRandom(seed: 3)
        let still = DriftEstimator(sampleRate: 16000)
        for hop in 0..<20 { still.add(time: hop * 2048, delay: 90 + 0.4 * again.gaussian()) }
        #expect(still.significantSlope == 0, "jitter taken for \(still.ppm) ppm")
    }

    @Test("Alignment keeps a small residual delay and re-places a large one")
    func alignmentBand() {
        let a = EchoAlignment(sampleRate: 16000, fixedDelay: nil)
        // 8 ms of acoustic delay: inside the band, no realignment (the canceller keeps its filter).
        #expect(!a.updateEstimate(delay: 128, confidence: 20, at: 16000))
        #expect(!a.updateEstimate(delay: 128.5, confidence: 20, at: 18048))
        #expect(a.delay(at: 20000) == 0 && a.isLocked)
        // 150 ms: far outside; placed with the 4 ms margin, and the canceller is told to reset.
        #expect(!a.updateEstimate(delay: 2400, confidence: 20, at: 20000))
        #expect(a.updateEstimate(delay: 2400.4, confidence: 20, at: 22048))
        #expect(abs(a.delay(at: 22048) - (2400.4 - 64)) < 1e-9)
        // An onset well before the peak (a diffuse room) puts the reference 2 ms before the onset.
        let b = EchoAlignment(sampleRate: 16000, fixedDelay: nil)
        _ = b.updateEstimate(delay: 2560, onset: 2400, confidence: 20, at: 20000)
        #expect(b.updateEstimate(delay: 2560.3, onset: 2400, confidence: 20, at: 22048))
        #expect(abs(b.delay(at: 22048) - (2400 - 32)) < 1e-9)
        // A weak peak is ignored.
        #expect(!a.updateEstimate(delay: 500, confidence: 3, at: 24000))
        // A device delay step moves the reference by the same amount, without a reset.
        a.updateDevice(delay: 0, at: 25000)
        for i in 0..<4 { #expect(!a.updateDevice(delay: 320, at: 26000 + i * 160)) }
        #expect(a.updateDevice(delay: 320, at: 27000))
        #expect(abs(a.delay(at: 27000) - (2400.4 - 64 + 320)) < 1e-9)
    }

    @Test("With drift followed, the reference stays where it can be read between samples")
    func interpolableReference() {
        let a = EchoAlignment(sampleRate: 16000, fixedDelay: nil, followsDrift: true)
        // No device delay: the reference waits 32 samples (a read between samples takes 16 past the point).
        a.updateDevice(delay: 0, at: 0)
        #expect(a.delay(at: 0) == 32)
        // An echo 100 samples late is inside the band: no move.
        #expect(!a.updateEstimate(delay: 100, confidence: 20, at: 16000))
        #expect(!a.updateEstimate(delay: 100, confidence: 20, at: 18048))
        #expect(a.delay(at: 18048) == 32)
        #expect(!a.keepInterpolable(at: 18048))
        // A negative drift brings the reference within 16 samples: it moves back, 4 ms before the echo.
        a.setSlope(-50e-6, at: 20000)
        #expect(!a.keepInterpolable(at: 200_000))
        #expect(a.keepInterpolable(at: 420_000))
        #expect(a.delay(at: 420_000) == 100 - 64)

        // The floor gives way wherever the echo could come less than 2 ms after it: an echo
        // estimated 20 samples late,
        let close = EchoAlignment(sampleRate: 16000, fixedDelay: nil, followsDrift: true)
        #expect(!close.updateEstimate(delay: 20, confidence: 20, at: 16000))
        _ = close.updateEstimate(delay: 20, confidence: 20, at: 18048)
        #expect(close.delay(at: 18048) == 0)
        close.setSlope(50e-6, at: 20000)
        #expect(!close.keepInterpolable(at: 20000))
        // a device that reports 20 samples of delay before the estimator locks,
        let device = EchoAlignment(sampleRate: 16000, fixedDelay: nil, followsDrift: true)
        device.updateDevice(delay: 20, at: 0)
        #expect(device.delay(at: 0) == 0)
        // and a device delay that steps down to 20 samples under a locked estimate.
        let step = EchoAlignment(sampleRate: 16000, fixedDelay: nil, followsDrift: true)
        step.updateDevice(delay: 200, at: 0)
        _ = step.updateEstimate(delay: 200, confidence: 20, at: 16000)
        #expect(!step.updateEstimate(delay: 200, confidence: 20, at: 18048))
        #expect(step.delay(at: 18048) == 136)
        for i in 0..<4 { #expect(!step.updateDevice(delay: 20, at: 20000 + i * 160)) }
        #expect(step.updateDevice(delay: 20, at: 21000))
        #expect(step.delay(at: 21000) == 0)
    }

    @Test("Device delay aligns the reference before the estimator locks")
    func deviceDelayAlignment() {
        let a = EchoAlignment(sampleRate: 16000, fixedDelay: nil)
        a.updateDevice(delay: 1600, at: 0)
        #expect(a.delay(at: 0) == 1600 - 64)
        // A period of jitter that does not persist is ignored; small changes are smoothed.
        a.updateDevice(delay: 1760, at: 160)
        #expect(a.delay(at: 160) == 1600 - 64)
        a.updateDevice(delay: 1616, at: 320)
        #expect(abs(a.delay(at: 320) - (1600 + 0.02 * 16 - 64)) < 1e-9)
        let fixed = EchoAlignment(sampleRate: 16000, fixedDelay: 480)
        fixed.updateDevice(delay: 1600, at: 0)
        #expect(fixed.delay(at: 0) == 480)
    }

    @Test("The search moves only when its start is more than the move away from the last one asked for, and after a reset")
    func searchStartHysteresis() {
        // 160 processing samples (10 ms at 16 kHz); the decimated grid is 4 samples.
        let e = DelayEstimator(processingRate: 16000, maximumLag: 0.5, searchMove: 160)
        e.setSearchStart(1600)
        #expect(e.lagMinimum == 400)
        e.setSearchStart(1760)  // 160 off: stays
        #expect(e.lagMinimum == 400)
        e.setSearchStart(1440)
        #expect(e.lagMinimum == 400)
        e.setSearchStart(1764)  // 164 off the last asked for: moves
        #expect(e.lagMinimum == 441)
        e.setSearchStart(1700)  // measured from 1764, not from where it started
        #expect(e.lagMinimum == 441)
        e.reset()
        e.setSearchStart(1700)
        #expect(e.lagMinimum == 425)
    }
}
