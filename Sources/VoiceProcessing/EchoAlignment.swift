import DSP

/// Decides where in the loudspeaker history the canceller's reference is read: the delay, in
/// processing samples, from a loudspeaker sample to the microphone sample it is paired with.
///
/// The aim is to put the echo's direct path ``margin`` after the reference, so the canceller's
/// tail covers the room and nothing of the echo comes before its reference (which no causal
/// filter can cancel). Sources, in order of trust:
///
/// 1. a confirmed delay-estimator measurement (two agreeing hops with a clear peak);
/// 2. the device delay the I/O layer reports, smoothed (before the estimator has locked); once
///    it has, a step of the report is followed only when the echo moved with it (when
///    ``testsDeviceSteps``: the stage tests it against the canceller's prediction, or leaves
///    it to the estimator), since some servers' reports wander by tens of milliseconds while
///    the echo stays;
/// 3. zero (or ``interpolationFloor`` when drift may be followed).
///
/// Small movements of the echo inside the tail are left to the canceller, which tracks them
/// without losing what it learned; the reference is re-placed (and the canceller reset) only
/// when the echo leaves the band ``minimumResidual`` ... ``maximumResidual`` after the reference.
/// Clock drift is followed continuously: the applied delay is a line,
/// `anchorDelay + slope * (n - anchorTime)`, whose slope comes from ``DriftEstimator``, read
/// between samples; so the reference is kept ``interpolationFloor`` behind the loudspeaker
/// where the echo allows it (``keepInterpolable(at:)``).
///
/// Thread safety: not thread-safe; used by the I/O thread only. Nothing allocates.
final class EchoAlignment {
    let sampleRate: Int
    /// Where the echo's direct path is placed after the reference, in samples.
    let margin: Double
    /// How far before the echo's earliest arrival the reference goes when that comes first.
    let onsetMargin: Double
    /// The band the direct path may wander in before the reference is re-placed, in samples.
    let minimumResidual: Double
    let maximumResidual: Double
    /// How close two estimates must be to confirm a delay, in samples.
    private let agreement: Double
    /// A re-placement that moves the reference by more than this resets the canceller, in samples.
    private let resetMove: Double
    /// A device-delay report this far from the smoothed one is a step, in samples; it is followed
    /// after ``deviceStepPeriods`` in a row; smaller jitter moves the smoothed delay by ``deviceSmoothing``.
    private let deviceStep: Double
    private let deviceStepPeriods: Int
    private let deviceSmoothing: Double
    /// The delay estimator's z-score for a real peak.
    private let confident: Double
    /// A fixed delay (no device delay, no estimator), if configured.
    let fixedDelay: Double?
    /// The least delay the reference is placed at when the echo allows it: when drift may be
    /// followed, twice ``SincKernel/halfTaps`` by default (a read between samples needs half that
    /// many played samples past the point, and the rest is headroom, so a small negative drift
    /// takes minutes to use it up), else 0.
    let interpolationFloor: Double

    private(set) var anchorDelay: Double
    private(set) var anchorTime = 0
    private(set) var slope = 0.0
    /// Whether a drift slope has been set.
    private(set) var hasSlope = false
    /// The smoothed device delay, in samples (nil before the first report).
    private(set) var deviceDelay: Double?
    private var deviceJumpCount = 0
    private var pendingDeviceDelay = 0.0
    /// The last confirmed echo delay (raw streams), and whether the estimator has locked.
    private(set) var echoDelay: Double?
    private var candidate: Double?
    /// Whether a device step, once the estimator has locked, is held for the stage to test
    /// against the echo (``pendingDeviceStep``) rather than followed at once.
    var testsDeviceSteps = false
    /// The device steps held since the last test, in samples (nil: none).
    private(set) var pendingDeviceStep: Double?

    /// - Parameters:
    ///   - followsDrift: whether ``setSlope(_:at:)`` will be used, so the reference must be
    ///     readable between samples.
    ///   - confident: the delay estimator's z-score for a real peak; weaker measurements are ignored.
    init(sampleRate: Int, fixedDelay: Double?, followsDrift: Bool = false,
         tuning t: VoiceProcessingTuning.Alignment = .init(),
         confident: Double = VoiceProcessingTuning.DelayEstimator().confidentZScore) {
        self.sampleRate = sampleRate
        let ms = Double(sampleRate) / 1000
        margin = t.marginMilliseconds * ms
        onsetMargin = t.onsetMarginMilliseconds * ms
        minimumResidual = t.minimumResidualMilliseconds * ms
        maximumResidual = t.maximumResidualMilliseconds * ms
        agreement = t.agreementMilliseconds * ms
        resetMove = t.resetMoveMilliseconds * ms
        deviceStep = t.deviceStepMilliseconds * ms
        deviceStepPeriods = t.deviceStepPeriods
        deviceSmoothing = t.deviceSmoothing
        self.confident = confident
        self.fixedDelay = fixedDelay
        interpolationFloor = followsDrift ? t.interpolationFloorHalfKernels * Double(SincKernel.halfTaps) : 0
        anchorDelay = fixedDelay ?? interpolationFloor
    }

    /// The reference delay for capture sample `n`.
    @inline(__always)
    func delay(at n: Int) -> Double { max(0, anchorDelay + slope * Double(n - anchorTime)) }

    /// Whether the estimator's measurements are steering the alignment.
    var isLocked: Bool { echoDelay != nil }

    /// Takes the device delay reported for the period starting at capture sample `time`.
    /// Returns whether the reference moved by more than a millisecond.
    @discardableResult
    func updateDevice(delay reported: Double, at time: Int) -> Bool {
        guard fixedDelay == nil else { return false }
        guard let current = deviceDelay else {
            deviceDelay = reported
            if !isLocked { place(reported - margin, at: time) }
            return false
        }
        if abs(reported - current) > deviceStep {
            // A step (an xrun, a device restart) once it has persisted for some periods.
            if deviceJumpCount > 0 && abs(reported - pendingDeviceDelay) <= deviceStep {
                deviceJumpCount += 1
            } else {
                deviceJumpCount = 1
                pendingDeviceDelay = reported
            }
            guard deviceJumpCount >= deviceStepPeriods else { return false }
            deviceJumpCount = 0
            let step = reported - current
            deviceDelay = reported
            if isLocked && testsDeviceSteps {
                // The echo has the last word: held until the stage has tested it.
                pendingDeviceStep = (pendingDeviceStep ?? 0) + step
                return false
            }
            return followDeviceStep(step, at: time)
        }
        deviceJumpCount = 0
        // Jitter of a period or so: follow slowly.
        let smoothed = current + deviceSmoothing * (reported - current)
        deviceDelay = smoothed
        if !isLocked { place(smoothed - margin, at: time) }
        return false
    }

    /// Takes a delay-estimator measurement. Returns whether the reference was re-placed far
    /// enough that the canceller should start over.
    ///
    /// - Parameter onset: the earliest arrival the estimator saw (``DelayEstimator/Estimate/onset``);
    ///   the reference goes ``margin`` before the peak, or ``onsetMargin`` before the onset if
    ///   that is earlier (a diffuse room, where the echo starts before its peak).
    func updateEstimate(delay measured: Double, onset: Double? = nil, confidence: Double, at time: Int) -> Bool {
        guard fixedDelay == nil else { return false }
        guard confidence >= confident else { return false }
        // Two agreeing measurements in a row confirm a delay.
        defer { candidate = measured }
        guard let previous = candidate, abs(previous - measured) <= agreement else { return false }
        echoDelay = measured
        let residual = measured - delay(at: time)
        guard residual < minimumResidual || residual > maximumResidual else { return false }
        let before = delay(at: time)
        place(min(measured - margin, (onset ?? measured) - onsetMargin), at: time)
        pendingDeviceStep = nil
        return abs(delay(at: time) - before) > resetMove
    }

    /// Moves the reference by `shift` samples from capture sample `time` on, with the echo (a
    /// jump `EchoShiftDetector` found), so the canceller's filter fits it again as it was.
    func follow(shift: Double, at time: Int) {
        guard fixedDelay == nil else { return }
        anchorDelay = max(0, delay(at: time) + shift)
        anchorTime = time
        if let e = echoDelay { echoDelay = e + shift }
        candidate = nil
        pendingDeviceStep = nil
    }

    /// A re-placement (``updateEstimate(delay:onset:confidence:at:)``) at `time` followed a move
    /// of the echo by `shift` samples, found more exactly by the canceller's prediction: the
    /// reference goes where it was before, `before`, moved by exactly that, so the canceller's
    /// filter fits the echo as it did.
    func settle(shift: Double, from before: Double, at time: Int) {
        guard fixedDelay == nil else { return }
        anchorDelay = max(0, before + shift)
        anchorTime = time
    }

    /// The echo moved with the device: moves the estimate and the reference by `step` samples.
    /// Returns whether the reference moved by more than ``resetMove``.
    private func followDeviceStep(_ step: Double, at time: Int) -> Bool {
        if let e = echoDelay { echoDelay = e + step }
        candidate = nil
        pendingDeviceStep = nil
        let before = delay(at: time)
        place(before + step, at: time)
        return abs(delay(at: time) - before) > resetMove
    }

    /// Forgets a held device step the echo did not confirm: the report moved, the echo did not.
    func dropDeviceStep() { pendingDeviceStep = nil }

    /// Moves the reference back to where it can be read between samples, if a drift slope is
    /// followed and the reference has come within ``SincKernel/halfTaps`` samples of the
    /// loudspeaker (a negative drift brings it closer over time). A fractional read takes that
    /// many samples past the point, and they must have been played already. Closer in, the unit
    /// reads whole samples, and the echo path then jumps by a sample every `1 / slope` samples
    /// (every 1.25 s at 50 ppm), which the canceller never catches up with. The move puts the
    /// echo's direct path ``margin`` after the reference, as a confirmed estimate does, but not
    /// closer than ``interpolationFloor``. It happens only if the echo comes at least half the
    /// ``margin`` after the floor.
    ///
    /// - Returns: whether the reference moved (the canceller should start over).
    func keepInterpolable(at time: Int) -> Bool {
        guard fixedDelay == nil, slope != 0, let echo = echoDelay, delay(at: time) < Double(SincKernel.halfTaps) else {
            return false
        }
        guard echo - interpolationFloor >= margin / 2 else { return false }
        place(max(interpolationFloor, echo - margin), at: time)
        return true
    }

    /// Follows a clock drift of `slope` samples per sample from capture sample `time` on.
    func setSlope(_ newSlope: Double, at time: Int) {
        guard fixedDelay == nil else { return }
        anchorDelay = delay(at: time)
        anchorTime = time
        slope = newSlope
        hasSlope = true
    }

    /// Puts the reference at `value`, or at ``interpolationFloor`` if that is more and the echo
    /// still comes at least half the ``margin`` after it. Where the echo is comes from the
    /// estimator once locked, and before that from the device delay, the least the echo can
    /// take; a device that reports none (0, as files processed offline do) says nothing.
    private func place(_ value: Double, at time: Int) {
        let echo = echoDelay ?? deviceDelay.flatMap { $0 > 0 ? $0 : nil }
        let echoAllows = echo.map { $0 - interpolationFloor >= margin / 2 } ?? true
        anchorDelay = max(echoAllows ? interpolationFloor : 0, value)
        anchorTime = time
    }

    /// Forgets everything learned (keeps a fixed delay).
    func reset() {
        anchorDelay = fixedDelay ?? interpolationFloor
        anchorTime = 0
        slope = 0
        hasSlope = false
        deviceDelay = nil
        echoDelay = nil
        candidate = nil
        deviceJumpCount = 0
        pendingDeviceStep = nil
    }
}
