import DSP
import AudioAnalysis

/// A delay line whose delay changes linearly with time: a bulk delay plus the slow slide of a
/// capture clock that runs `ppm` parts per million faster than the playback clock.
///
/// Output sample `n` (capture clock) reads the input (playback clock) at position
/// `n / (1 + ppm * 1e-6) - bulk`, so the delay is `bulk + n * ppm / (1e6 + ppm)` samples.
/// A whole-sample delay with no drift is an exact copy; otherwise the input is interpolated
/// from an ``InterpolatingRing``, which needs a delay of at least ``SincKernel/halfTaps``
/// (16) samples (smaller delays are raised).
///
/// A real device pair cannot drift forever: its buffers overrun or underrun and the stream
/// slips. When the drifting delay leaves `bulk +- maximumExcursion`, it slips back by
/// `maximumExcursion` at once (``slips`` counts them), which is what an xrun does to an echo.
///
/// Thread safety: not thread-safe; one owner at a time. ``process(_:_:count:)`` does not allocate.
final class DriftingDelay {
    let bulkDelay: Double
    let maximumExcursion: Double
    private let rate: Double
    private let exact: Int?
    private let history: InterpolatingRing
    /// Sum of the slips applied, in samples.
    private var slipOffset = 0.0
    /// How many times the delay slipped back into range.
    private(set) var slips = 0

    /// - Parameters:
    ///   - delay: bulk delay in samples (>= 0).
    ///   - ppm: capture clock minus playback clock, in parts per million.
    ///   - maximumExcursion: how far the drift may move the delay before it slips, in samples.
    ///   - moves: whether ``move(by:)`` will be called (the delay is then always interpolated).
    init(delay: Double, ppm: Double, maximumExcursion: Double, moves: Bool = false) {
        precondition(delay >= 0 && delay < 10_000_000, "delay out of range")
        self.maximumExcursion = max(1, maximumExcursion)
        rate = ppm / (1e6 + ppm)
        let whole = delay.rounded()
        if ppm == 0 && !moves && abs(delay - whole) < 1e-9 {
            exact = Int(whole)
            bulkDelay = whole
        } else {
            exact = nil
            bulkDelay = max(delay, Double(SincKernel.halfTaps))
        }
        history = InterpolatingRing(minimumCapacity: Int(bulkDelay + self.maximumExcursion) + SincKernel.taps + 2)
    }

    /// Moves the delay by `samples` at once, from the next sample on (a stream that drops or
    /// repeats audio).
    func move(by samples: Double) { slipOffset += samples }

    /// The delay in samples that output sample `n` sees.
    func delay(at n: Int) -> Double { bulkDelay + Double(n) * rate + slipOffset }

    /// Delays `count` samples; `output` may be the same memory as `input`.
    func process(_ input: UnsafePointer<Float>, _ output: UnsafeMutablePointer<Float>, count: Int) {
        for i in 0..<count {
            let n = history.written
            history.write(input[i])
            if let exact {
                output[i] = history.sample(at: n - exact)
                continue
            }
            var d = delay(at: n)
            if d > bulkDelay + maximumExcursion || d < bulkDelay - maximumExcursion
                || d < Double(SincKernel.halfTaps) {
                slipOffset += d > bulkDelay ? -maximumExcursion : maximumExcursion
                slips += 1
                d = delay(at: n)
            }
            output[i] = history.interpolated(at: Double(n) - d)
        }
    }
}
