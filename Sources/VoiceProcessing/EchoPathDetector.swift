/// Whether the microphone hears the loudspeaker at all, as ``VoiceProcessingUnit`` judges it.
///
/// Thread safety: a value type; safe from any thread.
public enum EchoPathState: UInt8, Sendable, Equatable {
    /// Not known yet: at the start, before the far end has played long enough to tell. The unit
    /// then assumes an echo (a loudspeaker call) and holds it back until the canceller converges.
    case unknown
    /// The far end comes back in the microphone (a loudspeaker, a leaking headset).
    case present
    /// The far end plays but nothing of it reaches the microphone (a headset, a far end played on
    /// another device): the unit leaves the near end alone, with no gating and no residual echo
    /// suppression; the linear canceller still runs, so an echo that appears is still removed.
    case absent
}

/// Tells an absent echo path from a canceller that has not converged yet.
///
/// Both look the same to the canceller's own energies: its output is as loud as its input. So
/// the decision comes from outside the canceller, from the delay estimator's generalized
/// cross-correlation of the far end with the microphone (``DelayEstimator``): a coherence
/// between the two, band by band in 150-1800 Hz (each bin whitened, so every band counts alike
/// whatever the talkers' spectra), at every lag of the search range, so it needs no alignment
/// and no converged filter. An echo gives a peak that stands out; near-end speech and noise only
/// add uncorrelated terms, so it shows through double talk.
///
/// Two independent talkers do not always give a flat correlation, though: over a second of
/// speech the whitened cross-spectrum of two voices can line up by chance, and in `aecbench`'s
/// echo-free scenario the peak's z-score reached 8.4 (mostly 3 to 5.5), past the estimator's
/// ``DelayEstimator/confident``. Echoes gave 21 to 31 in the loudspeaker rooms and 6 to 20 for
/// a headset's weak leak under a talker 20 dB louder. So:
///
/// - present: a peak of ``presentConfidence``, or a canceller that removes ``presentERLE`` of
///   what it hears (only an echo of the far end in the microphone allows that);
/// - absent: ``absentHops`` estimator hops in a row under ``DelayEstimator/confident``, over at
///   least ``absentFarSeconds`` of far-end activity, with the canceller removing less than
///   ``absentERLE``;
/// - a hop in between changes nothing (and restarts the count towards absent).
///
/// Once an echo has been seen, absent needs far more: ``absentSecondsAfterEcho`` of far-end
/// activity without a peak. A weak echo under a much louder talker lowers the peak for as long
/// as the double talk lasts (a headset's leak under a talker 20 dB louder: z-scores of 6 to 11
/// over 6 s), and judging it absent there let the echo through at the end of the double talk
/// (`aecbench suite`'s `headset`: ERLE after double talk 23.0 → 6.4 dB). An echo path that
/// really goes away mid-call (a headset plugged in) is still found, ten seconds later.
///
/// Thread safety: not thread-safe; the I/O thread only. Nothing allocates.
final class EchoPathDetector {
    /// A z-score that only an echo reaches (above the chance peaks of two independent talkers).
    static let presentConfidence = 10.0
    /// Estimator hops (128 ms each) in a row without a confident peak.
    static let absentHops = 6
    /// Far-end activity those hops must span, seconds.
    static let absentFarSeconds = 0.5
    /// The same, once an echo has been seen since the last reset, seconds of far-end activity.
    static let absentSecondsAfterEcho = 10.0
    /// Linear ERLE under which the canceller removes nothing, and over which it clearly removes an echo, dB.
    static let absentERLE = 3.0
    static let presentERLE = 10.0

    private(set) var state = EchoPathState.unknown
    private let absentFarBlocks: Int
    private let absentFarBlocksAfterEcho: Int
    private let absentHopsAfterEcho: Int
    private var hasSeenEcho = false
    private var lowHops = 0
    private var farBlocks = 0

    init(blockSize: Int, sampleRate: Int) {
        absentFarBlocks = Int(Self.absentFarSeconds * Double(sampleRate) / Double(blockSize))
        absentFarBlocksAfterEcho = Int(Self.absentSecondsAfterEcho * Double(sampleRate) / Double(blockSize))
        // A hop is 128 ms; the far end's pauses make the hops outnumber its active time.
        absentHopsAfterEcho = Int(Self.absentSecondsAfterEcho / 0.128)
    }

    /// Counts a block; `farActive` when the far end plays in it.
    func endBlock(farActive: Bool) {
        if farActive { farBlocks += 1 }
    }

    /// Takes one delay-estimator measurement and the canceller's current linear ERLE (dB, nil
    /// before any far-end activity).
    func hop(confidence: Double, cancellerERLE: Double?) {
        if confidence >= Self.presentConfidence || (cancellerERLE ?? 0) >= Self.presentERLE {
            state = .present
            hasSeenEcho = true
            lowHops = 0
            farBlocks = 0
            return
        }
        guard confidence < DelayEstimator.confident else {
            // Something may be there: start counting again.
            lowHops = 0
            farBlocks = 0
            return
        }
        lowHops += 1
        let hops = hasSeenEcho ? absentHopsAfterEcho : Self.absentHops
        let blocks = hasSeenEcho ? absentFarBlocksAfterEcho : absentFarBlocks
        if lowHops >= hops && farBlocks >= blocks && (cancellerERLE ?? 0) < Self.absentERLE {
            state = .absent
        }
    }

    /// Starts over (the streams restarted: the device, and so the echo path, may have changed).
    func reset() {
        state = .unknown
        hasSeenEcho = false
        lowHops = 0
        farBlocks = 0
    }
}
