import DSP

/// A second-order Butterworth lowpass (bilinear transform with the cutoff prewarped), filtering
/// one sample at a time in transposed direct form II.
///
/// Thread safety: a value; used by the I/O thread only. Nothing allocates.
struct ButterworthLowpass {
    /// The filter's coefficients (`a0` normalized to 1).
    struct Coefficients {
        let b0: Double, b1: Double, b2: Double, a1: Double, a2: Double

        /// A lowpass at `cutoff` Hz, or a filter that passes everything where the cutoff is at
        /// or over Nyquist.
        init(cutoff: Double, sampleRate: Int) {
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
    }

    private let c: Coefficients
    private var s1 = 0.0, s2 = 0.0

    init(cutoff: Double, sampleRate: Int) {
        c = Coefficients(cutoff: cutoff, sampleRate: sampleRate)
    }

    /// Filters one sample.
    mutating func process(_ x: Double) -> Double {
        let y = c.b0 * x + s1
        s1 = c.b1 * x - c.a1 * y + s2
        s2 = c.b2 * x - c.a2 * y
        return y
    }

    /// Forgets the signal.
    mutating func reset() {
        s1 = 0
        s2 = 0
    }
}
