import ToolSupport
import ArgumentParser
import AudioAnalysis
import Foundation
import WAV

/// `callbench compare`: how well received speech matches what was sent.
struct CompareCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "compare",
        abstract: "Correlate received speech with its source, aligned (for interop checks).",
        discussion: """
            Both files are resampled to --rate. The received file is aligned to the source as a whole \
            (up to --max-lag-ms), then each second of the source is aligned on its own within \
            --drift-ms of the previous second, because a jitter buffer may lengthen or shorten pauses. \
            The correlation printed is the energy-weighted mean over the seconds that hold speech.
            """
    )

    @Argument(help: "The speech that was sent (WAV).")
    var reference: String
    @Argument(help: "The speech that was received (WAV).")
    var received: String
    @Option(help: "The rate to compare at, in Hz.")
    var rate = 16000
    @Option(help: "The largest overall delay to search, in ms.")
    var maxLagMs = 8000
    @Option(help: "How far one second's alignment may move from the previous one's, in ms.")
    var driftMs = 80
    @Option(help: "Exit with an error below this correlation.")
    var minCorrelation: Double?
    @Option(help: "Write the received speech aligned to the source (for PESQ): same length, shifted by the overall lag.")
    var alignedOut: String?
    @Option(help: "A name for the check, printed first.")
    var label: String?
    @Flag(help: "Print one JSON object as the last line.")
    var json = false

    func run() throws {
        let ref = try SpeechFiles.load(reference, sampleRate: rate)
        let test = try SpeechFiles.load(received, sampleRate: rate)
        let maxLag = min(maxLagMs * rate / 1000, max(test.count, ref.count))
        let global = Alignment.find(reference: ref, test: test, maxLag: maxLag)
        // Each second within --drift-ms of the previous second's lag.
        let piecewise = Alignment.segmentedCorrelation(reference: ref, test: test, around: global.lag, window: rate,
                                                       search: driftMs * rate / 1000, tracking: true)
        if let alignedOut {
            let aligned = (0..<ref.count).map { n -> Float in
                let i = n + global.lag
                return i >= 0 && i < test.count ? test[i] : 0
            }
            try WAV.write(WAVAudio(sampleRate: rate, samples: aligned), to: alignedOut)
        }
        let passed = minCorrelation.map { piecewise >= $0 } ?? true
        let name = label.map { "\($0): " } ?? ""
        print(String(format: "%@correlation %.3f (one overall alignment: %.3f, lag %.1f ms)%@", name, piecewise,
                     global.correlation, Double(global.lag) * 1000 / Double(rate),
                     minCorrelation.map { String(format: ", minimum %.2f: %@", $0, passed ? "pass" : "FAIL") } ?? ""))
        if json {
            let object: [String: Any] = ["correlation": piecewise, "global_correlation": global.correlation,
                                         "lag_ms": Double(global.lag) * 1000 / Double(rate), "passed": passed]
            let data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
            print(String(decoding: data, as: UTF8.self))
        }
        if !passed { throw ExitCode.failure }
    }
}
