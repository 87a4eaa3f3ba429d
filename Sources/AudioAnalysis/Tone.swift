import Platform
import DSP

/// Test signals.
///
/// Thread safety: stateless; safe from any thread.
public enum Tone {
    /// A sine of `frequency` Hz lasting `seconds`.
    public static func sine(frequency: Double, sampleRate: Int, seconds: Double, amplitude: Float = 0.5) -> [Float] {
        let n = Int(seconds * Double(sampleRate))
        return (0..<n).map { amplitude * Float(Math.sin(2 * Double.pi * frequency * Double($0) / Double(sampleRate))) }
    }

    /// White Gaussian noise with the given RMS.
    public static func noise(count: Int, rms: Double, seed: UInt64) -> [Float] {
        var rng = SeededRandom(seed: seed)
        return (0..<count).map { _ in Float(rng.gaussian() * rms) }
    }

    /// The frequency (Hz) of the strongest spectral peak, by zero-padded FFT magnitude.
    public static func dominantFrequency(_ x: [Float], sampleRate: Int) -> Double {
        let fft = FFT(size: FFT.size(atLeast: max(x.count, 2) * 4))
        var re = x.map(Double.init) + [Double](repeating: 0, count: fft.size - x.count)
        var im = [Double](repeating: 0, count: fft.size)
        fft.transform(&re, &im)
        var best = 1
        for k in 1..<(fft.size / 2) where re[k] * re[k] + im[k] * im[k] > re[best] * re[best] + im[best] * im[best] {
            best = k
        }
        return Double(best) * Double(sampleRate) / Double(fft.size)
    }
}
