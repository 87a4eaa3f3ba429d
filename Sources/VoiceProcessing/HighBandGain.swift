import DSP

/// Lowers a signal above 4 kHz by a gain, with no delay: the output is `g x + (1 - g) lowpass(x)`,
/// the lowpass a second-order Butterworth at 4 kHz (bilinear, so nothing passes at 8 kHz for a
/// 16 kHz block). At a gain of 1 the signal passes untouched; at 0 it is the lowpass (-8 dB at
/// 5 kHz, -15 dB at 6 kHz, -28 dB at 7 kHz).
///
/// Why a lowpass and not a band split: the sum of both parts is the input exactly, so the stage
/// is transparent whenever it does not act, and a second order keeps the crossover's phase
/// within 90 degrees, so a gain between 0 and 1 makes no notch there.
///
/// Thread safety: not thread-safe; the I/O thread only. Nothing allocates.
struct HighBandGain {
    private let b0: Double, b1: Double, b2: Double, a1: Double, a2: Double
    /// The lowpass's state (transposed direct form II).
    private var s1 = 0.0, s2 = 0.0
    /// The gain the last block ended at.
    private(set) var gain: Float = 1

    /// A split at 4 kHz, or none (every gain passes the signal) where that is at or over Nyquist.
    init(sampleRate: Int) {
        let cutoff = 4000.0
        guard cutoff < 0.5 * Double(sampleRate) else {
            (b0, b1, b2, a1, a2) = (1, 0, 0, 0, 0)
            return
        }
        let k = Math.tan(Double.pi * cutoff / Double(sampleRate))
        let norm = 1 / (1 + 2.0.squareRoot() * k + k * k)
        b0 = k * k * norm
        b1 = 2 * b0
        b2 = b0
        a1 = 2 * (k * k - 1) * norm
        a2 = (1 - 2.0.squareRoot() * k + k * k) * norm
    }

    /// Filters `samples` in place, the gain moving from the last block's to `target` across it.
    /// The lowpass runs on every block, so its state is current when the gain next moves.
    mutating func apply(_ target: Float, to samples: UnsafeMutablePointer<Int16>, count: Int) {
        let start = gain, step = (target - start) / Float(count)
        let acts = start != 1 || target != 1
        for i in 0..<count {
            let x = Double(samples[i])
            let low = b0 * x + s1
            s1 = b1 * x - a1 * low + s2
            s2 = b2 * x - a2 * low
            if acts {
                let g = Double(start + step * Float(i + 1))
                samples[i] = Int16(clamping: Int((g * x + (1 - g) * low).rounded()))
            }
        }
        gain = target
    }

    /// Forgets the signal: the gain back to 1, the lowpass silent.
    mutating func reset() {
        s1 = 0
        s2 = 0
        gain = 1
    }
}
