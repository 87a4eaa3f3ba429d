import Simulation
import ArgumentParser
import Foundation
import WAV

struct ProcessCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "process",
        abstract: "Cancel the echo of --far in --mic and measure the result.",
        discussion: """
            Runs CallAudio's voice-processing unit (or --engine speex, aec3, passthrough) period by period, as \
            the I/O thread does, and writes the output. When the mic's folder holds a scenario.json from \
            `aecbench simulate` (or --scenario points at one), the metrics use its ground truth (echo, near end, \
            segments); otherwise ERLE is measured against the microphone over far-end activity. With --json the \
            last line of stdout is one JSON object.
            """
    )

    @Option(help: "Far-end (loudspeaker) signal, WAV.")
    var far: String
    @Option(help: "Microphone signal, WAV at the same rate.")
    var mic: String
    @Option(help: "Processed output, WAV.")
    var out: String
    @Option(name: .customLong("linear-out"), help: "The linear canceller's output (before suppression), WAV.")
    var linearOut: String?
    @Option(name: .customLong("tail-ms"), help: "Echo canceller tail in milliseconds.")
    var tailMs = 256
    @Option(name: .customLong("frame-ms"), help: "Period handed to the unit per call: 10 or 20 ms.")
    var frameMs = 10
    @Option(help: "Echo delay: 'auto' (estimated) or a fixed number of milliseconds.")
    var delay = "auto"
    @Option(help: "Clock drift compensation: auto or off.")
    var drift: DriftMode = .auto
    @Flag(name: .customLong("no-suppression"), help: "Turn residual echo suppression off (linear canceller and noise suppression only).")
    var noSuppression = false
    @Option(help: "Engine: \(Engine.allCases.map(\.rawValue).joined(separator: ", ")).")
    var engine: Engine = .callaudio
    @Option(help: "Scenario folder with ground truth (default: the mic's folder, if it has scenario.json).")
    var scenario: String?
    @Flag(help: "Also score the double-talk near end with PESQ and STOI (Tools/score; needs ground truth).")
    var pesq = false
    @Flag(help: "Also score the output with AECMOS and DNSMOS (Tools/scoring/mos.py): by segment with ground truth, blind without.")
    var mos = false
    @Flag(help: "Print one JSON object as the last line.")
    var json = false
    @Option(help: "CallAudio's tuning, JSON (`aecbench tuning --print`); missing keys keep their defaults.")
    var tuning: String?

    func validate() throws {
        guard [10, 20].contains(frameMs) else { throw ValidationError("--frame-ms must be 10 or 20") }
        guard (20...1000).contains(tailMs) else { throw ValidationError("--tail-ms must be in 20...1000") }
        guard delay == "auto" || Double(delay).map({ (0...2000).contains($0) }) == true else {
            throw ValidationError("--delay must be 'auto' or milliseconds in 0...2000")
        }
    }

    func run() throws {
        let farAudio = try WAV.read(far), micAudio = try WAV.read(mic)
        guard farAudio.sampleRate == micAudio.sampleRate else { throw ValidationError("far and mic must have the same rate") }
        let fs = micAudio.sampleRate
        let options = ProcessingOptions(tailMs: tailMs, frameMs: frameMs, delayMs: Double(delay), drift: drift == .auto,
                                        suppression: !noSuppression, tuning: try TuningCommand.load(tuning))
        let work = FileManager.default.temporaryDirectory.appendingPathComponent("aecbench-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: work) }
        if engine == .aec3 && !AEC3.isAvailable(install: true) { throw ValidationError("WebRTC AEC3 is not available") }
        let result = try Engines.run(engine, far: farAudio.mono, mic: micAudio.mono, sampleRate: fs, options: options,
                                     workDirectory: work)
        try WAV.write(WAVAudio(sampleRate: fs, samples: result.output), to: out)
        if let linearOut, let linear = result.linear {
            try WAV.write(WAVAudio(sampleRate: fs, samples: linear), to: linearOut)
        }

        let folder = scenario ?? URL(fileURLWithPath: mic).deletingLastPathComponent().path
        var metrics: Metrics
        var hasTruth = false
        if let truth = try ScenarioFiles.groundTruth(in: folder), truth.sampleRate == fs {
            metrics = Measure.compute(truth, output: result.output, linear: result.linear)
            hasTruth = true
            if pesq { metrics.scoreDoubleTalk(truth, output: result.output, workDirectory: work) }
        } else {
            metrics = Metrics()
            metrics.erleDB = Measure.blindERLE(far: farAudio.mono, mic: micAudio.mono, output: result.output, sampleRate: fs)
            metrics.linearERLEDB = result.linear.flatMap {
                Measure.blindERLE(far: farAudio.mono, mic: micAudio.mono, output: $0, sampleRate: fs)
            }
        }
        metrics.record(result, sampleRate: fs)
        if mos && ListeningScores.isAvailable(install: true) {
            let truth = try ScenarioFiles.groundTruth(in: folder).flatMap { $0.sampleRate == fs ? $0 : nil }
            var job = truth.map { SuiteCommand.listeningJob(id: 0, folder: folder, engine: engine, truth: $0) }
                ?? ListeningScores.Job(id: 0, far: far, mic: mic, out: out)
            job.far = far
            job.mic = mic
            job.out = out
            if let scores = ListeningScores.score([job], workDirectory: work)[0] { metrics.record(listening: scores) }
        }

        report(metrics, hasTruth: hasTruth)
    }

    /// The metrics on one line (two with the listening scores), and with `--json` as an object.
    private func report(_ metrics: Metrics, hasTruth: Bool) {
        func f(_ v: Double?, _ format: String = "%.1f") -> String { v.map { String(format: format, $0) } ?? "-" }
        print("\(engine.title): ERLE \(f(metrics.erleDB)) dB (linear \(f(metrics.linearERLEDB)) dB), "
              + "delay \(f(metrics.estimatedDelayMs)) ms, drift \(f(metrics.estimatedDriftPPM)) ppm, "
              + "realtime factor \(f(metrics.realtimeFactor, "%.4f"))")
        if mos {
            print("AECMOS echo \(f(metrics.aecmosEchoST ?? metrics.aecmosEcho, "%.2f")), degradation \(f(metrics.aecmosDegDT ?? metrics.aecmosDeg, "%.2f")); "
                  + "DNSMOS SIG \(f(metrics.dnsmosSIG, "%.2f")) BAK \(f(metrics.dnsmosBAK, "%.2f")) OVRL \(f(metrics.dnsmosOVRL, "%.2f"))")
        }
        if json {
            var object = dictionary(metrics)
            for key in ["erle_db", "linear_erle_db", "estimated_delay_ms", "estimated_drift_ppm", "realtime_factor"]
            where object[key] == nil {
                object[key] = NSNull()
            }
            object["engine"] = engine.rawValue
            object["ground_truth"] = hasTruth
            print(jsonLine(object))
        }
    }
}
