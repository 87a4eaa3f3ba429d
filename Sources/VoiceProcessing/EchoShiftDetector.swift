import DSP

/// Finds a jump of the echo's delay from the echo the canceller predicts, so the reference can
/// follow it at once and the canceller keeps what it learned.
///
/// A stream that drops or repeats audio moves the echo by tens of milliseconds within a call.
/// The delay estimator sees such a move only once its
/// averaged cross-spectrum has forgotten the old delay (about a second), and by then the
/// canceller's health has called the filter collapsed and reset it, so it learns the room again
/// from nothing, often just before the next move. But a pure move leaves the room as it was:
/// the canceller's prediction of the echo, `p = capture - output`, is the echo as it was before
/// the move, so the capture now matches `p` shifted by the move. This stage correlates the
/// capture with `p` over lags of ± ``EchoShift/maximumShiftMilliseconds`` (both decimated to
/// about 4 kHz, averaged over ``EchoShift/averagingMilliseconds`` of far-end activity); when
/// the correlation's peak has left lag 0 for the same lag in a few blocks in a row, the move is
/// refined to a sample at the full rate, and reported if the prediction moved by it leaves
/// ``EchoShift/minimumGainDB`` less of the capture than where it is. That test is what keeps
/// double talk out: a canceller that mis-adapts to the near end predicts part of it, and the near
/// end's own periodicity then makes peaks off lag 0 that no move explains. Under double talk a
/// true move leaves less than that, the talker being in the capture either way, but it leaves it
/// at the same move test after test, where pitch peaks wander: ``EchoShift/sustainedTests`` tests
/// in a row at one move, each with ``EchoShift/sustainedGainDB``, are a move too. Moving the reference
/// by exactly as much puts the echo back where the filter has it. The same test decides whether
/// a step of the device's reported delay moved the echo (``confirm(shift:)``): some servers'
/// reports wander by tens of milliseconds while the echo stays.
///
/// Nothing is learned while the far end is silent, or before the canceller has removed
/// ``EchoShift/learningERLEDB`` of the echo since it last started over: the prediction is then
/// not an echo. Once it has, a fall of its ERLE (which a move brings) does not stop the search.
/// After a reported move the correlation starts over, on history taken after it.
///
/// Thread safety: not thread-safe; used by the I/O thread only. Nothing allocates after `init`.
final class EchoShiftDetector {
    private let tuning: VoiceProcessingTuning.EchoShift
    private let blockSize: Int
    /// Full-rate samples per decimated sample.
    private let factor: Int
    /// How close another finding of a move must be to agree with the detector's, in samples.
    private let agreement: Double
    /// Lags searched on each side, and the least move acted on, in decimated samples.
    private let lags: Int, minimumLag: Int
    /// The running correlation's decay per block.
    private let decay: Float

    /// Decimated capture and prediction, oldest first; the newest sample is last.
    private let capture: UnsafeMutablePointer<Float>, predicted: UnsafeMutablePointer<Float>
    private let historyCount: Int
    /// The same at the full rate, for refining a move to a sample.
    private let fullCapture: UnsafeMutablePointer<Float>, fullPredicted: UnsafeMutablePointer<Float>
    private let fullCount: Int, refineCount: Int
    /// Decimated samples after a start before both histories hold only what came after it.
    private let warmup: Int
    /// `correlation[lags - s]`: capture against the prediction `s` decimated samples earlier, and
    /// that prediction's energy (each lag its own: the prediction's level changes within the span).
    /// Stored from the largest lag down, so the update runs forward through the history.
    private let correlation: UnsafeMutablePointer<Float>, predictedEnergy: UnsafeMutablePointer<Float>
    private var captureEnergy: Float = 0
    /// The partial sums of the decimation, and how many samples they hold.
    private var sums: (capture: Float, predicted: Float) = (0, 0)
    private var phase = 0
    /// Decimated samples pushed since the last start (history older than that is not used).
    private var filled = 0
    /// The move seen in the last block, and in how many blocks in a row.
    private var lastLag = 0, agreeing = 0
    /// The move the last tests in a row found with at least ``EchoShift/sustainedGainDB``, and how many.
    private var sustainedMove = 0, sustainedCount = 0
    /// Whether the canceller has removed ``EchoShift/learningERLEDB`` since it started over.
    private var hasLearned = false
    /// Moves reported so far.
    private(set) var moves = 0

    init(blockSize: Int, sampleRate: Int, tuning: VoiceProcessingTuning.EchoShift) {
        self.tuning = tuning
        self.blockSize = blockSize
        factor = max(1, sampleRate / 4000)
        let decimatedRate = Double(sampleRate) / Double(factor)
        agreement = tuning.agreementMilliseconds / 1000 * Double(sampleRate)
        lags = max(1, Int(tuning.maximumShiftMilliseconds / 1000 * decimatedRate))
        minimumLag = Int((tuning.minimumShiftMilliseconds / 1000 * decimatedRate).rounded(.up))
        decay = Float(Math.exp(-Double(blockSize) / Double(sampleRate) / (tuning.averagingMilliseconds / 1000)))
        historyCount = 2 * lags + blockSize / factor + 1
        refineCount = Int(tuning.refineMilliseconds / 1000 * Double(sampleRate))
        fullCount = 2 * (lags + 1) * factor + refineCount
        warmup = max(historyCount, fullCount / factor + 1)
        capture = .zeroed(historyCount)
        predicted = .zeroed(historyCount)
        fullCapture = .zeroed(fullCount)
        fullPredicted = .zeroed(fullCount)
        correlation = .zeroed(2 * lags + 1)
        predictedEnergy = .zeroed(2 * lags + 1)
    }

    deinit {
        capture.deallocate(); predicted.deallocate()
        fullCapture.deallocate(); fullPredicted.deallocate(); correlation.deallocate(); predictedEnergy.deallocate()
    }

    /// Takes a block of capture and the canceller's linear output for it. Returns a confirmed
    /// move of the echo, in samples (positive: the echo comes later than the canceller has it),
    /// or nil.
    ///
    /// - Parameters:
    ///   - farActive: whether the far end played in this block.
    ///   - cancellerERLE: the linear stage's ERLE now, dB (nil before the far end played).
    func push(capture input: UnsafePointer<Int16>, output: UnsafePointer<Int16>, farActive: Bool, cancellerERLE: Double?) -> Int? {
        let added = append(input, output)
        if let e = cancellerERLE, e >= tuning.learningERLEDB { hasLearned = true }
        guard farActive, hasLearned, filled >= warmup else { return nil }
        accumulate(added)
        guard let (lag, rival) = movedPeak() else {
            agreeing = 0
            return nil
        }
        agreeing = abs(lag - lastLag) <= 1 ? agreeing + 1 : 1
        lastLag = lag
        guard agreeing >= tuning.confirmBlocks else { return nil }
        let test = refine(around: lag * factor)
        // Speech's pitch makes peaks at other lags too; where the window is short of the moved
        // echo (a far end that starts in it) one of them can top the true move. A rival that
        // leaves less of the capture makes the move unclear: it waits for more of the echo.
        if let rival, refine(around: rival * factor).gainDB > test.gainDB { return nil }
        guard test.gainDB >= tuning.minimumGainDB || isSustained(test) else {
            agreeing = 0
            return nil
        }
        moves += 1
        reset()
        return test.move
    }

    /// Counts a test that leaves ``EchoShift/sustainedGainDB`` less at the move the tests before
    /// it found (within a decimated sample); whether ``EchoShift/sustainedTests`` have in a row.
    private func isSustained(_ test: (move: Int, gainDB: Double)) -> Bool {
        guard test.gainDB >= tuning.sustainedGainDB else {
            sustainedCount = 0
            return false
        }
        sustainedCount = sustainedCount > 0 && abs(test.move - sustainedMove) <= factor ? sustainedCount + 1 : 1
        sustainedMove = test.move
        return sustainedCount >= tuning.sustainedTests
    }

    /// Another finding of a move (the delay estimator's), `other` samples: the move the last
    /// ``EchoShift/corroboratedTests`` tests or more found in a row, each leaving
    /// ``EchoShift/sustainedGainDB`` less, if it is within ``EchoShift/agreementMilliseconds`` of
    /// it, taken as a move and refined to a sample; else nil.
    func takeCorroboratedMove(near other: Double) -> Int? {
        guard hasLearned, sustainedCount >= tuning.corroboratedTests,
              abs(Double(sustainedMove) - other) <= agreement else { return nil }
        let move = sustainedMove
        moves += 1
        reset()
        return move
    }

    /// Whether the prediction can ever tell a move of `shift` samples: the canceller has learned
    /// since it last started over, and the move is within the search.
    func canTest(shift: Int) -> Bool { hasLearned && abs(shift) <= lags * factor }

    /// Whether the history since the last move is long enough to test one.
    var isReady: Bool { filled >= warmup }

    /// Tests a move the device reported (a step of its delay): the move refined to a sample if the
    /// prediction moved by about `shift` leaves ``EchoShift/minimumGainDB`` less of the capture
    /// than where it is, else nil. Call after ``push(capture:output:farActive:cancellerERLE:)``.
    func confirm(shift: Int) -> Int? {
        let test = refine(around: shift)
        guard test.gainDB >= tuning.minimumGainDB else { return nil }
        moves += 1
        reset()
        return test.move
    }

    /// The canceller starts over: its prediction is no echo until it has learned again.
    func restart() {
        hasLearned = false
        reset()
    }

    /// Forgets the correlation and the history (after a move, or the canceller starting over).
    private func reset() {
        correlation.update(repeating: 0, count: 2 * lags + 1)
        predictedEnergy.update(repeating: 0, count: 2 * lags + 1)
        captureEnergy = 0
        filled = 0
        agreeing = 0
        lastLag = 0
        sustainedCount = 0
    }

    /// Appends the block to the full-rate and decimated histories; returns how many decimated
    /// samples it added.
    private func append(_ input: UnsafePointer<Int16>, _ output: UnsafePointer<Int16>) -> Int {
        let n = blockSize, added = (phase + n) / factor
        fullCapture.update(from: fullCapture + n, count: fullCount - n)
        fullPredicted.update(from: fullPredicted + n, count: fullCount - n)
        capture.update(from: capture + added, count: historyCount - added)
        predicted.update(from: predicted + added, count: historyCount - added)
        var next = historyCount - added
        for i in 0..<n {
            let c = Float(input[i]) * (1 / 32768), p = Float(Int(input[i]) - Int(output[i])) * (1 / 32768)
            fullCapture[fullCount - n + i] = c
            fullPredicted[fullCount - n + i] = p
            sums.capture += c
            sums.predicted += p
            phase += 1
            guard phase == factor else { continue }
            capture[next] = sums.capture
            predicted[next] = sums.predicted
            next += 1
            sums = (0, 0)
            phase = 0
        }
        filled += added
        return added
    }

    /// Adds the newest `added` decimated samples to the running correlation, after its decay.
    private func accumulate(_ added: Int) {
        let width = 2 * lags + 1
        for k in 0..<width {
            correlation[k] *= decay
            predictedEnergy[k] *= decay
        }
        captureEnergy *= decay
        for j in (historyCount - added)..<historyCount {
            // The capture `lags` back, so that moves either way find their prediction in the history.
            let m = capture[j - lags], q = predicted + j - 2 * lags
            captureEnergy += m * m
            for i in 0..<width {
                correlation[i] += m * q[i]
                predictedEnergy[i] += q[i] * q[i]
            }
        }
    }

    /// The lag the correlation peaks at, in decimated samples from where the canceller has the
    /// echo, if it has clearly left lag 0, and the best other peak off lag 0 that reaches
    /// ``EchoShift/minimumCorrelation`` too, if any.
    private func movedPeak() -> (lag: Int, rival: Int?)? {
        guard captureEnergy > 0 else { return nil }
        // The normalized correlation, squared with its sign, to leave out a square root per lag.
        func score(_ k: Int) -> Float {
            let c = correlation[k]
            return predictedEnergy[k] > 0 ? c * abs(c) / (captureEnergy * predictedEnergy[k]) : 0
        }
        var best = 0, bestScore = score(0)
        for k in 1...(2 * lags) {
            let s = score(k)
            if s > bestScore { best = k; bestScore = s }
        }
        let peak = Double(bestScore).squareRoot(), current = Double(max(0, score(lags))).squareRoot()
        let lag = lags - best
        guard abs(lag) >= max(1, minimumLag), peak >= tuning.minimumCorrelation,
              peak >= tuning.peakOverCurrent * current else { return nil }
        // Local maxima only, away from the peak and from lag 0.
        let floor = Float(tuning.minimumCorrelation * tuning.minimumCorrelation)
        var rival: Int?, rivalScore = floor
        for k in 1..<(2 * lags) where abs(k - best) > 1 && abs(k - lags) > 1 {
            let s = score(k)
            if s >= rivalScore, s >= score(k - 1), s >= score(k + 1) { rival = k; rivalScore = s }
        }
        return (lag, rival.map { lags - $0 })
    }

    /// The move at the full rate: the best of the shifts within a decimated sample of `shift`, over
    /// the last ``EchoShift/refineMilliseconds``, and how much less of the capture the prediction
    /// moved by it leaves than where it is, dB.
    private func refine(around shift: Int) -> (move: Int, gainDB: Double) {
        var best = shift, bestSum = -Float.infinity
        for s in (shift - factor)...(shift + factor) {
            var sum: Float = 0
            forEachRefined(s) { c, p in sum += c * p }
            if sum > bestSum { bestSum = sum; best = s }
        }
        var left: (moved: Float, staying: Float) = (0, 0)
        forEachRefined(best) { c, p in left.moved += (c - p) * (c - p) }
        forEachRefined(0) { c, p in left.staying += (c - p) * (c - p) }
        return (best, 10 * Math.log10(Double(max(left.staying, .leastNormalMagnitude) / max(left.moved, .leastNormalMagnitude))))
    }

    /// Calls `body` with each capture sample of the refining window and the prediction `shift`
    /// samples before it (the capture taken far enough back that either direction is in the history).
    @inline(__always)
    private func forEachRefined(_ shift: Int, _ body: (Float, Float) -> Void) {
        let reach = (lags + 1) * factor
        for n in (fullCount - refineCount)..<fullCount {
            body(fullCapture[n - reach], fullPredicted[n - reach - shift])
        }
    }
}
