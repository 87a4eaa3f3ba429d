import DSP

/// Linear convolution and cross-correlation of whole signals via the FFT.
///
/// Thread safety: stateless; safe from any thread (allocates: not for the audio thread).
public enum Convolution {
    /// `signal` filtered by the impulse response `ir`; the result has `signal.count` samples.
    public static func filter(_ signal: [Float], with ir: [Float]) -> [Float] {
        guard !signal.isEmpty, !ir.isEmpty else { return [Float](repeating: 0, count: signal.count) }
        let full = convolve(signal.map(Double.init), ir.map(Double.init))
        return (0..<signal.count).map { Float(full[$0]) }
    }

    /// Full linear convolution (`a.count + b.count - 1` samples).
    static func convolve(_ a: [Double], _ b: [Double]) -> [Double] {
        let n = a.count + b.count - 1
        let fft = FFT(size: FFT.size(atLeast: n))
        var ar = a + [Double](repeating: 0, count: fft.size - a.count)
        var ai = [Double](repeating: 0, count: fft.size)
        var br = b + [Double](repeating: 0, count: fft.size - b.count)
        var bi = [Double](repeating: 0, count: fft.size)
        fft.transform(&ar, &ai)
        fft.transform(&br, &bi)
        for k in 0..<fft.size {
            let r = ar[k] * br[k] - ai[k] * bi[k]
            let i = ar[k] * bi[k] + ai[k] * br[k]
            ar[k] = r; ai[k] = i
        }
        fft.transform(&ar, &ai, inverse: true)
        let scale = 1 / Double(fft.size)
        return (0..<n).map { ar[$0] * scale }
    }

    /// Cross-correlation `r[lag] = sum_n a[n] * b[n + lag]` for lag in `-maxLag...maxLag`.
    ///
    /// - Returns: an array of `2 * maxLag + 1` values; index `maxLag + lag`.
    public static func crossCorrelation(_ a: [Float], _ b: [Float], maxLag: Int) -> [Double] {
        crossCorrelation(a, b, lags: -maxLag...maxLag)
    }

    /// Cross-correlation `r[lag] = sum_n a[n] * b[n + lag]` for each lag in `lags`, in order.
    static func crossCorrelation(_ a: [Float], _ b: [Float], lags: ClosedRange<Int>) -> [Double] {
        guard !a.isEmpty, !b.isEmpty else { return [Double](repeating: 0, count: lags.count) }
        // Convolving b with a reversed gives sum_n a[n] b[n + lag] at index (a.count - 1 + lag).
        let full = convolve(a.reversed().map(Double.init), b.map(Double.init))
        return lags.map { lag in
            let index = a.count - 1 + lag
            return full.indices.contains(index) ? full[index] : 0
        }
    }
}
