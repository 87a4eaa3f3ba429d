/// Who is talking: the far end (render level), the near end (the preprocessor's VAD), and
/// speech while muted (by default an onset after 150 ms of speech, an end after 500 ms without).
///
/// Thread safety: not thread-safe; used by the I/O thread only. Nothing allocates.
final class ActivityTracker {
    private let blockSeconds: Double
    /// Blocks since the far end or the near end last talked.
    private var blocksSinceFar = Int.max / 2
    private var blocksSinceNear = Int.max / 2
    private var speechRun = 0
    private var silenceRun = 0
    private(set) var isNearEndActive = false
    private(set) var isSpeakingWhileMuted = false
    private(set) var mutedSpeechEvents = 0
    private let sampleRate: Double
    /// The rules' numbers.
    private let tuning: VoiceProcessingTuning.Activity

    init(blockSeconds: Double, sampleRate: Int, tuning: VoiceProcessingTuning.Activity = .init()) {
        self.blockSeconds = blockSeconds
        self.sampleRate = Double(sampleRate)
        self.tuning = tuning
    }

    /// Takes loudspeaker samples (full scale 1.0).
    func render(_ x: UnsafePointer<Float>, _ n: Int) {
        var e: Float = 0
        for i in 0..<n { e += x[i] * x[i] }
        // Mean power over the period (-50 dBFS by default).
        if n > 0 && e / Float(n) > tuning.farActivePower {
            blocksSinceFar = 0
        } else {
            blocksSinceFar += max(1, Int(Double(n) / sampleRate / blockSeconds))
        }
    }

    /// Takes one block's voice-activity decision.
    func nearEnd(speech: Bool, muted: Bool) {
        isNearEndActive = speech
        blocksSinceNear = speech ? 0 : blocksSinceNear + 1
        guard muted else {
            speechRun = 0
            silenceRun = 0
            isSpeakingWhileMuted = false
            return
        }
        if speech {
            speechRun += 1
            silenceRun = 0
            if !isSpeakingWhileMuted && Double(speechRun) * blockSeconds >= tuning.mutedSpeechOnsetSeconds {
                isSpeakingWhileMuted = true
                mutedSpeechEvents += 1
            }
        } else {
            silenceRun += 1
            speechRun = 0
            if isSpeakingWhileMuted && Double(silenceRun) * blockSeconds >= tuning.mutedSpeechEndSeconds {
                isSpeakingWhileMuted = false
            }
        }
    }

    /// Whether either side talked within the last half second (by default; for advanced ducking).
    var isConversationActive: Bool {
        let hold = Int(tuning.conversationHoldSeconds / blockSeconds)
        return blocksSinceFar <= hold || blocksSinceNear <= hold
    }
}
