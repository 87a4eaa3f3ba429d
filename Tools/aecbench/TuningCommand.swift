import ArgumentParser
import Foundation
import VoiceProcessing

struct TuningCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tuning",
        abstract: "Print CallAudio's tuning as JSON: the file --tuning takes.",
        discussion: """
            --print writes the shipped tuning (VoiceProcessingTuning), every constant of the chain by stage, as \
            pretty JSON with sorted keys; with --tuning FILE it writes FILE's tuning in full instead (missing \
            keys filled with the defaults), after checking its ranges. Edit a copy and pass it to `process` or \
            `suite` with --tuning: a file may hold only the keys it changes. The constants' meanings and units \
            are documented on VoiceProcessingTuning.
            """
    )

    @Flag(name: .customLong("print"), help: "Write the tuning as JSON to standard output.")
    var printsTuning = false
    @Option(help: "A tuning file to check and print in full (default: the shipped tuning).")
    var tuning: String?

    func validate() throws {
        guard printsTuning || tuning != nil else { throw ValidationError("nothing to do: give --print, --tuning FILE or both") }
    }

    func run() throws {
        let value = try Self.load(tuning)
        guard printsTuning else { return note("\(tuning ?? "") is a valid tuning") }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        FileHandle.standardOutput.write(try encoder.encode(value) + Data("\n".utf8))
    }

    /// The tuning in `path` (JSON, missing keys at their defaults), checked; the shipped one for nil.
    static func load(_ path: String?) throws -> VoiceProcessingTuning {
        guard let path else { return VoiceProcessingTuning() }
        let value: VoiceProcessingTuning
        do {
            value = try JSONDecoder().decode(VoiceProcessingTuning.self, from: Data(contentsOf: URL(fileURLWithPath: path)))
        } catch let error as DecodingError {
            throw ValidationError("--tuning \(path): \(describe(error))")
        }
        do { try value.validate() } catch { throw ValidationError("--tuning \(path): \(error.message)") }
        return value
    }

    /// A decoding error as the key path it happened at and what went wrong.
    private static func describe(_ error: DecodingError) -> String {
        let (context, what): (DecodingError.Context?, String) = switch error {
        case .dataCorrupted(let c): (c, c.debugDescription)
        case .typeMismatch(let type, let c): (c, "expected \(type): \(c.debugDescription)")
        case .valueNotFound(let type, let c): (c, "expected \(type): \(c.debugDescription)")
        case .keyNotFound(let key, let c): (c, "missing \(key.stringValue)")
        @unknown default: (nil, "\(error)")
        }
        let path = context?.codingPath.map(\.stringValue).joined(separator: ".") ?? ""
        return path.isEmpty ? what : "\(path): \(what)"
    }
}
