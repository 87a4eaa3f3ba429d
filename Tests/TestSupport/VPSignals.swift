import AudioAnalysis
import WAV

/// Short signals for the voice-processing tests.
public enum VPSignals {
    /// `seconds` of a speech fixture at 16 kHz, looped if shorter, scaled to an RMS of `rms`.
    public static func speech(_ name: String, seconds: Double, rms: Double = 0.1) throws -> [Float] {
        let samples = try Fixtures.speech(name).samples
        let count = Int(seconds * 16000)
        let looped = (0..<count).map { samples[$0 % samples.count] }
        return Levels.normalized(looped, rms: rms)
    }

    /// `x` as 16-bit samples.
    public static func pcm(_ x: [Float]) -> [Int16] { x.map(WAVAudio.int16) }

    /// ERLE of `output` against `echo` over `range`, in dB.
    public static func erle(echo: [Float], output: [Float], range: Range<Int>) -> Double {
        Levels.erle(echo: Array(echo[range]), residual: Array(output[range]))
    }
}
