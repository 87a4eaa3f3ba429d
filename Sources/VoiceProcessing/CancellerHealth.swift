import DSP

/// Watches the echo canceller from outside: how much echo it removes (ERLE, from its input and
/// output energies while the far end plays) and whether its filter no longer fits the echo:
///
/// - divergence: its output louder than its input (+3 dB) for a tenth of a second, which only
///   a wrong filter does;
/// - collapse: once it has converged (ERLE of 15 dB over about a second), removing nothing at
///   all (output as loud as input in two 0.2 s windows of far-end activity in a row, with the
///   capture no more than 6 dB above the echo return learned at convergence), which is what
///   an echo-path change does (the phone moved, a door opened). In double talk the
///   near end is in both the input and the output, so a filter that still fits takes the echo
///   out and the output stays below the input; one that mis-adapts can match it for a moment,
///   which is why one window is not enough.
///
/// Thread safety: not thread-safe; used by the I/O thread only. Nothing allocates.
final class CancellerHealth {
    enum Verdict { case normal, diverged }

    let blockSize: Int
    /// The rules' numbers.
    private let tuning: VoiceProcessingTuning.CancellerHealth
    /// Far-end block energy (16-bit units, summed over a block) above which the far end is
    /// active: -50 dBFS mean power by default.
    private let farThreshold: Double
    /// Whether the far end played in the last block (above ``farThreshold``).
    private(set) var isFarActive = false
    private var captureAverage = 0.0
    private var outputAverage = 0.0
    private var hasAverage = false
    private var divergentBlocks = 0
    /// Since the last reset: the ERLE average has reached ``convergedERLE``.
    private(set) var hasConverged = false
    private var sinceReset = (capture: 0.0, output: 0.0, reference: 0.0, blocks: 0)
    /// Capture over reference energy when it converged: the echo's return, with what near-end
    /// speech there was.
    private var echoReturn = 0.0
    /// Input, output and reference energies over the last ``blocksPerWindow`` far-end blocks.
    private var recent = (capture: 0.0, output: 0.0, reference: 0.0)
    private var recentBlocks = 0
    private var collapsedWindows = 0
    /// Windows of 0.2 s in a row that must remove nothing (2 by default: 0.4 s). One window
    /// fired once in double talk in `aecbench suite` (base, seed 1: the canceller mis-adapts for
    /// a moment).
    private let collapseWindows: Int
    private let blocksPerWindow: Int
    /// The ERLE of convergence as a power ratio.
    private let convergedPower: Double

    init(blockSize: Int, sampleRate: Int, tuning: VoiceProcessingTuning.CancellerHealth = .init()) {
        self.blockSize = blockSize
        self.tuning = tuning
        farThreshold = Double(blockSize) * 32768 * 32768 * tuning.farActivePower
        blocksPerWindow = max(1, sampleRate * tuning.windowMilliseconds / 1000 / blockSize)
        collapseWindows = tuning.collapseWindows
        convergedPower = Math.pow(10, tuning.convergedERLEDB / 10)
    }

    /// The last block's capture energy (16-bit units squared, summed), for whoever else needs it.
    private(set) var captureEnergy = 0.0

    /// The linear stage's echo return loss enhancement, dB (nil before far-end activity).
    var erleDB: Double? {
        guard hasAverage, outputAverage > 0 else { return nil }
        return 10 * Math.log10(max(captureAverage, 1) / outputAverage)
    }

    func update(capture: UnsafePointer<Int16>, reference: UnsafePointer<Int16>, output: UnsafePointer<Int16>) -> Verdict {
        let (sd, sx, se) = blockEnergies(capture, reference, output, count: blockSize)
        captureEnergy = sd
        isFarActive = sx > farThreshold
        guard isFarActive else {
            divergentBlocks = 0
            return .normal
        }
        // About a second of far-end activity.
        let a = hasAverage ? tuning.erleAverageRate : 1
        captureAverage += a * (sd - captureAverage)
        outputAverage += a * (se - outputAverage)
        hasAverage = true
        if se > tuning.divergenceRatio * sd + Double(blockSize) * tuning.divergenceFloor {
            divergentBlocks += 1
            if divergentBlocks >= tuning.divergenceBlocks {
                divergentBlocks = 0
                return .diverged
            }
        } else {
            divergentBlocks = 0
        }
        return collapsed(sd, se, sx) ? .diverged : .normal
    }

    /// Whether a canceller that had converged since its last reset now removes nothing.
    private func collapsed(_ sd: Double, _ se: Double, _ sx: Double) -> Bool {
        if !hasConverged {
            let a = sinceReset.blocks == 0 ? 1 : tuning.convergenceAverageRate
            sinceReset.capture += a * (sd - sinceReset.capture)
            sinceReset.output += a * (se - sinceReset.output)
            sinceReset.reference += a * (sx - sinceReset.reference)
            sinceReset.blocks += 1
            hasConverged = sinceReset.blocks >= tuning.convergedWindows * blocksPerWindow
                && sinceReset.capture > convergedPower * sinceReset.output
            if hasConverged { echoReturn = sinceReset.capture / sinceReset.reference }
            return false
        }
        recent.capture += sd
        recent.output += se
        recent.reference += sx
        recentBlocks += 1
        guard recentBlocks >= blocksPerWindow else { return false }
        // A block whose capture is over 6 dB above the learned echo return holds near-end
        // speech (or a much louder echo): it says nothing about the filter, so it does not count.
        let echoOnly = recent.capture <= tuning.nearEndReturnRatio * echoReturn * recent.reference
        collapsedWindows = echoOnly && recent.output >= recent.capture ? collapsedWindows + 1 : 0
        recent = (0, 0, 0)
        recentBlocks = 0
        return collapsedWindows >= collapseWindows
    }

    /// The reference followed a move of the echo: the windows that saw the filter out of place
    /// say nothing about it now.
    func forgetWindows() {
        divergentBlocks = 0
        recent = (0, 0, 0)
        recentBlocks = 0
        collapsedWindows = 0
    }

    /// The canceller starts over: it must converge again before a collapse counts.
    func reset() {
        divergentBlocks = 0
        hasConverged = false
        sinceReset = (0, 0, 0, 0)
        recent = (0, 0, 0)
        recentBlocks = 0
        collapsedWindows = 0
    }
}
