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
        var sums = PearsonSums()
        for n in start..<max(start, end) { sums.add(reference[n], test[n + lag]) }
        return sums.correlation
    }
}

extension Alignment {
    /// Correlation of `test` with `reference` when the delay between them may change over
    /// time (an adaptive jitter buffer stretches and shrinks it): each `window` of the reference
    /// is aligned on its own, within `search` samples of a lag, and the windows' correlations
    /// are averaged weighted by the reference's energy in them. Windows with less than a hundredth
    /// of the mean window energy (silence) are left out.
    ///
    /// A jitter buffer moves the delay in steps, by dropping or repeating a frame, and a step
    /// can fall anywhere in a window. So a window may also be scored as two parts, split at one
    /// sample, each on its own lag (see ``steppedCorrelation(reference:test:lags:)``); it scores
    /// the better of the one-lag and the two-lag alignment. One step per window, between lags
    /// that each fit a quarter of it, keeps the measure from fitting noise.
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
            let found = steppedCorrelation(reference: piece, test: Array(test[lo..<hi]), lags: first...(first + 2 * search))
            weighted += energy * found.correlation
            total += energy
            if tracking { lag = found.lag + lo - start }
        }
        return total > 0 ? weighted / total : 0
    }

    /// The best alignment of `reference` in `test` with at most one change of lag: either one
    /// lag in `lags` for the whole, or a first part on one lag and the rest on another, split
    /// where the correlation of the joined signal is highest. The candidate lags are those that
    /// best fit each quarter of the reference, a step going from an earlier quarter's lag to a
    /// later one's; each part is at least an eighth of the reference.
    ///
    /// - Returns: the correlation of the better alignment, and the lag it ends on.
    static func steppedCorrelation(reference: [Float], test: [Float], lags: ClosedRange<Int>) -> Alignment {
        let single = find(reference: reference, test: test, lags: lags)
        let count = reference.count, quarter = count / 4
        // Parts of a few samples would fit anything.
        guard count >= 64 else { return single }
        // Quarter k starts `k * quarter` samples in: its lags relative to `test` are that much more.
        let fits = (0..<4).map { k in
            find(reference: Array(reference[(k * quarter)..<((k + 1) * quarter)]), test: test,
                 lags: (lags.lowerBound + k * quarter)...(lags.upperBound + k * quarter)).lag - k * quarter
        }
        var best = single
        var tried = Set<[Int]>()
        for i in 0..<3 {
            for j in (i + 1)..<4 where fits[i] != fits[j] && tried.insert([fits[i], fits[j]]).inserted {
                let stepped = bestSplit(reference: reference, test: test, before: fits[i], after: fits[j])
                if stepped > best.correlation { best = Alignment(lag: fits[j], correlation: stepped) }
            }
        }
        return best
    }

    /// The highest correlation of `reference` with `test` read on lag `a` up to some sample and
    /// on lag `b` from there, each part at least an eighth of the reference long.
    private static func bestSplit(reference: [Float], test: [Float], before a: Int, after b: Int) -> Double {
        // Samples where both lags land inside `test`.
        let lo = max(0, -a, -b), hi = min(reference.count, test.count - a, test.count - b)
        let shortest = reference.count / 8
        guard hi - lo > 2 * shortest else { return -1 }
        // Sums over the part before the split on lag `a`, and after it on lag `b`: a running
        // sum for the first, the total minus a running sum for the second.
        var after = PearsonSums()
        for n in lo..<hi { after.add(reference[n], test[n + b]) }
        var before = PearsonSums()
        var best = -1.0
        for n in lo..<(hi - shortest) {
            if n - lo >= shortest { best = max(best, before.merged(with: after).correlation) }
            before.add(reference[n], test[n + a])
            after.remove(reference[n], test[n + b])
        }
        return best
    }
}

/// Running sums for a Pearson correlation of pairs that can be added and removed.
private struct PearsonSums {
    var count = 0.0, sa = 0.0, sb = 0.0, saa = 0.0, sbb = 0.0, sab = 0.0

    mutating func add(_ x: Float, _ y: Float) { accumulate(Double(x), Double(y), 1) }
    mutating func remove(_ x: Float, _ y: Float) { accumulate(Double(x), Double(y), -1) }

    private mutating func accumulate(_ a: Double, _ b: Double, _ sign: Double) {
        count += sign; sa += sign * a; sb += sign * b
        saa += sign * a * a; sbb += sign * b * b; sab += sign * a * b
    }

    func merged(with other: PearsonSums) -> PearsonSums {
        PearsonSums(count: count + other.count, sa: sa + other.sa, sb: sb + other.sb,
                    saa: saa + other.saa, sbb: sbb + other.sbb, sab: sab + other.sab)
    }

    var correlation: Double {
        guard count > 1 else { return 0 }
        let cov = sab - sa * sb / count
        let va = saa - sa * sa / count, vb = sbb - sb * sb / count
        guard va > 0, vb > 0 else { return 0 }
        return cov / (va * vb).squareRoot()
    }
}
