/// Speech or not, per block, from the SpeexDSP preprocessor's speech probability, with
/// SpeexDSP's own hysteresis: speech starts above `start` percent and continues above
/// `continuing`. SpeexDSP makes the same decision when its VAD is switched on, but switching
/// it on prints a warning to the process's stderr; reading the probability does not.
///
/// Thread safety: a value type; used by the I/O thread only. Nothing allocates.
struct SpeechDetector {
    let start: Int
    let continuing: Int
    private(set) var isSpeech = false

    /// The thresholds in percent, as the preprocessor holds them (SpeexDSP's defaults: 35 and 20).
    init(start: Int, continuing: Int) {
        self.start = start
        self.continuing = continuing
    }

    /// Takes the block's speech probability (0 ... 100); returns whether the block is speech.
    mutating func update(probability: Int) -> Bool {
        isSpeech = probability > start || (isSpeech && probability > continuing)
        return isSpeech
    }

    mutating func reset() { isSpeech = false }
}
