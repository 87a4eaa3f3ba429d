import ArgumentParser
import Foundation
import Logging
package import Opus

/// Codec options of the commands, checked by the library's own rules so the tool and the
/// library never disagree on what is valid.
package enum OpusOptions {
    package static func check(_ configuration: OpusCallConfiguration) throws {
        do { try configuration.validate() } catch { throw ValidationError("\(error)") }
    }
}

/// The Opus settings of `voicecall rtp` and of `callbench ceiling`.
package struct OpusCodecOptions: ParsableArguments {
    @Option(help: "The codec's internal rate in Hz (8000, 12000, 16000, 24000, 48000); RTP stays at 48 kHz.")
    package var rate = 16000
    @Option(help: "Opus bitrate in bits per second.")
    package var bitrate = 24000
    @Option(help: "Frame duration in ms (10, 20, 40, 60).")
    package var frameMs = 20
    @Option(help: "Opus complexity, 0 ... 10.")
    package var complexity = 9
    @Option(help: "The loss the encoder plans for until the first RTCP receiver report, in percent.")
    package var expectedLoss = 1
    @Flag(help: "Discontinuous transmission: send nothing in silence.")
    package var dtx = false
    @Flag(help: "No in-band FEC: the encoder sends none and the receiver uses none (PLC only).")
    package var noFec = false

    /// The codec the options describe (checked by ``OpusCallConfiguration/validate()``).
    package var configuration: OpusCallConfiguration {
        OpusCallConfiguration(sampleRate: rate, frameMilliseconds: frameMs, bitrate: bitrate,
                              inbandFEC: !noFec, initialExpectedLossPercent: noFec ? 0 : expectedLoss,
                              dtx: dtx, complexity: complexity)
    }

    package init() {}

    package func validate() throws { try OpusOptions.check(configuration) }
}

/// A failure while a command runs (a device, the network, the peer): printed as `Error: ...`
/// without the usage text that a bad option gets, and exit status 1. With `--json` the error is
/// also the last line, as a JSON object `{"error": "..."}`.
package struct CommandFailure: Error, CustomStringConvertible {
    package let description: String

    package init(_ message: String, json: Bool) {
        description = message
        if json { printJSONLine(["error": message]) }
    }
}

/// Prints `value` as one line of JSON (keys sorted): the last line of a command's output with `--json`.
package func printJSONLine(_ value: some Encodable, snakeCase: Bool = false) {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys]
    if snakeCase { encoder.keyEncodingStrategy = .convertToSnakeCase }
    if let data = try? encoder.encode(value) { print(String(decoding: data, as: UTF8.self)) }
}

extension Duration {
    /// The duration in seconds.
    package var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}

/// `text` as a terminal may show it: control characters (C0, DEL, C1: a peer's display name or
/// reason phrase could move the cursor or retitle the window) escaped as `\u{..}`, and at most
/// `limit` characters kept.
public func printable(_ text: String, limit: Int = 200) -> String {
    var out = ""
    for scalar in text.unicodeScalars.prefix(limit) {
        let value = scalar.value
        if value < 0x20 || (0x7F...0x9F).contains(value) {
            out += "\\u{" + String(value, radix: 16) + "}"
        } else {
            out.unicodeScalars.append(scalar)
        }
    }
    return text.unicodeScalars.count > limit ? out + "…" : out
}

/// CallAudio's version, as the CHANGELOG names it.
package let callAudioVersion = "0.9.0"

/// `--log-level`: how much of the library's log reaches standard error.
package struct LoggingOptions: ParsableArguments {
    @Option(help: "The least severe log message printed.")
    var logLevel: LogLevel = .info

    package init() {}

    /// Sends the log to standard error at `logLevel`. Call once, before anything logs.
    package func bootstrap() {
        let level = Logger.Level(rawValue: logLevel.rawValue) ?? .info
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
    }
}

/// swift-log's levels, as the command line names them.
enum LogLevel: String, CaseIterable, ExpressibleByArgument {
    case trace, debug, info, notice, warning, error, critical
}
