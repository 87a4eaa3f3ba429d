import DSP
import SpeexDSP
import Synchronization

/// The uplink voice processing of a call, run by the I/O thread once per period, in the spirit
/// of Apple's voice-processing I/O unit.
///
/// Per period the I/O thread hands over the capture it just read and the render it just wrote,
/// and three stages run over them, as WebRTC's audio processing runs its submodules:
///
/// 1. `RateAdapter` brings both to the processing rate (SpeexDSP resampler, when the device runs
///    at another rate) and cuts the capture into 10 ms blocks;
/// 2. for each block, `EchoStage` reads the render at the echo's delay (device delay refined by
///    the delay estimator, clock drift followed by fractional reads), removes the echo with the
///    linear canceller (``EchoCanceller``, SpeexDSP MDF by default), watches its health, and
///    keeps the near end safe (no cancelling without an echo path); the echo gate holds the echo
///    back until the canceller has converged, and then what it leaves of it;
/// 3. `PostFilter`, SpeexDSP's preprocessor, suppresses residual echo and noise, applies AGC and
///    detects voice;
///
/// and `RateAdapter` puts the result back, at the device rate, into the capture buffer.
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

    private let adapter: RateAdapter
    let echo: EchoStage
    private let postFilter: PostFilter
    private let activity: ActivityTracker
    private let scratch: ProcessingScratch
    private var wasTransparent = false
    /// The ducking gain last stored for other threads (dB), so it is converted only when it changes.
    private var publishedGainDB = Double.nan

    /// Builds the unit and everything it will need; nothing is allocated after this.
    public init(configuration c: VoiceProcessingConfiguration, canceller custom: (any EchoCanceller)? = nil) throws(VoiceProcessingError) {
        try c.validate()
        configuration = c
        let fp = c.processingSampleRate
        let block = fp * c.blockMilliseconds / 1000
        let canceller = try c.makeCanceller(block: block, custom: custom)
        scratch = ProcessingScratch(capacity: RateAdapter.scratchCapacity(c, block: block), block: block)
        adapter = try RateAdapter(configuration: c, block: block, scratch: scratch)
        postFilter = try PostFilter(configuration: c, block: block, canceller: canceller)
        let gated = c.suppressesResidualEcho && canceller is SpeexMDFEchoCanceller
        echo = EchoStage(configuration: c, block: block, canceller: canceller, gated: gated, scratch: scratch)
        activity = ActivityTracker(blockSeconds: Double(c.blockMilliseconds) / 1000, sampleRate: fp, tuning: c.tuning.activity)

        shared.agc.store(c.agcEnabled, ordering: .relaxed)
        shared.mode.store(c.mode.rawValue, ordering: .relaxed)
        shared.duckingAdvanced.store(c.ducking.isAdvanced, ordering: .relaxed)
        shared.duckingLevel.store(c.ducking.level.rawValue, ordering: .relaxed)
    }

    // MARK: Processing (I/O thread)

    /// Processes one period: `capture` (the period just read) in place, against `render` (the
    /// period just written to the playback device). Both hold the same number of sample frames, at
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
        precondition(linearOutput == nil || (linearOutput!.count == n && !adapter.convertsRate),
                     "the linear output needs equal rates and the period's length")
        guard n > 0, let captureBase = capture.baseAddress, let renderBase = render.baseAddress else { return }
        guard mode.isProcessing else {
            wasTransparent = true
            return
        }
        if wasTransparent { restart() }
        postFilter.applyAGC(isAGCEnabled)

        // 1. Render to the processing rate, into the echo stage and the activity tracker.
        let renderCount = adapter.render(renderBase, n)
        for i in 0..<renderCount { scratch.floats[i] = Float(scratch.render[i]) * (1 / 32768) }
        echo.pushRender(scratch.floats, renderCount)
        activity.render(scratch.floats, renderCount)

        // 2. Capture to the processing rate, queued for blocks; the device delay at that rate.
        adapter.pushCapture(UnsafePointer(captureBase), n)
        if case .automatic = configuration.delay {
            let rates = Double(configuration.processingSampleRate) / Double(configuration.deviceSampleRate)
            echo.updateDevice(delay: Double(max(0, timing.deviceDelayFrames)) * rates)
        }

        // 3. Blocks.
        while adapter.popBlock(into: scratch.blockIn) { processBlock() }

        // 4. Back to the device, with whatever latency framing and rate conversion need.
        adapter.deliver(into: isBypassed ? nil : captureBase, n, linearOutput: linearOutput?.baseAddress)
        publish()
    }

    private func processBlock() {
        echo.cancel()
        adapter.pushLinear(scratch.blockOut)
        // From here on the capture is the canceller's input as it takes it (through its DC notch).
        postFilter.analyse(capture: scratch.notched, linear: scratch.blockOut)
        echo.protectNearEnd()
        postFilter.follow(echoPath: echo.hasEchoPath)
        let speech = postFilter.process(scratch.blockOut, capture: scratch.notched, captureEnergy: echo.health.captureEnergy,
                                        held: echo.isHoldingEcho)
        activity.nearEnd(speech: speech, muted: isInputMuted)
        if isInputMuted { scratch.blockOut.update(repeating: 0, count: adapter.block) }
        adapter.pushProcessed(scratch.blockOut)
        shared.blocks.add(1, ordering: .relaxed)
    }

    /// Starts the streams over after a stretch in a transparent mode: the device and its delays
    /// may have changed meanwhile, so alignment and canceller start from scratch too.
    private func restart() {
        wasTransparent = false
        adapter.reset()
        echo.restart()
        postFilter.restart()
    }

    /// Stores the statistics for other threads.
    private func publish() {
        let alignment = echo.alignment
        SharedState.store(alignment.echoDelay ?? alignment.deviceDelay, shared.estimatedDelay)
        SharedState.store(alignment.deviceDelay, shared.deviceDelay)
        SharedState.store(alignment.delay(at: echo.captureIndex), shared.referenceDelay)
        // The drift being compensated (the last confident estimate), nil before the first.
        SharedState.store(alignment.hasSlope ? alignment.slope / (1 - alignment.slope) * 1e6 : nil, shared.drift)
        SharedState.store(echo.health.erleDB, shared.erle)
        shared.resets.store(echo.resets, ordering: .relaxed)
        shared.echoMoves.store(echo.echoMoves, ordering: .relaxed)
        shared.echoPath.store(echo.echoPath.state.rawValue, ordering: .relaxed)
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
        SharedState.store(adapter.queuedSeconds + adapter.fixedLatency, shared.addedLatency)
    }
}

// The unit is handed from the thread that creates it to the I/O thread. Its I/O-thread state
// is touched only by `process`, which one thread calls at a time (the documented contract,
// like any real-time callback's); everything other threads touch is in `SharedState`, atomics.
extension VoiceProcessingUnit: @unchecked Sendable {}
