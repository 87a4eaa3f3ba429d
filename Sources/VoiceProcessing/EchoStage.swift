import DSP

/// The voice-processing unit's echo stage: the render history, the echo's delay and drift, the
/// linear canceller, and what keeps the near end safe from it.
///
/// For each block of capture (`scratch.blockIn`) the reference is read from the history at the
/// echo's delay (`EchoAlignment`: the device delay, refined by `DelayEstimator`, with clock drift
/// from `DriftEstimator` followed by fractional, windowed-sinc reads), and the canceller removes
/// the echo into `scratch.blockOut` (``cancel()``). `CancellerHealth` watches its input (as it
/// takes it, through its DC notch: `scratch.notched`, the capture every later stage compares
/// with) and output (ERLE, divergence) and `EchoPathDetector` whether there is an echo at all. Then
/// ``protectNearEnd()`` passes the capture on untouched when there is no echo path, and otherwise
/// lets `EchoGate` hold back the echo the canceller does not remove.
///
/// Thread safety: I/O thread only (the unit's `process`); it allocates only in `init`.
final class EchoStage {
    let canceller: any EchoCanceller
    private let block: Int
    /// The processing rate, in Hz.
    private let rate: Int
    private let ring: ReferenceRing
    private let estimator: DelayEstimator?
    private let drift: DriftEstimator?
    /// Finds the echo's jumps from the canceller's prediction (nil: off, or a fixed delay).
    private let shifts: EchoShiftDetector?
    let alignment: EchoAlignment
    let health: CancellerHealth
    /// Whether the microphone hears the far end at all: with no echo path, nothing is gated or suppressed.
    let echoPath: EchoPathDetector
    /// Whether the capture, not the canceller's output, goes on (no echo path).
    private var isPassingCapture = false
    /// SpeexDSP MDF's own DC notch: the capture as the canceller takes it, into `scratch.notched`.
    private var notch: DCNotch
    /// Holds back the echo the canceller does not remove (nil: none).
    private let echoGate: EchoGate?
    /// How far ahead of the reference the echo gate also looks, in samples (40 ms by default).
    private let gateLead: Double
    /// How far under the device delay the delay estimator starts its search, in samples.
    private let searchBeforeDevice: Int
    private let scratch: ProcessingScratch
    /// Capture samples (processing rate) consumed into blocks so far.
    private(set) var captureIndex = 0
    /// The reference delay of the last block, in samples.
    private var lastDelay = 0.0
    /// Canceller restarts so far (divergence, a moved reference, drift beyond interpolation).
    private(set) var resets = 0
    /// Jumps of the echo followed without a restart so far (one seen while there is no echo
    /// path is not followed, and not counted).
    private(set) var echoMoves = 0
    /// Far-end blocks a held device step is tested over, and those tested so far.
    private let deviceStepTestBlocks: Int
    private var deviceStepTests = 0

    init(configuration c: VoiceProcessingConfiguration, block: Int, canceller: any EchoCanceller, gated: Bool,
         scratch: ProcessingScratch) {
        let fp = c.processingSampleRate, t = c.tuning
        self.block = block
        rate = fp
        self.canceller = canceller
        self.scratch = scratch
        notch = DCNotch(sampleRate: fp)
        let fixed: Double? = if case .fixed(seconds: let seconds) = c.delay { seconds * Double(fp) } else { nil }
        alignment = EchoAlignment(sampleRate: fp, fixedDelay: fixed, followsDrift: c.compensatesDrift, tuning: t.alignment,
                                  confident: t.delayEstimator.confidentZScore)
        searchBeforeDevice = t.alignment.searchBeforeDeviceMilliseconds * fp / 1000
        if fixed == nil {
            estimator = DelayEstimator(processingRate: fp, maximumLag: c.maximumEchoDelaySeconds,
                                       searchMove: t.alignment.searchMoveMilliseconds * fp / 1000, tuning: t.delayEstimator)
            drift = c.compensatesDrift ? DriftEstimator(sampleRate: fp, tuning: t.drift) : nil
        } else {
            estimator = nil
            drift = nil
        }
        shifts = fixed == nil && t.echoShift.enabled
            ? EchoShiftDetector(blockSize: block, sampleRate: fp, tuning: t.echoShift) : nil
        alignment.testsDeviceSteps = shifts != nil
        deviceStepTestBlocks = max(1, Int((t.echoShift.deviceStepTestMilliseconds / 1000 * Double(fp) / Double(block)).rounded()))
        // History for the largest delay the estimator can report, plus a period.
        let maxDelay = (fixed ?? 0) + Double(estimator?.maximumMinimumLag ?? 0) + c.maximumEchoDelaySeconds * Double(fp)
        ring = ReferenceRing(span: Int(maxDelay) + 2 * scratch.capacity)
        health = CancellerHealth(blockSize: block, sampleRate: fp, tuning: t.cancellerHealth)
        echoPath = EchoPathDetector(blockSize: block, sampleRate: fp, tuning: t.echoPath,
                                    confident: t.delayEstimator.confidentZScore,
                                    hopSeconds: Double(t.delayEstimator.hopMilliseconds) / 1000)
        echoGate = gated
            ? EchoGate(blockSize: block, sampleRate: fp, tuning: t.gate, bands: t.nearEndBands, coherence: t.coherence) : nil
        gateLead = t.gate.leadMilliseconds / 1000 * Double(fp)
    }

    /// Whether an echo path may be there (present, or not yet known).
    var hasEchoPath: Bool { echoPath.state != .absent }
    /// Whether the echo gate held this block back (with the room's noise in it).
    var isHoldingEcho: Bool { hasEchoPath && (echoGate?.isHolding ?? false) }

    /// A render period at the processing rate (full scale 1), into the history and the delay estimator.
    func pushRender(_ samples: UnsafePointer<Float>, _ count: Int) {
        ring.write(samples, count)
        estimator?.pushRender(samples, count)
    }

    /// The device's round trip (`deviceDelay` samples at the processing rate): the echo is
    /// searched from a little under it (50 ms by default), or under the echo once the estimator
    /// has found it there, if that is earlier (a report that wanders above the echo must not
    /// leave it out). The estimator moves its search only once the start is
    /// `alignment.searchMoveMilliseconds` off: a smoothed report that creeps, or one that wanders
    /// (the `pulse` plugin on pipewire-pulse), moved it 7 to 15 times in a 10 s call, and the
    /// estimator found nothing for a quarter of a second after each.
    func updateDevice(delay deviceDelay: Double) {
        alignment.updateDevice(delay: deviceDelay, at: captureIndex)
        guard let estimator, let device = alignment.deviceDelay else { return }
        estimator.setSearchStart(Int(min(device, alignment.echoDelay ?? device)) - searchBeforeDevice)
    }

    /// Cancels the echo in `scratch.blockIn` into `scratch.blockOut` (the linear output), and
    /// updates the health, the echo-path detector, the delay and the drift.
    func cancel() {
        let n0 = captureIndex
        lastDelay = readReference(at: n0)
        // What the canceller removed is measured against the capture as it takes it, through its
        // DC notch: a converter's DC offset is not echo it removed (measured against the raw
        // capture, an offset 10 dB over a quiet room's noise read as 11 dB of ERLE, an echo seen).
        notch.process(scratch.blockIn, into: scratch.notched, count: block)
        canceller.cancel(capture: UnsafeBufferPointer(start: scratch.blockIn, count: block),
                         reference: UnsafeBufferPointer(start: scratch.blockReference, count: block),
                         output: UnsafeMutableBufferPointer(start: scratch.blockOut, count: block))
        // With no echo path the canceller's output is not used (below), so a divergence there
        // does not matter; resetting it would only put it back into its fastest adaptation.
        if health.update(capture: scratch.notched, reference: scratch.blockReference, output: scratch.blockOut) == .diverged
            && hasEchoPath {
            restartCanceller()
        }
        followMove(at: n0)
        echoPath.endBlock(farActive: health.isFarActive)
        estimateDelay(at: n0)
    }

    /// After ``cancel()``: the capture itself when there is no echo path, and the echo gate
    /// over the canceller's output (all of it until the canceller has converged, then the echo
    /// it leaves as a linear function of the far end). Ends the block.
    func protectNearEnd() {
        passCaptureWithoutEcho()
        if let echoGate, hasEchoPath {
            // The far end 40 ms ahead of the reference too, in case the delay (not yet estimated
            // at the start) is placed late and the echo comes before its reference.
            let lead = max(0, (lastDelay - gateLead).rounded(.down))
            ring.read(from: Double(captureIndex) - lead, step: 1, count: block, into: scratch.referenceFloat)
            echoGate.process(reference: scratch.blockReference, capture: scratch.notched, output: scratch.blockOut,
                             leadingReference: scratch.referenceFloat)
        }
        captureIndex += block
    }

    /// When the echo has jumped (``EchoShiftDetector``), moves the reference with it from the
    /// next block: the filter fits again as it is, so nothing is reset; the delay estimator's
    /// average, which still holds the old delay, starts over. The detector takes every block, so
    /// its history has no gap where the echo path was judged absent; only a move with a path is followed.
    private func followMove(at n0: Int) {
        guard let shifts else { return }
        let found = shifts.push(capture: scratch.notched, output: scratch.blockOut,
                                farActive: health.isFarActive, cancellerERLE: health.erleDB)
        guard let move = found ?? testDeviceStep(shifts), hasEchoPath else { return }
        echoMoves += 1
        alignment.follow(shift: Double(move), at: n0 + block)
        estimator?.forgetAverage()
        health.forgetWindows()
    }

    /// A step of the device's reported delay the alignment holds once the delay estimator has
    /// locked: the echo's move if the canceller's prediction moved by it fits the capture, nil
    /// while untested. Some servers' reports wander by tens of milliseconds while the echo stays
    /// (the `pulse` plugin on pipewire-pulse), and a reference that followed them moved off the
    /// echo the canceller had learned. A step is dropped if the echo has not moved with it over
    /// ``deviceStepTestBlocks`` of far-end activity, or at once when the prediction cannot tell
    /// (the canceller has not learned, there is no echo path, or the step is beyond the
    /// detector's search): the delay estimator then finds the echo wherever it went.
    private func testDeviceStep(_ shifts: EchoShiftDetector) -> Int? {
        guard let step = alignment.pendingDeviceStep else {
            deviceStepTests = 0
            return nil
        }
        let shift = Int(step.rounded())
        guard hasEchoPath, shifts.canTest(shift: shift) else {
            alignment.dropDeviceStep()
            return nil
        }
        // A move the detector found itself restarts its history (the report may follow it).
        guard health.isFarActive, shifts.isReady else { return nil }
        if let move = shifts.confirm(shift: shift) { return move }
        deviceStepTests += 1
        if deviceStepTests >= deviceStepTestBlocks { alignment.dropDeviceStep() }
        return nil
    }

    /// The delay estimator re-placed the reference at `time`, from `before`. If the echo moved
    /// by as much as the shift detector keeps finding, the reference follows the detector's
    /// move, exact to a sample, and the canceller goes on; otherwise it starts over.
    private func realign(from before: Double, at time: Int) {
        let moved = alignment.delay(at: time) - before
        guard let move = shifts?.takeCorroboratedMove(near: moved) else {
            restartCanceller()
            return
        }
        echoMoves += 1
        alignment.settle(shift: Double(move), from: before, at: time)
        health.forgetWindows()
    }

    /// The canceller's filter no longer fits the echo (it diverged, or the reference moved): start
    /// it over, with the echo gate holding the echo back until it has converged again.
    private func restartCanceller() {
        canceller.reset()
        echoGate?.rearm()
        health.reset()
        shifts?.restart()
        resets += 1
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
        ring.read(from: Double(n0) - d, step: step, count: block, into: scratch.referenceFloat)
        for i in 0..<block {
            scratch.blockReference[i] = Int16(clamping: Int((scratch.referenceFloat[i] * 32768).rounded()))
        }
        return d
    }

    /// Delay and drift, from the raw streams: the estimator's hop (when one completes) moves the
    /// alignment, tells the echo-path detector, and feeds the drift estimator.
    private func estimateDelay(at n0: Int) {
        guard let estimator else { return }
        for i in 0..<block { scratch.captureFloat[i] = Float(scratch.blockIn[i]) * (1 / 32768) }
        guard let e = estimator.pushCapture(scratch.captureFloat, block) else { return }
        echoPath.hop(confidence: e.confidence, cancellerERLE: health.erleDB)
        // Without an echo path a chance peak may move the reference; the canceller's output
        // is not used then, and a real echo's first peak re-places it (and resets) anyway.
        let before = alignment.delay(at: e.time)
        if alignment.updateEstimate(delay: e.delay, onset: e.onset, confidence: e.confidence, at: e.time) && hasEchoPath {
            realign(from: before, at: e.time)
        }
        if let drift, let tracked = e.trackedDelay {
            drift.add(time: e.time, delay: tracked)
            if drift.isConfident {
                alignment.setSlope(drift.significantSlope, at: n0 + block)
                if alignment.keepInterpolable(at: n0 + block) { restartCanceller() }
            }
        }
    }

    /// With no echo path, the microphone goes on as it is: a canceller with nothing to cancel
    /// still adapts to chance correlations between the near end and the far end, and in echo-free
    /// double talk SpeexDSP's MDF then added a far-end-shaped error only 7 dB under the near end
    /// (`aecbench suite`, `echofree`). It keeps running on the side, so the echo-path detector
    /// and the canceller's ERLE still see an echo that appears. Switches crossfade over a block.
    private func passCaptureWithoutEcho() {
        // The notch runs on every block (in ``cancel()``), so its state has settled whenever it
        // is switched in.
        let pass = !hasEchoPath
        guard pass || isPassingCapture else { return }
        if pass == isPassingCapture {
            scratch.blockOut.update(from: scratch.notched, count: block)
            return
        }
        let step = 1 / Float(block)
        for i in 0..<block {
            let w = pass ? step * Float(i + 1) : 1 - step * Float(i + 1)
            scratch.blockOut[i] = Int16(clamping: Int((w * Float(scratch.notched[i]) + (1 - w) * Float(scratch.blockOut[i])).rounded()))
        }
        isPassingCapture = pass
    }

    /// Starts over: history, delay, drift, detectors and the canceller (the device and its delays
    /// may have changed).
    func restart() {
        ring.reset()
        estimator?.reset()
        drift?.reset()
        alignment.reset()
        health.reset()
        echoPath.reset()
        isPassingCapture = false
        notch.reset()
        canceller.reset()
        echoGate?.reset()
        shifts?.restart()
        captureIndex = 0
    }
}
