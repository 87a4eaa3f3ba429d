/// Estimates the clock drift between playback and capture as the slope of the echo delay over
/// time: a least-squares line through the recent delay measurements.
///
/// When the capture clock runs `e` faster than the playback clock, capture sample `n` holds the
/// echo of playback sample `n / (1 + e)`: the delay grows by `e / (1 + e)` samples per sample.
/// The delay estimator measures the delay between the raw streams, before any compensation, so
/// the fit sees the true drift and the compensation cannot feed back into it.
///
/// A step in the delay (the loudspeaker moved, a device xrun) is not drift, but a line through
/// measurements on both sides of it has a slope. So the slope is trusted only when the two halves
/// of the window, fitted on their own, agree with it (within 5 ppm or three times their own
/// error): a real drift gives the same slope everywhere, a step gives two flat halves.
/// Measurements more than 0.25 ms off the current line are left out (the estimator's own jitter
/// is a few hundredths of a millisecond without drift); eight in a row mean the delay really moved, and the
/// history starts over. The slope is reported once the measurements span
/// ``minimumSpan`` and its standard error is below 4 ppm or a tenth of the slope.
///
/// Thread safety: not thread-safe; used by the I/O thread only. Nothing allocates after `init`.
final class DriftEstimator {
    let sampleRate: Int
    /// Capacity of the measurement window.
    let capacity: Int
    /// Seconds the measurements must span before a slope is reported.
    let minimumSpan: Double
    /// The rest of the rules, as documented on ``VoiceProcessingTuning/Drift``.
    private let tuning: VoiceProcessingTuning.Drift
    /// A measurement this far off the line is stray, in samples.
    private let outlier: Double
    private let times: UnsafeMutablePointer<Double>
    private let delays: UnsafeMutablePointer<Double>
    private var head = 0
    private(set) var count = 0
    private var rejectedInARow = 0
    /// The current fit: delay = intercept + slope * (time - origin).
    private(set) var slope = 0.0
    private var intercept = 0.0
    private var origin = 0.0
    /// Standard error of the slope, in samples per sample.
    private(set) var slopeError = Double.infinity
    /// Whether ``slope`` is trustworthy.
    private(set) var isConfident = false

    init(sampleRate: Int, tuning: VoiceProcessingTuning.Drift = .init()) {
        self.sampleRate = sampleRate
        self.tuning = tuning
        capacity = tuning.capacity
        minimumSpan = tuning.minimumSpanSeconds
        outlier = Double(sampleRate) * tuning.outlierMilliseconds / 1000
        times = .allocate(capacity: capacity)
        delays = .allocate(capacity: capacity)
        times.initialize(repeating: 0, count: capacity)
        delays.initialize(repeating: 0, count: capacity)
    }

    deinit {
        times.deallocate()
        delays.deallocate()
    }

    /// Drift in parts per million (positive: the capture clock is faster).
    var ppm: Double { slope / (1 - slope) * 1e6 }

    /// The slope worth compensating: ``slope`` when it is at least 1 ppm and three standard
    /// errors from zero, otherwise 0. Two devices on one clock measure a few tenths of a ppm of
    /// noise; following it would read the reference through the fractional interpolator for
    /// nothing (64 multiply-adds a sample), and a drift that small moves the echo by one sample
    /// a minute, which the canceller follows on its own.
    ///
    /// The slope must also have moved the echo by at least a sample over the measurements it
    /// was fitted to: in a diffuse room the delay estimates wander by a fraction of a sample, and
    /// over the first seconds that wander alone can fit a slope of 20 ppm with a small error
    /// (`aecbench suite --room decaying-noise`, base seed 1: -20 ppm followed at 3.3 s in a room
    /// with no drift, double-talk PESQ 1.53 instead of 2.90). A real 50 ppm drift moves the echo
    /// by a sample in 1.25 s at 16 kHz, so it still counts from the minimum span on.
    var significantSlope: Double {
        abs(slope) >= tuning.minimumPPM / 1e6 && abs(slope) >= tuning.significanceErrors * slopeError
            && abs(slope) * span * Double(sampleRate) >= tuning.minimumMoveSamples ? slope : 0
    }

    /// Seconds between the first and the last measurement of the fit.
    private(set) var span = 0.0

    /// Adds a delay measurement (samples) at capture sample `time`.
    func add(time: Int, delay: Double) {
        let t = Double(time)
        if count >= tuning.outlierTestAfter {
            let predicted = intercept + slope * (t - origin)
            if abs(delay - predicted) > outlier {
                rejectedInARow += 1
                // Eight stray measurements in a row (about a second): the delay really moved.
                if rejectedInARow >= tuning.outliersToRestart { reset() } else { return }
            }
        }
        rejectedInARow = 0
        let slot = (head + count) % capacity
        if count == capacity {
            head = (head + 1) % capacity
        } else {
            count += 1
        }
        times[slot] = t
        delays[slot] = delay
        update()
    }

    /// A least-squares line through measurements `first ..< first + n` (oldest first).
    private func fit(_ first: Int, _ n: Int) -> (slope: Double, intercept: Double, origin: Double, error: Double)? {
        guard n >= 3 else { return nil }
        var st = 0.0, sd = 0.0
        for i in first..<(first + n) {
            let j = (head + i) % capacity
            st += times[j]
            sd += delays[j]
        }
        let tMean = st / Double(n), dMean = sd / Double(n)
        var stt = 0.0, std = 0.0
        for i in first..<(first + n) {
            let j = (head + i) % capacity
            let dt = times[j] - tMean
            stt += dt * dt
            std += dt * (delays[j] - dMean)
        }
        guard stt > 0 else { return nil }
        let slope = std / stt
        var residual = 0.0
        for i in first..<(first + n) {
            let j = (head + i) % capacity
            let e = delays[j] - (dMean + slope * (times[j] - tMean))
            residual += e * e
        }
        return (slope, dMean, tMean, (residual / Double(n - 2) / stt).squareRoot())
    }

    private func update() {
        guard let whole = fit(0, count) else {
            origin = times[head]
            intercept = delays[head]
            slope = 0
            isConfident = false
            return
        }
        slope = whole.slope
        intercept = whole.intercept
        origin = whole.origin
        slopeError = whole.error
        span = (times[(head + count - 1) % capacity] - times[head]) / Double(sampleRate)
        // The error allowed: 4 ppm, or a tenth of the slope. On speech the estimator's jitter
        // grows with the drift (0.4 samples at 100 ppm, 1 at 200), and the absolute bound alone
        // held a 100 ppm drift back until 6 s, with the echo moving 1.6 samples a second.
        let allowedError = max(tuning.maximumErrorPPM / 1e6, abs(whole.slope) / tuning.minimumSlopeOverError)
        guard span >= minimumSpan, slopeError < allowedError,
              let early = fit(0, count / 2), let late = fit(count / 2, count - count / 2)
        else {
            isConfident = false
            return
        }
        // Both halves must show the same slope as the whole: drift, not a step.
        let tolerance = max(tuning.halvesTolerancePPM / 1e6, tuning.halvesToleranceErrors * max(early.error, late.error))
        isConfident = abs(early.slope - slope) < tolerance && abs(late.slope - slope) < tolerance
    }

    /// Forgets all measurements.
    func reset() {
        head = 0
        count = 0
        rejectedInARow = 0
        slope = 0
        intercept = 0
        slopeError = .infinity
        span = 0
        isConfident = false
    }
}
