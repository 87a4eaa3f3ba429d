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

/// The Opus settings of `voicecall rtp`'s commands.
struct OpusCodecOptions: ParsableArguments {
    @Option(help: "The codec's internal rate in Hz (8000, 12000, 16000, 24000, 48000); RTP stays at 48 kHz.")
    var rate = 16000
    @Option(help: "Opus bitrate in bits per second.")
    var bitrate = 24000
    @Option(help: "Frame duration in ms (10, 20, 40, 60).")
    var frameMs = 20
    @Option(help: "Opus complexity, 0 ... 10.")
    var complexity = 9
    @Option(help: "The loss the encoder plans for until the first RTCP receiver report, in percent.")
    var expectedLoss = 1
    @Flag(help: "Discontinuous transmission: send nothing in silence.")
    var dtx = false
    @Flag(help: "No in-band FEC: the encoder sends none and the receiver uses none (PLC only).")
    var noFec = false

    /// The codec the options describe (checked by ``OpusCallConfiguration/validate()``).
    var configuration: OpusCallConfiguration {
        OpusCallConfiguration(sampleRate: rate, frameMilliseconds: frameMs, bitrate: bitrate,
                              inbandFEC: !noFec, initialExpectedLossPercent: noFec ? 0 : expectedLoss,
                              dtx: dtx, complexity: complexity)
    }

    func validate() throws { try OpusOptions.check(configuration) }
}

/// A failure while a command runs (a device, the network, the peer): printed as `Error: ...`
/// without the usage text that a bad option gets, and exit status 1. With `--json` the error is
/// also the last line, as a JSON object `{"error": "..."}`.
struct CommandFailure: Error, CustomStringConvertible {
    let description: String

    init(_ message: String, json: Bool) {
        description = message
        if json { printJSONLine(["error": message]) }
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
