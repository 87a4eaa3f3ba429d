import DSP
import SpeexDSP
import Synchronization

/// The uplink voice processing of a call, run by the I/O thread once per period, in the spirit
/// of Apple's voice-processing I/O unit.
///
/// Per period the I/O thread hands over the capture it just read and the render it just wrote:
///
/// 1. both are converted to the processing rate (SpeexDSP resampler, when the device runs at
///    another rate); the render goes into a history ring;
/// 2. the capture is cut into 10 ms frames; for each, the reference is read from the ring at the
///    echo's delay (`EchoAlignment`: device delay, refined by `DelayEstimator`, with clock
///    drift from `DriftEstimator` followed by fractional, windowed-sinc reads);
/// 3. the echo canceller (``EchoCanceller``, SpeexDSP MDF by default) removes the echo; `CancellerHealth`
///    watches its input and output energies (ERLE, divergence); until the canceller has
///    converged (at the start, after a reset) `StartupEchoGate` holds the echo back;
/// 4. the SpeexDSP preprocessor suppresses residual echo and noise, applies AGC and detects voice;
/// 5. the result goes back, at the device rate, into the capture buffer.
///
/// In bypass the capture is left bit-exact (the processing still runs, so nothing has to
/// re-converge when bypass ends); when muted the capture becomes zeros while voice activity is
/// still detected and reported (``VoiceProcessingStatistics/speechWhileMutedEvents``). In modes
/// other than voice or video chat the unit is transparent and does nothing.
///
/// Thread safety: create and configure it on any thread; then exactly one thread (the I/O
/// thread) calls ``process(capture:render:timing:)``. The control properties (``isBypassed``,
/// ``isInputMuted``, ``isAGCEnabled``, ``mode``, ``ducking``) and ``statistics`` may be used from
/// any thread at any time: they are atomics. `process` does not allocate, lock, log or touch
/// Swift concurrency; all its memory is allocated in `init`.
public final class VoiceProcessingUnit {
    public let configuration: VoiceProcessingConfiguration
    let shared = SharedState()

    // MARK: I/O-thread state (touched only by `process` and what it calls)

    private let canceller: any EchoCanceller
    private var preprocessor: SpeexPreprocessor
    private let captureDown: Resampler?
    private let renderDown: Resampler?
    private let captureUp: Resampler?
    private let frame: Int
    private let inFIFO: SampleFIFO<Int16>
    private let outFIFO: SampleFIFO<Int16>
    private let linearFIFO: SampleFIFO<Int16>
    private let deviceFIFO: SampleFIFO<Int16>?
    private let ring: ReferenceRing
    private let estimator: DelayEstimator?
    private let drift: DriftEstimator?
    private let alignment: EchoAlignment
    private let health: CancellerHealth
    /// Whether the microphone hears the far end at all: with no echo path, nothing is gated or suppressed.
    private let echoPath: EchoPathDetector
    /// The canceller whose state the preprocessor reads for residual echo suppression (nil: none),
    /// and whether it is attached now (it is detached while the echo path is absent).
    private let suppressionSource: SpeexMDFEchoCanceller?
    private var isSuppressionAttached = false
    /// Whether the capture, not the canceller's output, goes on to the preprocessor (no echo path).
    private var isPassingCapture = false
    /// The canceller's own DC notch, for the capture passed on without it.
    private var notch: DCNotch
    /// Suppresses the echo until the canceller has converged (nil without residual echo suppression).
    private let startupGate: StartupEchoGate?
    /// How far ahead of the reference the startup gate also looks, in samples (40 ms).
    private let startupGateLead: Double
    private let activity: ActivityTracker
    private var speechDetector: SpeechDetector

    private let scratch: ProcessingScratch

    /// Capture samples (processing rate) consumed into frames so far.
    private var captureIndex = 0
    private var appliedAGC: Bool
    private var wasTransparent = false
    /// The ducking gain last stored for other threads (dB), so it is converted only when it changes.
    private var publishedGainDB = Double.nan
    /// Latency that does not change while running, in seconds: the preprocessor's frame of
    /// overlap and the resamplers' delay.
    private let fixedLatency: Double

    /// Builds the unit and everything it will need; nothing is allocated after this.
    public init(configuration c: VoiceProcessingConfiguration, canceller custom: (any EchoCanceller)? = nil) throws(VoiceProcessingError) {
        try c.validate()
        configuration = c
        let fp = c.processingSampleRate, fd = c.deviceSampleRate
        frame = Int(Double(fp) * c.frameDuration)
        canceller = try c.makeCanceller(block: frame, custom: custom)
        do {
            preprocessor = try c.makePreprocessor(frameSize: frame, sampleRate: fp)
            suppressionSource = c.suppressesResidualEcho ? canceller as? SpeexMDFEchoCanceller : nil
            if let suppressionSource {
                preprocessor.attach(suppressionSource.canceller)
                isSuppressionAttached = true
            }
            let resamplers = try c.makeResamplers()
            (captureDown, renderDown, captureUp) = (resamplers?.captureDown, resamplers?.renderDown, resamplers?.captureUp)
        } catch { throw VoiceProcessingError("SpeexDSP: \(error)") }
        appliedAGC = c.agcEnabled
        fixedLatency = Double(frame) / Double(fp)
            + (captureDown.map { Double($0.outputLatency) / Double(fp) } ?? 0)
            + (captureUp.map { Double($0.outputLatency) / Double(fd) } ?? 0)

        // Buffers: a period at either rate plus resampler slack and a frame of framing.
        let periodAtProcessing = (c.maximumFramesPerPeriod * fp + fd - 1) / fd
        let scratchCapacity = max(periodAtProcessing, c.maximumFramesPerPeriod) + 2 * frame + 64
        inFIFO = SampleFIFO(capacity: scratchCapacity + frame)
        outFIFO = SampleFIFO(capacity: 2 * scratchCapacity + 2 * frame)
        linearFIFO = SampleFIFO(capacity: 2 * scratchCapacity + 2 * frame)
        deviceFIFO = fd != fp ? SampleFIFO(capacity: 2 * scratchCapacity + 2 * frame) : nil
        scratch = ProcessingScratch(capacity: scratchCapacity, block: frame)
        notch = DCNotch(sampleRate: fp)

        let fixed: Double? = if case .fixed(let seconds) = c.delay { seconds * Double(fp) } else { nil }
        alignment = EchoAlignment(sampleRate: fp, fixedDelay: fixed, followsDrift: c.compensatesDrift)
        if fixed == nil {
            estimator = DelayEstimator(processingRate: fp, maximumLag: c.maximumEchoDelay)
            drift = c.compensatesDrift ? DriftEstimator(sampleRate: fp) : nil
        } else {
            estimator = nil
            drift = nil
        }
        // History for the largest delay the estimator can report, plus a period.
        let maxDelay = (fixed ?? 0) + Double(estimator?.maximumMinimumLag ?? 0) + c.maximumEchoDelay * Double(fp)
        ring = ReferenceRing(span: Int(maxDelay) + 2 * scratchCapacity)
        health = CancellerHealth(frameSize: frame, sampleRate: fp)
        echoPath = EchoPathDetector(frameSize: frame, sampleRate: fp)
        startupGate = c.suppressesResidualEcho && canceller is SpeexMDFEchoCanceller
            ? StartupEchoGate(frameSize: frame, sampleRate: fp) : nil
        startupGateLead = 0.04 * Double(fp)
        activity = ActivityTracker(frameDuration: c.frameDuration, sampleRate: fp)
        speechDetector = SpeechDetector(start: preprocessor.speechProbabilityStart,
                                        continuing: preprocessor.speechProbabilityContinue)

        shared.agc.store(c.agcEnabled, ordering: .relaxed)
        shared.mode.store(c.mode.rawValue, ordering: .relaxed)
        shared.duckingAdvanced.store(c.ducking.isAdvanced, ordering: .relaxed)
        shared.duckingLevel.store(c.ducking.level.rawValue, ordering: .relaxed)
    }

    // MARK: Processing (I/O thread)

    /// Processes one period: `capture` (the period just read) in place, against `render` (the
    /// period just written to the playback device). Both hold the same number of frames, at
    /// most ``VoiceProcessingConfiguration/maximumFramesPerPeriod``.
    public func process(capture: UnsafeMutableBufferPointer<Int16>, render: UnsafeBufferPointer<Int16>,
                        timing: VoiceProcessingTiming) {
        process(capture: capture, render: render, timing: timing, linearOutput: nil)
    }

    /// ``process(capture:render:timing:)`` that also copies the linear canceller's output (before
    /// the preprocessor) to `linearOutput`, for benches. Needs equal device and processing rates.
    public func process(capture: UnsafeMutableBufferPointer<Int16>, render: UnsafeBufferPointer<Int16>,
                        timing: VoiceProcessingTiming, linearOutput: UnsafeMutableBufferPointer<Int16>?) {
        let n = capture.count
        precondition(render.count == n, "capture and render periods must have the same length")
        precondition(n <= configuration.maximumFramesPerPeriod, "period longer than maximumFramesPerPeriod")
        precondition(linearOutput == nil || (linearOutput!.count == n && deviceFIFO == nil),
                     "the linear output needs equal rates and the period's length")
        guard n > 0, let captureBase = capture.baseAddress, let renderBase = render.baseAddress else { return }
        guard mode.isProcessing else {
            wasTransparent = true
            return
        }
        if wasTransparent { restart() }
        applyControls()

        // 1. Render to the processing rate, into the history ring and the delay estimator.
        let fp = configuration.processingSampleRate, fd = configuration.deviceSampleRate
        let renderCount = renderDown.convert(renderBase, n, into: scratch.render, capacity: scratch.capacity)
        for i in 0..<renderCount { scratch.floats[i] = Float(scratch.render[i]) * (1 / 32768) }
        ring.write(scratch.floats, renderCount)
        estimator?.pushRender(scratch.floats, renderCount)
        activity.render(scratch.floats, renderCount)

        // 2. Capture to the processing rate, queued for framing.
        let captureCount = captureDown.convert(UnsafePointer(captureBase), n, into: scratch.capture, capacity: scratch.capacity)
        inFIFO.push(scratch.capture, captureCount)

        // 3. The device delay, at the processing rate.
        if case .automatic = configuration.delay {
            let reported = Double(max(0, timing.deviceDelayFrames)) * Double(fp) / Double(fd)
            alignment.updateDevice(delay: reported, at: captureIndex)
            if let device = alignment.deviceDelay {
                estimator?.setSearchStart(Int(device) - 50 * fp / 1000)
            }
        }

        // 4. Frames.
        while inFIFO.count >= frame { processFrame() }

        // 5. Back to the device, with whatever latency framing and rate conversion need.
        if let deviceFIFO, let captureUp {
            let ready = outFIFO.count
            outFIFO.pop(into: scratch.processed, ready)
            let produced = captureUp.convert(scratch.processed, ready, into: scratch.device, capacity: 2 * scratch.capacity)
            deviceFIFO.push(scratch.device, produced)
            if deviceFIFO.count < n {
                deviceFIFO.pushZeros(n - deviceFIFO.count)
            }
            deviceFIFO.pop(into: isBypassed ? scratch.device : captureBase, n)
        } else {
            if outFIFO.count < n {
                linearFIFO.pushZeros(n - outFIFO.count)
                outFIFO.pushZeros(n - outFIFO.count)
            }
            outFIFO.pop(into: isBypassed ? scratch.device : captureBase, n)
            linearFIFO.pop(into: linearOutput?.baseAddress ?? scratch.device, n)
        }
        publish()
    }

    /// The canceller's filter no longer fits the echo (it diverged, or the reference moved): start
    /// it over, with the startup gate holding the echo back until it has converged again.
    private func restartCanceller() {
        canceller.reset()
        startupGate?.rearm()
        health.reset()
        shared.resets.add(1, ordering: .relaxed)
    }

    private func processFrame() {
        inFIFO.pop(into: scratch.blockIn, frame)
        let n0 = captureIndex

        let d = readReference(at: n0)
        canceller.cancel(capture: UnsafeBufferPointer(start: scratch.blockIn, count: frame),
                         reference: UnsafeBufferPointer(start: scratch.blockReference, count: frame),
                         output: UnsafeMutableBufferPointer(start: scratch.blockOut, count: frame))
        // With no echo path the canceller's output is not used (below), so a divergence there
        // does not matter; resetting it would only put it back into its fastest adaptation.
        if health.update(capture: scratch.blockIn, reference: scratch.blockReference, output: scratch.blockOut) == .diverged
            && echoPath.state != .absent {
            restartCanceller()
        }
        echoPath.frame(farActive: health.isFarActive)
        estimateDelay(at: n0)

        if deviceFIFO == nil { linearFIFO.push(scratch.blockOut, frame) }  // the linear output exists without resampling only
        passCaptureWithoutEcho()
        if let startupGate, startupGate.isActive, echoPath.state != .absent {
            // The far end 40 ms ahead of the reference too, in case the delay (not yet estimated
            // at the start) is placed late and the echo comes before its reference.
            ring.read(from: Double(n0) - max(0, (d - startupGateLead).rounded(.down)), step: 1, count: frame, into: scratch.referenceFloat)
            startupGate.process(reference: scratch.blockReference, capture: scratch.blockIn, output: scratch.blockOut, leadingReference: scratch.referenceFloat)
        }
        _ = preprocessor.process(UnsafeMutableBufferPointer(start: scratch.blockOut, count: frame))
        let speech = speechDetector.update(probability: preprocessor.speechProbability)
        activity.nearEnd(speech: speech, muted: isInputMuted)
        if isInputMuted { scratch.blockOut.update(repeating: 0, count: frame) }
        outFIFO.push(scratch.blockOut, frame)
        captureIndex += frame
        shared.frames.add(1, ordering: .relaxed)
    }

    /// Reads the block's reference from the ring at the echo's delay (fractional when drifting)
    /// into `scratch.blockReference`; returns the delay used.
    private func readReference(at n0: Int) -> Double {
        var d = alignment.delay(at: n0)
        var step = 1 - alignment.slope
        // Without drift the reference is read at whole samples: a fraction of a sample of
        // delay is part of the echo path the canceller models anyway.
        if alignment.slope == 0 { d = d.rounded() }
        if d < Double(SincKernel.halfTaps) {
            d = d.rounded(.down)
            step = 1
        }
        ring.read(from: Double(n0) - d, step: step, count: frame, into: scratch.referenceFloat)
        for i in 0..<frame {
            scratch.blockReference[i] = Int16(clamping: Int((scratch.referenceFloat[i] * 32768).rounded()))
        }
        return d
    }

    /// Delay and drift, from the raw streams: the estimator's hop (when one completes) moves the
    /// alignment, tells the echo-path detector, and feeds the drift estimator.
    private func estimateDelay(at n0: Int) {
        guard let estimator else { return }
        for i in 0..<frame { scratch.captureFloat[i] = Float(scratch.blockIn[i]) * (1 / 32768) }
        if let e = estimator.pushCapture(scratch.captureFloat, frame) {
            echoPath.hop(confidence: e.confidence, cancellerERLE: health.erleDB)
            followEchoPath()
            // Without an echo path a chance peak may move the reference; the canceller's output
            // is not used then, and a real echo's first peak re-places it (and resets) anyway.
            if alignment.updateEstimate(delay: e.delay, onset: e.onset, confidence: e.confidence, at: e.time)
                && echoPath.state != .absent {
                restartCanceller()
            }
            if let drift, let tracked = e.trackedDelay {
                drift.add(time: e.time, delay: tracked)
                if drift.isConfident {
                    alignment.setSlope(drift.significantSlope, at: n0 + frame)
                    if alignment.keepInterpolable(at: n0 + frame) { restartCanceller() }
                }
            }
        }
    }

    /// Residual echo suppression only where there is an echo: SpeexDSP's follows the far end's
    /// activity through the canceller's state even when the microphone holds none of it, and
    /// then eats into the near end. Detached, the preprocessor's echo estimate is zero at once
    /// (noise suppression and AGC go on as before); attached again, it restarts from the
    /// canceller's current residual.
    private func followEchoPath() {
        guard let suppressionSource else { return }
        let wanted = echoPath.state != .absent
        guard wanted != isSuppressionAttached else { return }
        if wanted { preprocessor.attach(suppressionSource.canceller) } else { preprocessor.detachEchoCanceller() }
        isSuppressionAttached = wanted
    }

    /// With no echo path, the microphone goes on as it is: a canceller with nothing to cancel
    /// still adapts to chance correlations between the near end and the far end, and in echo-free
    /// double talk SpeexDSP's MDF then added a far-end-shaped error only 7 dB under the near end
    /// (`aecbench suite`, `echofree`). It keeps running on the side, so the echo-path detector
    /// and the canceller's ERLE still see an echo that appears. Switches crossfade over a frame.
    private func passCaptureWithoutEcho() {
        // The notch runs on every frame, so its state has settled whenever it is switched in.
        notch.process(scratch.blockIn, into: scratch.notched, count: frame)
        let pass = echoPath.state == .absent
        guard pass || isPassingCapture else { return }
        if pass == isPassingCapture {
            scratch.blockOut.update(from: scratch.notched, count: frame)
            return
        }
        let step = 1 / Float(frame)
        for i in 0..<frame {
            let w = pass ? step * Float(i + 1) : 1 - step * Float(i + 1)
            scratch.blockOut[i] = Int16(clamping: Int((w * Float(scratch.notched[i]) + (1 - w) * Float(scratch.blockOut[i])).rounded()))
        }
        isPassingCapture = pass
    }

    /// Applies control changes made by other threads.
    private func applyControls() {
        let agc = isAGCEnabled
        if agc != appliedAGC {
            // A ctl call; it cannot fail for a valid state (only a failure would build an error).
            try? preprocessor.setAGC(agc)
            appliedAGC = agc
        }
    }

    /// Starts the streams over after a stretch in a transparent mode: the device and its delays
    /// may have changed meanwhile, so alignment and canceller start from scratch too.
    private func restart() {
        wasTransparent = false
        inFIFO.removeAll()
        outFIFO.removeAll()
        linearFIFO.removeAll()
        deviceFIFO?.removeAll()
        ring.reset()
        estimator?.reset()
        drift?.reset()
        alignment.reset()
        health.reset()
        echoPath.reset()
        followEchoPath()
        isPassingCapture = false
        notch.reset()
        speechDetector.reset()
        canceller.reset()
        startupGate?.rearm()
        captureDown?.reset()
        renderDown?.reset()
        captureUp?.reset()
        captureIndex = 0
    }

    /// Stores the statistics for other threads.
    private func publish() {
        SharedState.store(alignment.echoDelay ?? alignment.deviceDelay, shared.estimatedDelay)
        SharedState.store(alignment.deviceDelay, shared.deviceDelay)
        SharedState.store(alignment.delay(at: captureIndex), shared.referenceDelay)
        // The drift being compensated (the last confident estimate), nil before the first.
        SharedState.store(alignment.hasSlope ? alignment.slope / (1 - alignment.slope) * 1e6 : nil, shared.drift)
        SharedState.store(health.erleDB, shared.erle)
        shared.echoPath.store(echoPath.state.rawValue, ordering: .relaxed)
        shared.voiceActive.store(activity.isNearEndActive, ordering: .relaxed)
        shared.mutedSpeechEvents.store(activity.mutedSpeechEvents, ordering: .relaxed)
        shared.speakingWhileMuted.store(activity.isSpeakingWhileMuted, ordering: .relaxed)
        let level = ducking
        let gainDB = level.isAdvanced && !activity.isConversationActive ? 0 : level.level.gainDB
        if gainDB != publishedGainDB {
            publishedGainDB = gainDB
            shared.otherAudioGain.store(Float(Math.pow(10, gainDB / 20)).bitPattern, ordering: .relaxed)
        }
        // Output queued beyond what the period took, plus the fixed latency of framing and resampling.
        let queued = Double(deviceFIFO?.count ?? outFIFO.count) / Double(configuration.deviceSampleRate)
        SharedState.store(queued + fixedLatency, shared.addedLatency)
    }
}

// The unit is handed from the thread that creates it to the I/O thread. Its I/O-thread state
// is touched only by `process`, which one thread calls at a time (the documented contract,
// like any real-time callback's); everything other threads touch is in `SharedState`, atomics.
extension VoiceProcessingUnit: @unchecked Sendable {}
