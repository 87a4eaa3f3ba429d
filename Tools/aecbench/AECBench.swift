import ArgumentParser
import Foundation

/// The echo-cancellation bench: simulate scenarios from real speech, process them, score them.
@main
struct AECBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "aecbench",
        abstract: "Simulate, process and score acoustic echo cancellation.",
        discussion: """
            simulate: builds a scenario (far-end speech through a room, bulk delay, clock drift, loudspeaker \
            distortion, near-end speech, noise) and writes its signals. process: runs an echo canceller over \
            far + mic and measures it. suite: the standard scenarios for CallAudio, plain SpeexDSP and WebRTC \
            AEC3 side by side, with a table, JSON and SVG plots. tuning: prints CallAudio's tuning as JSON, \
            for --tuning. See Docs/aecbench.md.
            """,
        subcommands: [SimulateCommand.self, ProcessCommand.self, SuiteCommand.self, TuningCommand.self]
    )
}

/// Progress on standard error, one line rewritten in place.
struct Progress {
    let total: Int
    private(set) var done = 0
    let started = ContinuousClock.now

    init(total: Int) { self.total = total }

    mutating func step(_ what: String) {
        done += 1
        let elapsed = started.duration(to: .now).seconds
        let line = String(format: "\r[%d/%d] %-48@ %5.1f s", done, total, what as NSString, elapsed)
        FileHandle.standardError.write(Data(line.utf8))
    }

    func finish() {
        FileHandle.standardError.write(Data("\n".utf8))
    }
}

/// Prints a message on standard error.
func note(_ message: String) {
    FileHandle.standardError.write(Data("aecbench: \(message)\n".utf8))
}

/// JSON for one line of standard output: sorted keys, nil as null.
func jsonLine(_ object: Any) -> String {
    guard let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .fragmentsAllowed]) else {
        return "{}"
    }
    return String(decoding: data, as: UTF8.self)
}

/// Metrics as a JSON dictionary (without the time series unless asked).
func dictionary(_ m: Metrics, series: Bool = false) -> [String: Any] {
    let encoder = JSONEncoder()
    guard let data = try? encoder.encode(m),
          var object = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] else { return [:] }
    if !series {
        object.removeValue(forKey: Metrics.CodingKeys.erleOverTime.rawValue)
        object.removeValue(forKey: Metrics.CodingKeys.linearERLEOverTime.rawValue)
    }
    return object
}
