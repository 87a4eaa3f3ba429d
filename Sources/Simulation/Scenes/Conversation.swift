import AudioAnalysis

/// Speech laid out as turns of a conversation.
///
/// Thread safety: stateless; safe from any thread.
public enum Conversation {
    /// `speech` at a normal speaking level (-26 dBFS RMS) in every other `turn` samples, silence in
    /// between; the speech continues where it stopped at the next turn (and loops). Each turn
    /// opens with `pause` samples of silence, the gap people leave before answering.
    public static func turns(_ speech: [Float], length: Int, turn: Int, pause: Int, speaksFirst: Bool) -> [Float] {
        let voice = Levels.normalized(speech, rms: 0.05)
        guard !voice.isEmpty else { return [Float](repeating: 0, count: length) }
        var out = [Float](repeating: 0, count: length)
        var position = 0
        for start in stride(from: 0, to: length, by: turn) where (start / turn) % 2 == (speaksFirst ? 0 : 1) {
            for i in min(start + pause, length)..<min(start + turn, length) {
                out[i] = voice[position % voice.count]
                position += 1
            }
        }
        return out
    }
}
