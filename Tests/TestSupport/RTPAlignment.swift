import AudioAnalysis

/// Correlation of received speech with its source when the receiver's playout may
/// have moved in time along the way: a jitter buffer drops or repeats whole frames
/// in pauses and extends the audio when it runs dry, so the delay changes in steps.
public enum RTPAlignment {
    /// The energy-weighted mean of per-segment correlations, each segment aligned on
    /// its own at the previous segment's lag plus a whole number of `step`s.
    ///
    /// - Parameters:
    ///   - maxLag: the largest initial delay to search, in samples (found on the first 3 s).
    ///   - step: the size of a delay change, in samples (one frame).
    ///   - segment: segment length in samples.
    /// - Returns: the correlation and each segment's lag.
    public static func stepwise(reference: [Float], test: [Float], maxLag: Int, step: Int, segment: Int,
                                steps: Int = 3) -> (correlation: Double, lags: [Int]) {
        let head = min(reference.count, 3 * segment)
        let initial = Alignment.find(reference: Array(reference.prefix(head)),
                                     test: Array(test.prefix(head + maxLag)), maxLag: maxLag)
        var lag = initial.lag
        var lags: [Int] = []
        var weighted = 0.0, weights = 0.0
        var start = 0
        while start + segment <= reference.count {
            let ref = Array(reference[start..<(start + segment)])
            var best = (correlation: -2.0, lag: lag)
            for j in -steps...steps {
                let candidate = lag + j * step
                guard start + candidate >= 0, start + candidate + segment <= test.count else { continue }
                let c = Alignment.correlation(ref, Array(test[(start + candidate)..<(start + candidate + segment)]), lag: 0)
                if c > best.correlation { best = (c, candidate) }
            }
            if Levels.dBFS(ref) > -50, best.correlation > -2 {
                let energy = Levels.energy(ref)
                weighted += best.correlation * energy
                weights += energy
                lag = best.lag
            }
            lags.append(lag)
            start += segment
        }
        return (weights > 0 ? weighted / weights : 0, lags)
    }
}
