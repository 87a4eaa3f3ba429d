import DSP

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

    /// ERLE over the stretches `ranges` of a recording: all the echo energy in them over all the
    /// residual energy, in dB. `echo` and `residual` are aligned; indices past either's end are
    /// left out. The callers (tools, benches) each choose their stretches and floor; the sum is here.
    ///
    /// - Parameter residualFloor: the residual energy is taken as at least this (a silent
    ///   residual would give an infinite ratio).
    /// - Returns: nil when the echo has no energy in `ranges` (nothing to measure).
    public static func erle(echo: [Float], residual: [Float], over ranges: [Range<Int>],
                            residualFloor: Double = 1e-20) -> Double? {
        let valid = 0..<min(echo.count, residual.count)
        var e = 0.0, r = 0.0
        for range in ranges {
            for i in range.clamped(to: valid) {
                e += Double(echo[i]) * Double(echo[i])
                r += Double(residual[i]) * Double(residual[i])
            }
        }
        guard e > 0 else { return nil }
        return decibels(power: e / max(r, residualFloor))
    }

    /// The frames of far-end single talk in a recording of a call, for ``erle(echo:residual:over:residualFloor:)``:
    /// `frame`-sample frames starting every `frame` samples in `start..<end` where the echo is above
    /// `echoAbove` dBFS and the near-end talker below `nearBelow` dBFS.
    ///
    /// - Parameters:
    ///   - nearGuard: samples either side of the frame where the talker must be quiet too (a
    ///     processed signal lags its input, so speech just outside the frame can leak into it).
    ///   - skippingEchoFrames: how many frames with echo to leave out first (while a canceller converges).
    public static func farEndSingleTalk(near: [Float], echo: [Float], frame: Int, from start: Int, to end: Int,
                                        nearBelow: Double, echoAbove: Double, nearGuard: Int = 0,
                                        skippingEchoFrames: Int = 0) -> [Range<Int>] {
        var frames: [Range<Int>] = []
        var echoFrames = 0
        for first in stride(from: start, to: end, by: frame) {
            let range = first..<(first + frame)
            guard dBFS(echo[range]) > echoAbove else { continue }
            echoFrames += 1
            guard echoFrames > skippingEchoFrames,
                  dBFS(near[(first - nearGuard)..<(first + frame + nearGuard)]) < nearBelow else { continue }
            frames.append(range)
        }
        return frames
    }

    /// Scales `x` so its RMS becomes `targetRMS`.
    public static func normalized(_ x: [Float], rms targetRMS: Double) -> [Float] {
        let current = rms(x)
        guard current > 0 else { return x }
        let gain = Float(targetRMS / current)
        return x.map { $0 * gain }
    }
}
