import DSP
import AudioAnalysis

/// A memoryless model of a small loudspeaker's distortion, applied to the playback signal
/// before the room response.
///
/// The model is `y = tanh(drive * u) / drive` with `u = x + asymmetry * x^2`: the quadratic term
/// stands for the asymmetric excursion of a small driver (even harmonics), the hyperbolic tangent
/// for the suspension's saturation (odd harmonics, soft clipping). Small signals pass almost
/// unchanged; the distortion grows with level, so the ratio depends on how loud the far end plays.
/// The presets are calibrated on speech played at an active level of -20 dBFS
/// (``Simulation/Scenario`` plays the far end at that level):
///
/// | preset | distortion energy relative to the linear part, on the project's speech |
/// |---|---|
/// | ``none`` | none |
/// | ``mild`` | about -24 dB (median -24.2 dB over five talkers; a laptop speaker turned up) |
/// | ``hard`` | about -12 dB (median -12.4 dB; a speaker driven into clipping) |
///
/// "Linear part" is the least-squares gain times the input; the rest of the output is the
/// distortion. ``distortionDB(input:output:)`` measures it.
///
/// Thread safety: a value type; safe from any thread. ``apply(_:)`` does not allocate.
public enum LoudspeakerNonlinearity: String, Sendable, CaseIterable, Codable {
    case none
    case mild
    case hard

    /// Saturation drive and quadratic asymmetry of the preset.
    var parameters: (drive: Float, asymmetry: Float) {
        switch self {
        case .none: (0, 0)
        case .mild: (2.0, 0.25)
        case .hard: (7.0, 0.6)
        }
    }

    /// The loudspeaker's output for one sample.
    @inline(__always)
    public func apply(_ x: Float) -> Float {
        let (drive, asymmetry) = parameters
        guard drive > 0 else { return x }
        let u = x + asymmetry * x * x
        return Math.tanh(drive * u) / drive
    }

    /// Energy of the distortion relative to the linear part of `output`, in dB (negative:
    /// the distortion is that far below). `output` is compared with the best gain times `input`.
    public static func distortionDB(input: [Float], output: [Float]) -> Double {
        precondition(input.count == output.count, "input and output must have the same length")
        var xy = 0.0, xx = 0.0
        for i in input.indices {
            xy += Double(input[i]) * Double(output[i])
            xx += Double(input[i]) * Double(input[i])
        }
        guard xx > 0 else { return -200 }
        let gain = xy / xx
        var linear = 0.0, rest = 0.0
        for i in input.indices {
            let l = gain * Double(input[i])
            linear += l * l
            let e = Double(output[i]) - l
            rest += e * e
        }
        // The quadratic term adds a little DC; a real path (and the room response) blocks it.
        var mean = 0.0
        for i in input.indices { mean += Double(output[i]) - gain * Double(input[i]) }
        mean /= Double(input.count)
        rest -= mean * mean * Double(input.count)
        guard linear > 0 else { return 0 }
        return 10 * Math.log10(max(rest, 1e-30) / linear)
    }
}
