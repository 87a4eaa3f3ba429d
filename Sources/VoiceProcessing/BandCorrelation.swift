import DSP

/// The band-limited correlation `q(t) = sum_k Re(P_k e^(i w_k t))` of a cross-spectrum `P` over
/// bins `bandLow ... bandHigh`, read at any lag `t` (in samples), not only on the FFT's grid.
///
/// Thread safety: stateless.
enum BandCorrelation {
    /// q(t).
    static func value(at t: Double, re: UnsafePointer<Float>, im: UnsafePointer<Float>,
                      bandLow: Int, bandHigh: Int, fftSize: Int) -> Double {
        let step = 2 * Double.pi / Double(fftSize) * t
        // e^(i w_k t) by rotation from bandLow.
        var zr = Math.cos(step * Double(bandLow)), zi = Math.sin(step * Double(bandLow))
        let rr = Math.cos(step), ri = Math.sin(step)
        var sum = 0.0
        for k in bandLow...bandHigh {
            sum += Double(re[k]) * zr - Double(im[k]) * zi
            let nr = zr * rr - zi * ri
            zi = zr * ri + zi * rr
            zr = nr
        }
        return sum
    }

    /// The maximum of q near integer `peak`, by Newton's method on q itself (no parabola bias),
    /// kept within one sample of `peak`.
    static func refinePeak(_ peak: Int, re: UnsafePointer<Float>, im: UnsafePointer<Float>,
                           bandLow: Int, bandHigh: Int, fftSize: Int) -> Double {
        var t = Double(peak)
        let w0 = 2 * Double.pi / Double(fftSize)
        for _ in 0..<4 {
            var d1 = 0.0, d2 = 0.0
            let step = w0 * t
            var zr = Math.cos(step * Double(bandLow)), zi = Math.sin(step * Double(bandLow))
            let rr = Math.cos(step), ri = Math.sin(step)
            for k in bandLow...bandHigh {
                let pr = Double(re[k]), pi = Double(im[k])
                let w = w0 * Double(k)
                // Re and Im of P_k z
                let zRe = pr * zr - pi * zi
                let zIm = pr * zi + pi * zr
                d1 -= w * zIm
                d2 -= w * w * zRe
                let nr = zr * rr - zi * ri
                zi = zr * ri + zi * rr
                zr = nr
            }
            guard d2 < 0 else { break }
            let delta = -d1 / d2
            t += max(-0.5, min(0.5, delta))
            if abs(delta) < 1e-4 { break }
        }
        return max(Double(peak) - 1, min(Double(peak) + 1, t))
    }
}
