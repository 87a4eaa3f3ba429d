import ArgumentParser
import Foundation
import Opus

/// Codec options of the commands, checked by the library's own rules so the tool and the
/// library never disagree on what is valid.
enum OpusOptions {
    static func check(_ configuration: OpusCallConfiguration) throws {
        do { try configuration.validate() } catch { throw ValidationError("\(error)") }
    }
}

/// Prints `value` as one line of JSON (keys sorted): the last line of a command's output with `--json`.
func printJSONLine(_ value: some Encodable, snakeCase: Bool = false) {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys]
    if snakeCase { encoder.keyEncodingStrategy = .convertToSnakeCase }
    if let data = try? encoder.encode(value) { print(String(decoding: data, as: UTF8.self)) }
}

extension Duration {
    /// The duration in seconds.
    var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}
