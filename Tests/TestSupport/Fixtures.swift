public import WAV

/// Test fixtures shipped in `Tests/Fixtures`.
public enum Fixtures {
    /// The `Tests/Fixtures` folder, found from this source file's location.
    public static let directory: String = {
        var parts = String(#filePath).split(separator: "/", omittingEmptySubsequences: false)
        parts.removeLast(2)  // TestSupport/Fixtures.swift
        return parts.joined(separator: "/") + "/Fixtures"
    }()

    /// Path of a speech file in `Tests/Fixtures/speech` (16 kHz mono 16-bit; see its README).
    public static func speechPath(_ name: String) -> String { "\(directory)/speech/\(name)" }

    /// Reads a speech fixture.
    public static func speech(_ name: String) throws -> WAVAudio { try WAV.read(speechPath(name)) }

    /// English, female, 30 s.
    public static let englishFemale = "en_f_congrats_16k.wav"
    /// Canadian French, female, 29 s.
    public static let frenchFemale = "fr_f_congrats_16k.wav"
    /// English, male, 10 s.
    public static let englishMale = "en_m_librivox_16k.wav"
}
