import DSP

/// How much of the microphone is a linear function of the far end: the magnitude-squared
/// coherence between the aligned reference and the capture, from cross-spectra smoothed over
/// about 100 ms, averaged over 300 Hz to 4 kHz (and, apart, over 4 to 8 kHz: ``highCoherence``).
///
/// Echo through any linear path, known to the canceller or not, keeps the coherence high; a
/// near-end talker, who is not in the far end, lowers it. That holds when the canceller cannot
/// say anything (just reset) and when the near end is no louder than the echo, where level
/// tests fail. The level the echo alone reaches depends on the room (0.4 in a reverberant room,
/// 0.9 in a dry one), so it is learned from blocks the caller labels as echo only, and the near
/// end talks when the coherence falls under a share of it
/// (``VoiceProcessingTuning/Coherence/nearEndRatio``, 0.6). The transform is two blocks rounded
/// up to a power of two (fixed by the algorithm).
///
/// Thread safety: not thread-safe; used by the I/O thread only. Nothing allocates after `init`.
final class EchoCoherence {
    /// The rules' numbers.
    private let tuning: VoiceProcessingTuning.Coherence
    private let blockSize: Int
    private let fft: RealFFT
    private let window, input, xRe, xIm, dRe, dIm, lastCapture, lastReference: UnsafeMutablePointer<Float>
    private let sxx, sdd, sxdRe, sxdIm: UnsafeMutablePointer<Double>
    private let firstBin: Int, endBin: Int, highEndBin: Int
    /// Smoothing per block: about 100 ms by default.
    private let smoothing: Double
    private var hasSpectra = false
    /// The last block's coherence, 0 ... 1.
    private(set) var coherence = 0.0
    /// The same over 4 to 8 kHz, when made `withHighBand` (0 otherwise, or where the rate has no
    /// such band): fricatives, whose echo a canceller that has rarely heard them there does not
    /// remove.
    private(set) var highCoherence = 0.0
    /// The coherence echo alone reaches in this room.
    private var echoLevel = 0.0
    private var learnedBlocks = 0

    /// `withHighBand`: also keep ``highCoherence`` (the reference is transformed in full either
    /// way; only the smoothing over 4 to 8 kHz is saved without it).
    init(blockSize: Int, sampleRate: Int, withHighBand: Bool = false, tuning: VoiceProcessingTuning.Coherence = .init()) {
        self.tuning = tuning
        self.blockSize = blockSize
        smoothing = tuning.smoothing
        var size = 4
        while size < 2 * blockSize { size <<= 1 }
        fft = RealFFT(size: size)
        firstBin = max(1, tuning.bandLowHz * size / sampleRate)
        endBin = min(size / 2, tuning.bandHighHz * size / sampleRate)
        highEndBin = withHighBand ? min(size / 2, tuning.highBandTopHz * size / sampleRate) : endBin
        window = .hann(2 * blockSize)
        input = .zeroed(size)
        xRe = .zeroed(size / 2 + 1)
        xIm = .zeroed(size / 2 + 1)
        dRe = .zeroed(size / 2 + 1)
        dIm = .zeroed(size / 2 + 1)
        lastCapture = .zeroed(blockSize)
        lastReference = .zeroed(blockSize)
        sxx = .zeroed(size / 2 + 1)
        sdd = .zeroed(size / 2 + 1)
        sxdRe = .zeroed(size / 2 + 1)
        sxdIm = .zeroed(size / 2 + 1)
    }

    deinit {
        for buffer in [window, input, xRe, xIm, dRe, dIm, lastCapture, lastReference] { buffer.deallocate() }
        for buffer in [sxx, sdd, sxdRe, sxdIm] { buffer.deallocate() }
    }

    /// Whether the echo-only level has been learned (from the tuning's `minimumLearnedBlocks` blocks).
    var isLearned: Bool { learnedBlocks >= tuning.minimumLearnedBlocks }

    /// Whether the near end talks, by this test; false until the echo-only level is learned.
    var isNearEnd: Bool { isLearned && coherence < tuning.nearEndRatio * echoLevel }

    /// The same by the test after the release, which needs a deeper fall (an echo that moved
    /// from its reference lowers the coherence too).
    var isNearEndOverResidual: Bool { isLearned && coherence < tuning.residualNearEndRatio * echoLevel }

    /// Takes the block's capture and aligned reference (16-bit) and updates ``coherence`` over
    /// the last two blocks.
    func update(capture: UnsafePointer<Int16>, reference: UnsafePointer<Int16>) {
        transform(reference, last: lastReference, into: xRe, xIm)
        accumulate(capture)
    }

    /// The same with the reference `other` (same block size and rate) has just transformed for
    /// this block: the echo gate measures the capture and the canceller's output against one far
    /// end, so it transforms it once.
    func update(capture: UnsafePointer<Int16>, referenceOf other: EchoCoherence) {
        precondition(other.blockSize == blockSize && other.endBin == endBin, "coherences of different sizes")
        xRe.update(from: other.xRe, count: highEndBin)
        xIm.update(from: other.xIm, count: highEndBin)
        accumulate(capture)
    }

    /// Transforms `capture` and folds both spectra into the smoothed cross-spectra.
    private func accumulate(_ capture: UnsafePointer<Int16>) {
        transform(capture, last: lastCapture, into: dRe, dIm)
        let a = hasSpectra ? smoothing : 0
        coherence = meanCoherence(firstBin..<endBin, smoothing: a)
        highCoherence = endBin < highEndBin ? meanCoherence(endBin..<highEndBin, smoothing: a) : 0
        hasSpectra = true
    }

    /// Folds the bins of `range` into the smoothed cross-spectra; their mean coherence.
    private func meanCoherence(_ range: Range<Int>, smoothing a: Double) -> Double {
        var sum = 0.0
        for k in range {
            let xr = Double(xRe[k]), xi = Double(xIm[k]), dr = Double(dRe[k]), di = Double(dIm[k])
            sxx[k] = a * sxx[k] + (1 - a) * (xr * xr + xi * xi)
            sdd[k] = a * sdd[k] + (1 - a) * (dr * dr + di * di)
            // X conj(D)
            sxdRe[k] = a * sxdRe[k] + (1 - a) * (xr * dr + xi * di)
            sxdIm[k] = a * sxdIm[k] + (1 - a) * (xi * dr - xr * di)
            let denominator = sxx[k] * sdd[k]
            sum += denominator > 0 ? (sxdRe[k] * sxdRe[k] + sxdIm[k] * sxdIm[k]) / denominator : 0
        }
        return sum / Double(range.count)
    }

    /// The spectrum of the last two blocks (`last`, then `block`), Hann-windowed; `block` then
    /// becomes `last`.
    private func transform(_ block: UnsafePointer<Int16>, last: UnsafeMutablePointer<Float>,
                           into real: UnsafeMutablePointer<Float>, _ imaginary: UnsafeMutablePointer<Float>) {
        for i in 0..<blockSize {
            input[i] = last[i] * window[i]
            last[i] = Float(block[i])
            input[blockSize + i] = last[i] * window[blockSize + i]
        }
        fft.forward(input, real: real, imaginary: imaginary)
    }

    /// How the canceller's output relates to its own echo estimate in the last block, -1 ... 1:
    /// `self` has seen the capture `d`, `output` the canceller's output `e` (same block), and the
    /// estimate is `d - e`. The mean over 300 Hz to 4 kHz of the cosine of the angle between `e`
    /// and the estimate, bin by bin. Near 0 when the output is independent of the estimate (a
    /// converged canceller, or a talker over it), positive when the estimate is short of the echo,
    /// and negative when the output carries the estimate's negation: the canceller subtracts an
    /// echo that is not in the microphone, as after the loudspeaker moved. Each bin counts alike,
    /// so a few loud harmonics that line up by chance cannot decide it.
    func estimateCorrelation(output: EchoCoherence) -> Double {
        var sum = 0.0
        for k in firstBin..<endBin {
            let er = Double(output.dRe[k]), ei = Double(output.dIm[k])
            let yr = Double(dRe[k]) - er, yi = Double(dIm[k]) - ei
            let magnitudes = ((er * er + ei * ei) * (yr * yr + yi * yi)).squareRoot()
            if magnitudes > 0 { sum += (er * yr + ei * yi) / magnitudes }
        }
        return sum / Double(endBin - firstBin)
    }

    /// Learns the echo-only level from the last block: call it for blocks known to hold echo
    /// and no near end.
    func learnEchoOnly() {
        learnedBlocks += 1
        let rate = learnedBlocks <= tuning.runningMeanBlocks ? 1 / Double(learnedBlocks) : tuning.learningRate
        echoLevel += rate * (coherence - echoLevel)
    }

    /// Forgets everything (a new device or room).
    func reset() {
        lastCapture.update(repeating: 0, count: blockSize)
        lastReference.update(repeating: 0, count: blockSize)
        hasSpectra = false
        coherence = 0
        highCoherence = 0
        echoLevel = 0
        learnedBlocks = 0
    }
}
