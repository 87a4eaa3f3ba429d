/// Who is talking: the far end (render level), the near end (the preprocessor's VAD), and
/// speech while muted (an onset after 150 ms of speech, an end after 500 ms without).
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

    init(blockSeconds: Double, sampleRate: Int) {
        self.blockSeconds = blockSeconds
        self.sampleRate = Double(sampleRate)
    }

    /// Takes loudspeaker samples (full scale 1.0).
    func render(_ x: UnsafePointer<Float>, _ n: Int) {
        var e: Float = 0
        for i in 0..<n { e += x[i] * x[i] }
        // -50 dBFS mean power over the period.
        if n > 0 && e / Float(n) > 1e-5 {
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
            if !isSpeakingWhileMuted && Double(speechRun) * blockSeconds >= 0.15 {
                isSpeakingWhileMuted = true
                mutedSpeechEvents += 1
            }
        } else {
            silenceRun += 1
            speechRun = 0
            if isSpeakingWhileMuted && Double(silenceRun) * blockSeconds >= 0.5 { isSpeakingWhileMuted = false }
        }
    }

    /// Whether either side talked within the last half second (for advanced ducking).
    var isConversationActive: Bool {
        let hold = Int(0.5 / blockSeconds)
        return blocksSinceFar <= hold || blocksSinceNear <= hold
    }
}
