import ArgumentParser
import Foundation
import RoomAcoustics
import WAV

/// One of the standard scenarios: the base call with one thing changed.
struct SuiteScenario {
    var name: String
    var summary: String
    var change: @Sendable (inout ScenarioConfiguration) -> Void

    /// 20 s at 16 kHz; the far end talks throughout, the near end from 8 to 14 s.
    static let all: [SuiteScenario] = [
        SuiteScenario(name: "base", summary: "RT60 0.3 s, 5 ms delay, SER 0 dB, ENR 40 dB") { _ in },
        SuiteScenario(name: "doubletalk", summary: "base, near end 6 dB below the echo (SER -6 dB)") { $0.signalToEchoDB = -6 },
        SuiteScenario(name: "nonlinear", summary: "base, mild loudspeaker distortion (about -24 dB)") { $0.nonlinearity = .mild },
        SuiteScenario(name: "delay150", summary: "base, 150 ms bulk delay") { $0.bulkDelay = 0.150 },
        SuiteScenario(name: "drift50", summary: "base, capture clock 50 ppm fast") { $0.driftPPM = 50 },
        SuiteScenario(name: "pathchange", summary: "base, the loudspeaker moves at 16 s") { $0.pathChangeTime = 16 },
        SuiteScenario(name: "noise", summary: "base, pink noise 15 dB below the echo (ENR 15 dB)") { $0.echoToNoiseDB = 15 },
    ]

    /// Far-end and near-end talkers per seed: always two different people.
    static let talkers: [(far: String, near: String)] = [
        ("en_f_congrats_16k.wav", "fr_f_msginstruct_16k.wav"),
        ("fr_f_congrats_16k.wav", "en_m_librivox_16k.wav"),
        ("en_f_echotest_16k.wav", "fr_f_congrats_16k.wav"),
    ]
}

/// A target of issue 5, checked against the suite's medians.
struct Target {
    var name: String
    var requirement: String
    var value: (Engine) -> Double?
    var met: (Double) -> Bool
}

struct SuiteCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "suite",
        abstract: "Run the standard scenarios for CallAudio, plain SpeexDSP and WebRTC AEC3; print a table, write JSON and plots.",
        discussion: """
            Scenarios (20 s at 16 kHz, far end throughout, near end 8-14 s): \
            \(SuiteScenario.all.map(\.name).joined(separator: ", ")). Each runs with --seeds seeds (room geometry, \
            noise, talker pair); the table shows medians. Writes suite.json, erle-<scenario>.svg and \
            signals-<scenario>.svg into --out-dir, and the first seed's WAVs (scenario, outputs, linear \
            outputs) under <scenario>/seed1/.
            """
    )

    @Option(name: .customLong("out-dir"), help: "Folder for the JSON, the plots and the WAVs.")
    var outDir = "out/aecbench"
    @Flag(help: "Print one JSON object (the medians and the targets) as the last line.")
    var json = false
    @Option(help: "Seeds per scenario (1 ... 3).")
    var seeds = 3
    @Option(help: "Only these scenarios (comma-separated).")
    var only: String?
    @Flag(name: .customLong("no-aec3"), help: "Leave WebRTC AEC3 out.")
    var noAEC3 = false
    @Flag(name: .customLong("no-pesq"), help: "Skip PESQ and STOI.")
    var noPESQ = false
    @Option(help: "Speech folder (default: Tests/Fixtures/speech).")
    var speech: String?
    @Option(help: "Room model: shoebox (image method, the default) or decaying-noise (exponentially decaying noise).")
    var room: RoomModel = .shoebox
    @Flag(name: .customLong("all-wavs"), help: "Keep every seed's WAVs (default: the first seed's only).")
    var allWAVs = false

    func validate() throws {
        guard (1...3).contains(seeds) else { throw ValidationError("--seeds must be 1, 2 or 3") }
        if let only {
            let names = Set(SuiteScenario.all.map(\.name))
            for n in only.split(separator: ",") where !names.contains(String(n)) {
                throw ValidationError("unknown scenario \(n); known: \(names.sorted().joined(separator: ", "))")
            }
        }
    }

    func run() throws {
        let scenarios = SuiteScenario.all.filter { s in only.map { $0.split(separator: ",").contains(Substring(s.name)) } ?? true }
        let speechDir = speech ?? "\(Repository.root)/Tests/Fixtures/speech"
        try FileManager.default.createDirectory(atPath: outDir, withIntermediateDirectories: true)
        var engines: [Engine] = [.callaudio, .speex]
        if !noAEC3 {
            if AEC3.isAvailable(install: true) { engines.append(.aec3) } else { note("WebRTC AEC3 unavailable (Python or the aec-audio-processing build failed): left out") }
        }
        let scoring = !noPESQ && SpeechQuality.isAvailable()
        if !noPESQ && !scoring { note("Tools/score not found: PESQ and STOI left out") }

        var progress = Progress(total: scenarios.count * seeds * engines.count)
        // results[scenario][engine] = per-seed metrics
        var results: [String: [Engine: [Metrics]]] = [:]
        var runs: [[String: Any]] = []
        for suiteScenario in scenarios {
            for seedIndex in 0..<seeds {
                let seed = UInt64(seedIndex + 1)
                let talkers = SuiteScenario.talkers[seedIndex]
                let far = try ScenarioFiles.load("\(speechDir)/\(talkers.far)", rate: 16000)
                let near = try ScenarioFiles.load("\(speechDir)/\(talkers.near)", rate: 16000)
                var config = ScenarioConfiguration(seed: seed)
                if room == .decayingNoise { config.room = .decayingNoise(rt60: 0.3) }
                suiteScenario.change(&config)
                let scenario = try Scenario.make(far: far, near: near, configuration: config)
                let keep = seedIndex == 0 || allWAVs
                let folder = keep ? "\(outDir)/\(suiteScenario.name)/seed\(seed)"
                    : FileManager.default.temporaryDirectory.appendingPathComponent("aecbench-\(UUID().uuidString)").path
                defer { if !keep { try? FileManager.default.removeItem(atPath: folder) } }
                try ScenarioFiles.write(scenario, to: folder, farFile: talkers.far, nearFile: talkers.near, rirFile: nil)
                let truth = ScenarioFiles.groundTruth(scenario)
                for engine in engines {
                    progress.step("\(suiteScenario.name) seed \(seed) \(engine.rawValue)")
                    let result = try Engines.run(engine, far: scenario.far, mic: scenario.mic, sampleRate: 16000,
                                                 options: ProcessingOptions(), workDirectory: folder)
                    var m = Measure.compute(truth, output: result.output, linear: result.linear)
                    m.record(result, sampleRate: 16000)
                    if scoring { m.scoreDoubleTalk(truth, output: result.output, workDirectory: folder) }
                    try WAV.write(WAVAudio(sampleRate: 16000, samples: result.output), to: "\(folder)/out-\(engine.rawValue).wav")
                    if let linear = result.linear {
                        try WAV.write(WAVAudio(sampleRate: 16000, samples: linear), to: "\(folder)/linear-\(engine.rawValue).wav")
                    }
                    results[suiteScenario.name, default: [:]][engine, default: []].append(m)
                    var run = dictionary(m)
                    run["scenario"] = suiteScenario.name
                    run["seed"] = Int(seed)
                    run["engine"] = engine.rawValue
                    runs.append(run)
                }
                if seedIndex == 0 {
                    try plot(suiteScenario, scenario: scenario, results: results[suiteScenario.name]!, engines: engines, folder: folder)
                }
            }
        }
        progress.finish()

        let medians = results.mapValues { byEngine in byEngine.mapValues(Self.median) }
        printTable(scenarios, medians: medians, engines: engines)
        let targets = Self.targets(medians)
        printTargets(targets, engines: engines)

        var summary: [String: Any] = [:]
        for (name, byEngine) in medians {
            var entry: [String: Any] = ["description": scenarios.first { $0.name == name }?.summary ?? ""]
            for (engine, m) in byEngine { entry[engine.rawValue] = dictionary(m) }
            summary[name] = entry
        }
        let targetList: [[String: Any]] = targets.map { t in
            var entry: [String: Any] = ["name": t.name, "requirement": t.requirement]
            for engine in engines { entry[engine.rawValue] = t.value(engine) ?? NSNull() }
            entry["met"] = t.value(.callaudio).map(t.met) ?? false
            return entry
        }
        let top: [String: Any] = ["command": "aecbench suite --seeds \(seeds)", "seeds": seeds, "sample_rate": 16000,
                                  "engines": engines.map(\.rawValue), "scenarios": summary, "targets": targetList]
        var file = top
        file["runs"] = runs
        let data = try JSONSerialization.data(withJSONObject: file, options: [.prettyPrinted, .sortedKeys])
        try data.write(to: URL(fileURLWithPath: "\(outDir)/suite.json"))
        print("Wrote \(outDir)/suite.json, erle-*.svg, signals-*.svg and the WAVs.")
        if json { print(jsonLine(top)) }
    }

    /// Per-metric medians over seeds.
    static func median(_ runs: [Metrics]) -> Metrics {
        func med(_ key: (Metrics) -> Double?) -> Double? { runs.compactMap(key).median }
        var m = Metrics()
        let scalars: [WritableKeyPath<Metrics, Double?>] = [
            \.erleDB, \.linearERLEDB, \.convergenceS, \.linearConvergenceS, \.postDoubleTalkERLEDB,
            \.pathChangeRecoveryS, \.linearPathChangeRecoveryS, \.addedDelayMs, \.pesq, \.stoi,
            \.estimatedDelayMs, \.estimatedDriftPPM, \.realtimeFactor,
        ]
        for key in scalars { m[keyPath: key] = med { $0[keyPath: key] } }
        m.cancellerResets = runs.compactMap(\.cancellerResets).map(Double.init).median.map { Int($0.rounded()) }
        return m
    }

    static func targets(_ medians: [String: [Engine: Metrics]]) -> [Target] {
        func get(_ scenario: String, _ key: @escaping (Metrics) -> Double?) -> (Engine) -> Double? {
            { engine in medians[scenario]?[engine].flatMap(key) }
        }
        return [
            Target(name: "base full-chain ERLE (dB)", requirement: ">= 46", value: get("base", \.erleDB)) { $0 >= 46 },
            Target(name: "base linear ERLE (dB)", requirement: ">= 38", value: get("base", \.linearERLEDB)) { $0 >= 38 },
            Target(name: "convergence to 20 dB (s)", requirement: "<= 1.0", value: get("base", \.convergenceS)) { $0 <= 1.0 },
            Target(name: "after double talk, first 2 s ERLE (dB)", requirement: ">= 35",
                   value: get("base", \.postDoubleTalkERLEDB)) { $0 >= 35 },
            Target(name: "double-talk near-end PESQ-WB", requirement: ">= 3.1", value: get("base", \.pesq)) { $0 >= 3.1 },
            Target(name: "nonlinear full-chain ERLE (dB)", requirement: ">= 30", value: get("nonlinear", \.erleDB)) { $0 >= 30 },
            Target(name: "echo-path change, back to 20 dB (s)", requirement: "<= 1.0",
                   value: get("pathchange", \.pathChangeRecoveryS)) { $0 <= 1.0 },
            Target(name: "clock drift 50 ppm, ERLE loss vs base (dB)", requirement: "<= 3", value: { e in
                guard let b = medians["base"]?[e]?.erleDB, let d = medians["drift50"]?[e]?.erleDB else { return nil }
                return b - d
            }) { $0 <= 3 },
            Target(name: "bulk delay 150 ms, ERLE loss vs base (dB)", requirement: "<= 3", value: { e in
                guard let b = medians["base"]?[e]?.erleDB, let d = medians["delay150"]?[e]?.erleDB else { return nil }
                return b - d
            }) { $0 <= 3 },
            Target(name: "added delay (ms)", requirement: "<= 10", value: get("base", \.addedDelayMs)) { $0 <= 10 },
            Target(name: "realtime factor", requirement: "<= 0.01", value: get("base", \.realtimeFactor)) { $0 <= 0.01 },
        ]
    }

    func printTable(_ scenarios: [SuiteScenario], medians: [String: [Engine: Metrics]], engines: [Engine]) {
        func f(_ v: Double?, _ format: String = "%.1f") -> String { v.map { String(format: format, $0) } ?? "-" }
        let header = ["scenario", "engine", "ERLE", "linERLE", "conv_s", "postDT", "recov_s", "PESQ", "STOI",
                      "delay_ms", "drift_ppm", "added_ms", "RTF", "resets"]
        var rows: [[String]] = [header]
        for s in scenarios {
            for (i, e) in engines.enumerated() {
                guard let m = medians[s.name]?[e] else { continue }
                rows.append([i == 0 ? s.name : "", e.rawValue, f(m.erleDB), f(m.linearERLEDB), f(m.convergenceS, "%.2f"),
                             f(m.postDoubleTalkERLEDB), f(m.pathChangeRecoveryS, "%.2f"), f(m.pesq, "%.2f"), f(m.stoi, "%.2f"),
                             f(m.estimatedDelayMs), f(m.estimatedDriftPPM), f(m.addedDelayMs), f(m.realtimeFactor, "%.4f"),
                             m.cancellerResets.map(String.init) ?? "-"])
            }
        }
        print("Medians over \(seeds) seed(s); 16 kHz, 20 s, near end 8-14 s. ERLE in dB over far-end single talk after 2 s.")
        printAligned(rows)
    }

    func printTargets(_ targets: [Target], engines: [Engine]) {
        func f(_ v: Double?) -> String { v.map { abs($0) < 0.1 ? String(format: "%.4f", $0) : String(format: "%.2f", $0) } ?? "-" }
        var rows: [[String]] = [["target", "required"] + engines.map(\.title) + ["met"]]
        for t in targets {
            let mine = t.value(.callaudio)
            rows.append([t.name, t.requirement] + engines.map { f(t.value($0)) } + [mine.map(t.met).map { $0 ? "yes" : "NO" } ?? "-"])
        }
        print("")
        printAligned(rows)
    }

    private func printAligned(_ rows: [[String]]) {
        guard let columns = rows.first?.count else { return }
        let widths = (0..<columns).map { c in rows.map { $0[c].count }.max() ?? 0 }
        for row in rows {
            print(row.enumerated().map { c, cell in
                c < 2 ? cell.padding(toLength: widths[c], withPad: " ", startingAt: 0)
                    : String(repeating: " ", count: widths[c] - cell.count) + cell
            }.joined(separator: "  "))
        }
    }

    /// ERLE over time and the signals' levels for the first seed.
    private func plot(_ s: SuiteScenario, scenario: Scenario, results: [Engine: [Metrics]], engines: [Engine], folder: String) throws {
        let duration = scenario.configuration.duration
        var spans: [(ClosedRange<Double>, String)] = []
        if let dt = scenario.doubleTalk { spans.append((Double(dt.lowerBound) / 16000...Double(dt.upperBound) / 16000, "double talk")) }
        if let change = scenario.configuration.pathChangeTime { spans.append((change...(change + 0.08), "path change")) }
        var erle = SVGPlot(title: "ERLE over time: \(s.name) (\(s.summary)), seed 1", xLabel: "time (s)", yLabel: "ERLE (dB)",
                           xRange: 0...duration, yRange: -5...80, spans: spans, guides: [(20, "20 dB")])
        for (i, engine) in engines.enumerated() {
            guard let m = results[engine]?.first else { continue }
            let color = SVGPlot.palette[i % SVGPlot.palette.count]
            if let series = m.erleOverTime {
                erle.series.append(.init(name: "\(engine.title)", color: color,
                                         points: series.enumerated().map { (Measure.windowEnd($0.offset), $0.element) }))
            }
            if let series = m.linearERLEOverTime {
                erle.series.append(.init(name: "\(engine.title) linear", color: color,
                                         points: series.enumerated().map { (Measure.windowEnd($0.offset), $0.element) }, dashed: true))
            }
        }
        try erle.write(to: "\(outDir)/erle-\(s.name).svg")

        var signals = SVGPlot(title: "Signal levels: \(s.name), seed 1", xLabel: "time (s)", yLabel: "level (dBFS, 20 ms)",
                              xRange: 0...duration, yRange: -90...0, spans: spans)
        signals.series.append(.init(name: "microphone", color: "#bbbbbb", points: Plots.envelope(scenario.mic, sampleRate: 16000)))
        signals.series.append(.init(name: "near end", color: "#000000", points: Plots.envelope(scenario.near, sampleRate: 16000), dashed: true))
        for (i, engine) in engines.enumerated() {
            guard let output = try? WAV.read("\(folder)/out-\(engine.rawValue).wav").samples else { continue }
            signals.series.append(.init(name: "\(engine.title) out", color: SVGPlot.palette[i % SVGPlot.palette.count],
                                        points: Plots.envelope(output, sampleRate: 16000)))
        }
        try signals.write(to: "\(outDir)/signals-\(s.name).svg")
    }
}
