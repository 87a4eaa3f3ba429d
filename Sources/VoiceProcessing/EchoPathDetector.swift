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
/// a headset's weak leak under a talker 20 dB louder. So (the numbers are
/// ``VoiceProcessingTuning/EchoPath``'s defaults):
///
/// - present: a peak of 10, or a canceller that removes 10 dB of what it hears (only an echo of
///   the far end in the microphone allows that);
/// - absent: 6 estimator hops in a row under ``DelayEstimator/confident``, over at least 0.5 s of
///   far-end activity, with the canceller removing less than 3 dB;
/// - a hop in between changes nothing (and restarts the count towards absent).
///
/// Once the canceller has removed 10 dB of an echo, absent needs far more: 10 s of far-end
/// activity without a peak. A peak alone does not earn that wait: two voices lined up by chance
/// at z 10 (`aecbench`'s `echofreeswap`), and with it the path stayed present for a whole
/// echo-free call, MDF diverging on the talker and each reset holding the talker back again. A weak echo under a much louder talker lowers the peak for as long
/// as the double talk lasts (a headset's leak under a talker 20 dB louder: z-scores of 6 to 11
/// over 6 s), and judging it absent there let the echo through at the end of the double talk
/// (`aecbench suite`'s `headset`: ERLE after double talk 23.0 → 6.4 dB). An echo path that
/// really goes away mid-call (a headset plugged in) is still found, ten seconds later.
///
/// Thread safety: not thread-safe; the I/O thread only. Nothing allocates.
final class EchoPathDetector {
    /// The rules' numbers.
    let tuning: VoiceProcessingTuning.EchoPath
    /// The delay estimator's z-score for a real peak: under it, a hop counts towards absent.
    private let confident: Double

    private(set) var state = EchoPathState.unknown
    private let absentFarBlocks: Int
    private let absentFarBlocksAfterEcho: Int
    private let absentHopsAfterEcho: Int
    private var hasSeenEcho = false
    private var lowHops = 0
    private var farBlocks = 0

    /// - Parameters:
    ///   - confident: the delay estimator's z-score for a real peak.
    ///   - hopSeconds: the time between the estimator's measurements.
    init(blockSize: Int, sampleRate: Int, tuning: VoiceProcessingTuning.EchoPath = .init(),
         confident: Double = VoiceProcessingTuning.DelayEstimator().confidentZScore,
         hopSeconds: Double = Double(VoiceProcessingTuning.DelayEstimator().hopMilliseconds) / 1000) {
        self.tuning = tuning
        self.confident = confident
        absentFarBlocks = Int(tuning.absentFarSeconds * Double(sampleRate) / Double(blockSize))
        absentFarBlocksAfterEcho = Int(tuning.absentFarSecondsAfterEcho * Double(sampleRate) / Double(blockSize))
        // The far end's pauses make the hops outnumber its active time.
        absentHopsAfterEcho = Int(tuning.absentFarSecondsAfterEcho / hopSeconds)
    }

    /// Counts a block; `farActive` when the far end plays in it.
    func endBlock(farActive: Bool) {
        if farActive { farBlocks += 1 }
    }

    /// Takes one delay-estimator measurement and the canceller's current linear ERLE (dB, nil
    /// before any far-end activity).
    func hop(confidence: Double, cancellerERLE: Double?) {
        let removed = (cancellerERLE ?? 0) >= tuning.presentERLEDB
        if confidence >= tuning.presentZScore || removed {
            state = .present
            // A peak alone may be two voices lining up by chance: only an echo the canceller
            // can remove earns the long wait before absent.
            if removed || tuning.peakConfirmsEcho { hasSeenEcho = true }
            lowHops = 0
            farBlocks = 0
            return
        }
        guard confidence < confident else {
            // Something may be there: start counting again.
            lowHops = 0
            farBlocks = 0
            return
        }
        lowHops += 1
        let hops = hasSeenEcho ? absentHopsAfterEcho : tuning.absentHops
        let blocks = hasSeenEcho ? absentFarBlocksAfterEcho : absentFarBlocks
        if lowHops >= hops && farBlocks >= blocks && (cancellerERLE ?? 0) < tuning.absentERLEDB {
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
