/// Where one signal best matches another, and how well.
///
/// Thread safety: a value type; safe to use from any thread.
public struct Alignment: Sendable, Equatable {
    /// Samples by which `test` lags `reference` (positive: `test` is later).
    public var lag: Int
    /// Pearson correlation of the overlapping parts at that lag, in [-1, 1].
    public var correlation: Double

    public init(lag: Int, correlation: Double) {
        self.lag = lag
        self.correlation = correlation
    }

    /// Finds the lag in `-maxLag...maxLag` that maximises the cross-correlation
    /// of `reference` and `test`, and the correlation coefficient there.
    public static func find(reference: [Float], test: [Float], maxLag: Int) -> Alignment {
        find(reference: reference, test: test, lags: -maxLag...maxLag)
    }

    /// The lag in `lags` that maximises the cross-correlation (the first on a tie), and the
    /// correlation coefficient there.
    static func find(reference: [Float], test: [Float], lags: ClosedRange<Int>) -> Alignment {
        let xcorr = Convolution.crossCorrelation(reference, test, lags: lags)
        var best = 0
        for i in xcorr.indices where xcorr[i] > xcorr[best] { best = i }
        let lag = lags.lowerBound + best
        return Alignment(lag: lag, correlation: correlation(reference, test, lag: lag))
    }

    /// Pearson correlation of `reference[n]` with `test[n + lag]` over their overlap.
    public static func correlation(_ reference: [Float], _ test: [Float], lag: Int) -> Double {
        let start = max(0, -lag)
        let end = min(reference.count, test.count - lag)
        guard end - start > 1 else { return 0 }
        var sa = 0.0, sb = 0.0, saa = 0.0, sbb = 0.0, sab = 0.0
        for n in start..<end {
            let a = Double(reference[n]), b = Double(test[n + lag])
            sa += a; sb += b; saa += a * a; sbb += b * b; sab += a * b
        }
        let count = Double(end - start)
        let cov = sab - sa * sb / count
        let va = saa - sa * sa / count, vb = sbb - sb * sb / count
        guard va > 0, vb > 0 else { return 0 }
        return cov / (va * vb).squareRoot()
    }
}

extension Alignment {
    /// Correlation of `test` with `reference` when the delay between them may change over
    /// time (an adaptive jitter buffer stretches and shrinks it): each `window` of the reference
    /// is aligned on its own, within `search` samples of a lag, and the windows' correlations
    /// are averaged weighted by the reference's energy in them. Windows with less than a hundredth
    /// of the mean window energy (silence) are left out.
    ///
    /// This is the one measure of received speech against its source: `voicecall rtp compare`
    /// (and so `Tools/interop/run`), the RTP tests and the demo report all use it.
    ///
    /// - Parameters:
    ///   - lag: where the search starts (typically ``find(reference:test:maxLag:)`` over the whole signal).
    ///   - tracking: search each window around the lag found for the previous window with speech
    ///     instead of around `lag`, so a delay that wanders further than `search` over the call,
    ///     a little per window, is followed.
    /// - Returns: the weighted mean correlation, 0 when the reference is silent.
    public static func segmentedCorrelation(reference: [Float], test: [Float], around lag: Int,
                                            window: Int, search: Int, tracking: Bool = false) -> Double {
        let starts = Array(stride(from: 0, to: reference.count - window + 1, by: window))
        let energies = starts.map { Levels.energy(reference[$0..<($0 + window)]) }
        let mean = energies.reduce(0, +) / Double(max(1, energies.count))
        var lag = lag
        var weighted = 0.0, total = 0.0
        for (start, energy) in zip(starts, energies) where energy > mean / 100 {
            let lo = max(0, start + lag - search), hi = min(test.count, start + window + lag + search)
            guard hi - lo > window / 2 else { continue }
            let piece = Array(reference[start..<(start + window)])
            // Lags relative to the test slice, which starts at `lo`: `start + lag - search` in the
            // whole test is `first` in the slice (past its start where the slice was clipped at 0).
            let first = start + lag - search - lo
            let found = find(reference: piece, test: Array(test[lo..<hi]), lags: first...(first + 2 * search))
            weighted += energy * found.correlation
            total += energy
            if tracking { lag = found.lag + lo - start }
        }
        return total > 0 ? weighted / total : 0
    }
}
