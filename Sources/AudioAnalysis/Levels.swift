/// Signal levels and energy ratios.
///
/// Thread safety: stateless; safe from any thread.
public enum Levels {
    /// Sum of squares.
    public static func energy<C: Collection>(_ x: C) -> Double where C.Element == Float {
        x.reduce(0) { $0 + Double($1) * Double($1) }
    }

    /// Root mean square (0 for an empty signal).
    public static func rms<C: Collection>(_ x: C) -> Double where C.Element == Float {
        x.isEmpty ? 0 : (energy(x) / Double(x.count)).squareRoot()
    }

    /// Level relative to full scale, in dBFS (floored at -200).
    public static func dBFS<C: Collection>(_ x: C) -> Double where C.Element == Float {
        decibels(power: rms(x) * rms(x))
    }

    /// 10 log10(power), floored at -200 dB so silence stays finite.
    public static func decibels(power: Double) -> Double {
        power > 1e-20 ? 10 * Math.log10(power) : -200
    }

    /// Echo return loss enhancement: how much `residual` is below `echo`, in dB.
    ///
    /// Both are the same stretch of far-end single talk: the echo as it reached the
    /// microphone and what remained after cancellation.
    public static func erle<C: Collection>(echo: C, residual: C) -> Double where C.Element == Float {
        decibels(power: energy(echo) / max(energy(residual), 1e-20))
    }

    /// Scales `x` so its RMS becomes `targetRMS`.
    public static func normalized(_ x: [Float], rms targetRMS: Double) -> [Float] {
        let current = rms(x)
        guard current > 0 else { return x }
        let gain = Float(targetRMS / current)
        return x.map { $0 * gain }
    }
}
