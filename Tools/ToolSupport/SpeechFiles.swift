import Foundation
import SpeexDSP
import WAV

/// Loads speech for the tool: the caller's file, or the project's shipped fixtures by default.
package enum SpeechFiles {
    /// Where the fixtures live, relative to the repository root the README runs from.
    package static let fixtureDirectory = "Tests/Fixtures/speech"
    package static let defaultNear = "\(fixtureDirectory)/en_f_congrats_16k.wav"
    package static let defaultFar = "\(fixtureDirectory)/fr_f_congrats_16k.wav"

    /// Reads `path` as mono at `sampleRate`, resampling when the file's rate differs.
    package static func load(_ path: String, sampleRate: Int) throws -> [Float] {
        let audio: WAVAudio
        guard FileManager.default.isReadableFile(atPath: path) else {
            throw SpeechFileError(description: "\(path): no such file, or it cannot be read")
        }
        do {
            audio = try WAV.read(path)
        } catch {
            throw SpeechFileError(description: "\(path): \(error) (run from the repository root, or pass the speech files explicitly)")
        }
        return try SpeexResampler.resample(audio.mono, from: audio.sampleRate, to: sampleRate, quality: 8)
    }
}

/// A speech file that cannot be read.
package struct SpeechFileError: Error, CustomStringConvertible {
    package let description: String
}
