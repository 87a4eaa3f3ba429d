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
    private var lowpass: ButterworthLowpass
    /// The gain the last block ended at.
    private(set) var gain: Float = 1

    /// A split at `cutoff` Hz (4 kHz by default, ``VoiceProcessingTuning/Gate/highBandCutoffHz``),
    /// or none (every gain passes the signal) where that is at or over Nyquist.
    init(sampleRate: Int, cutoff: Double = 4000) {
        lowpass = ButterworthLowpass(cutoff: cutoff, sampleRate: sampleRate)
    }

    /// Filters `samples` in place, the gain moving from the last block's to `target` across it.
    /// The lowpass runs on every block, so its state is current when the gain next moves.
    mutating func apply(_ target: Float, to samples: UnsafeMutablePointer<Int16>, count: Int) {
        let start = gain, step = (target - start) / Float(count)
        let acts = start != 1 || target != 1
        for i in 0..<count {
            let x = Double(samples[i])
            let low = lowpass.process(x)
            if acts {
                let g = Double(start + step * Float(i + 1))
                samples[i] = Int16(clamping: Int((g * x + (1 - g) * low).rounded()))
            }
        }
        gain = target
    }

    /// Forgets the signal: the gain back to 1, the lowpass silent.
    mutating func reset() {
        lowpass.reset()
        gain = 1
    }
}
