
/// Follows how far the whole echo response has moved since a stored snapshot of it: the
/// measurement the drift estimator fits its line to.
///
/// The delay estimator's peak is the strongest lag of the whitened cross-correlation. In a room
/// with a clear direct path that is the direct path, and it moves only with the clock drift. In a
/// diffuse room several lags are nearly as strong, and the peak jumps between them as the far
/// end's spectrum changes (`aecbench suite --room decaying-noise`, drift50 seed 1: between 7 and
/// 17 ms, so the drift estimator kept restarting and fitted 34 ppm to a 50 ppm drift). A shift of
/// the response, on the other hand, is a phase ramp across all its bins whatever its shape: the
/// product of the current whitened cross-spectrum with the snapshot's conjugate,
/// `C_k = P_k * conj(A_k)`, has the phase `-w_k * shift`, and `q(t) = sum_k Re(C_k e^(i w_k t))`
/// peaks at the shift. It is searched a few lags around the last one and refined by Newton's
/// method, as the delay estimator refines its peak.
///
/// `q` at its peak, over the number of bins, is how much of the response the two still share
/// (1: the same response, shifted). Below ``minimumCoherence`` the room itself has changed: the
/// current spectrum becomes the snapshot, and the tracked delay goes on from where it was, so a
/// room change alone does not look like a step.
///
/// Thread safety: not thread-safe; owned by a ``DelayEstimator``. Nothing allocates after `init`.
final class ResponseShiftTracker {
    /// The share of the response the current spectrum must still have in common with the snapshot.
    private let minimumCoherence: Double
    /// Integer lags searched on each side of the last shift before refining.
    private let searchRadius: Int

    private let fftSize: Int
    private let bandLow: Int, bandHigh: Int
    private let anchorRe: UnsafeMutablePointer<Float>, anchorIm: UnsafeMutablePointer<Float>
    private let productRe: UnsafeMutablePointer<Float>, productIm: UnsafeMutablePointer<Float>
    private var hasAnchor = false
    /// The correlation index the snapshot's lags were counted from (`top` in the estimator).
    private var anchorTop = 0
    /// The tracked lag at the snapshot, in decimated samples.
    private var anchorLag = 0.0
    /// The last shift from the snapshot, in decimated samples of lag.
    private var lastShift = 0.0
    /// The coherence of the last measurement, 0 ... 1.
    private(set) var coherence = 0.0

    /// `minimumCoherence` and `searchRadius` are ``VoiceProcessingTuning/DelayEstimator``'s
    /// `shiftMinimumCoherence` and `shiftSearchRadius`.
    init(fftSize: Int, bandLow: Int, bandHigh: Int,
         minimumCoherence: Double = VoiceProcessingTuning.DelayEstimator().shiftMinimumCoherence,
         searchRadius: Int = VoiceProcessingTuning.DelayEstimator().shiftSearchRadius) {
        self.fftSize = fftSize
        self.minimumCoherence = minimumCoherence
        self.searchRadius = searchRadius
        self.bandLow = bandLow
        self.bandHigh = bandHigh
        let bins = fftSize / 2 + 1
        anchorRe = .allocate(capacity: bins); anchorIm = .allocate(capacity: bins)
        productRe = .allocate(capacity: bins); productIm = .allocate(capacity: bins)
        anchorRe.initialize(repeating: 0, count: bins); anchorIm.initialize(repeating: 0, count: bins)
        productRe.initialize(repeating: 0, count: bins); productIm.initialize(repeating: 0, count: bins)
    }

    deinit {
        anchorRe.deallocate(); anchorIm.deallocate()
        productRe.deallocate(); productIm.deallocate()
    }

    /// Takes the whitened cross-spectrum `re`/`im` (bins `bandLow ... bandHigh` used) whose
    /// correlation counts lags down from index `top`, and the lag its peak gives; returns the
    /// tracked lag in decimated samples.
    func track(re: UnsafePointer<Float>, im: UnsafePointer<Float>, top: Int, peakLag: Double) -> Double {
        guard hasAnchor else {
            snapshot(re: re, im: im, top: top, lag: peakLag)
            return peakLag
        }
        for k in bandLow...bandHigh {
            productRe[k] = re[k] * anchorRe[k] + im[k] * anchorIm[k]
            productIm[k] = im[k] * anchorRe[k] - re[k] * anchorIm[k]
        }
        // A later lag puts the peak at a smaller index: t = (top - anchorTop) - shift.
        let offset = Double(top - anchorTop)
        let expected = Int((offset - lastShift).rounded())
        var best = expected, bestValue = -Double.infinity
        for t in (expected - searchRadius)...(expected + searchRadius) {
            let value = correlation(at: Double(t))
            if value > bestValue { best = t; bestValue = value }
        }
        let t = refine(best)
        coherence = correlation(at: t) / Double(bandHigh - bandLow + 1)
        guard coherence >= minimumCoherence else {
            // The room changed: start a new snapshot where the tracked lag is now.
            let lag = anchorLag + lastShift
            snapshot(re: re, im: im, top: top, lag: lag)
            return lag
        }
        lastShift = offset - t
        return anchorLag + lastShift
    }

    /// Forgets the snapshot; the next measurement starts a new one at its peak.
    func reset() {
        hasAnchor = false
        lastShift = 0
        coherence = 0
    }

    private func snapshot(re: UnsafePointer<Float>, im: UnsafePointer<Float>, top: Int, lag: Double) {
        for k in bandLow...bandHigh {
            anchorRe[k] = re[k]
            anchorIm[k] = im[k]
        }
        anchorTop = top
        anchorLag = lag
        lastShift = 0
        coherence = 1
        hasAnchor = true
    }

    private func correlation(at t: Double) -> Double {
        BandCorrelation.value(at: t, re: productRe, im: productIm, bandLow: bandLow, bandHigh: bandHigh, fftSize: fftSize)
    }

    private func refine(_ peak: Int) -> Double {
        BandCorrelation.refinePeak(peak, re: productRe, im: productIm, bandLow: bandLow, bandHigh: bandHigh,
                                   fftSize: fftSize)
    }
}
