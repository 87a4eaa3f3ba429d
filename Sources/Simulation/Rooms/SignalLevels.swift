import DSP
import Platform
import AudioAnalysis

/// Speech levels and noise for building scenarios.
///
/// Thread safety: stateless; safe from any thread.
public enum SignalLevels {
    /// The active level of a speech signal as a mean square (full scale 1.0 -> 1.0): the power
    /// over the 10 ms frames that carry speech, found as in ITU-T P.56 by iterating a threshold
    /// 15.9 dB below the level being measured. Pauses do not lower it, so signal-to-echo and
    /// echo-to-noise ratios mean the same for talkers who pause differently.
    public static func activePower(_ x: [Float], sampleRate: Int) -> Double {
        let frame = max(1, sampleRate / 100)
        let powers = frameEnergies(x, frame: frame).map { $0 / Double(frame) }
        guard !powers.isEmpty else { return 0 }
        var level = powers.reduce(0, +) / Double(powers.count)
        guard level > 0 else { return 0 }
        let margin = Math.pow(10, -15.9 / 10)
        for _ in 0..<10 {
            let active = powers.filter { $0 >= level * margin }
            guard !active.isEmpty else { break }
            let next = active.reduce(0, +) / Double(active.count)
            if abs(next - level) <= 1e-6 * level { break }
            level = next
        }
        return level
    }

    /// The energy (sum of squares) of each whole `frame`-sample frame of `x`, in order; a
    /// partial frame at the end is left out.
    static func frameEnergies(_ x: [Float], frame: Int) -> [Double] {
        var energies: [Double] = []
        var start = 0
        while start + frame <= x.count {
            var e = 0.0
            for i in start..<(start + frame) { e += Double(x[i]) * Double(x[i]) }
            energies.append(e)
            start += frame
        }
        return energies
    }

    /// The active level in dBFS (a full-scale sine is -3 dBFS).
    public static func activeLevelDB(_ x: [Float], sampleRate: Int) -> Double {
        let p = activePower(x, sampleRate: sampleRate)
        return p > 0 ? 10 * Math.log10(p) : -200
    }

    /// `x` scaled so its active level is `dBFS`.
    public static func scaled(_ x: [Float], toActiveLevel dBFS: Double, sampleRate: Int) -> [Float] {
        let p = activePower(x, sampleRate: sampleRate)
        guard p > 0 else { return x }
        let gain = Float((Math.pow(10, dBFS / 10) / p).squareRoot())
        return x.map { $0 * gain }
    }

    /// Pink noise (-3 dB per octave) with the given RMS, from Paul Kellet's economy filter
    /// over seeded white noise.
    public static func pinkNoise(count: Int, rms: Double, seed: UInt64) -> [Float] {
        var rng = SeededRandom(seed: seed)
        var b0 = 0.0, b1 = 0.0, b2 = 0.0
        var out = [Float](repeating: 0, count: count)
        var energy = 0.0
        for i in 0..<count {
            let white = rng.gaussian()
            b0 = 0.99765 * b0 + white * 0.0990460
            b1 = 0.96300 * b1 + white * 0.2965164
            b2 = 0.57000 * b2 + white * 1.0526913
            let pink = b0 + b1 + b2 + white * 0.1848
            out[i] = Float(pink)
            energy += pink * pink
        }
        guard energy > 0 else { return out }
        let gain = Float(rms / (energy / Double(count)).squareRoot())
        return out.map { $0 * gain }
    }
}

extension SeededRandom {
    /// Uniform in `range`.
    mutating func uniform(_ range: ClosedRange<Double>) -> Double {
        range.lowerBound + unit() * (range.upperBound - range.lowerBound)
    }
}
