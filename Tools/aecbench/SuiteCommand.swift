import ArgumentParser
import Foundation
import Simulation
import SpeexDSP
import WAV

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
    @Flag(name: .customLong("no-mos"), help: "Skip AECMOS and DNSMOS (Tools/scoring/mos.py).")
    var noMOS = false
    @Option(help: "Speech folder (default: Tests/Fixtures/speech for the tuning set, out/test-speech for the test set).")
    var speech: String?
    @Option(help: "tuning (the talkers and rooms every decision is made on) or test (other talkers, languages, room and seeds: scored to report; its speech comes from Tools/scoring/test-speech).")
    var set: BenchSet = .tuning
    @Option(help: "Room model: shoebox (image method, the default) or decaying-noise (exponentially decaying noise).")
    var room: RoomModel = .shoebox
    @Flag(name: .customLong("all-wavs"), help: "Keep every seed's WAVs (default: the first seed's only).")
    var allWAVs = false
    @Option(help: "CallAudio's tuning, JSON (`aecbench tuning --print`); missing keys keep their defaults.")
    var tuning: String?

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
        let options = ProcessingOptions(tuning: try TuningCommand.load(tuning))
        try FileManager.default.createDirectory(atPath: outDir, withIntermediateDirectories: true)
        let engines = availableEngines()
        let scoring = !noPESQ && SpeechQuality.isAvailable()
        if !noPESQ && !scoring { note("Tools/score not found: PESQ and STOI left out") }
        let listening = !noMOS && ListeningScores.isAvailable(install: true)
        if !noMOS && !listening { note("speechmos unavailable (Python or its install failed): AECMOS and DNSMOS left out") }
        var results = SuiteResults()
        defer { for t in results.temporaries { try? FileManager.default.removeItem(atPath: t) } }
        var progress = Progress(total: scenarios.count * seeds * engines.count)
        for suiteScenario in scenarios {
            for seedIndex in 0..<seeds {
                try runSeed(seedIndex, of: suiteScenario, engines: engines, options: options, scoring: scoring,
                            listening: listening, into: &results, progress: &progress)
            }
        }
        progress.finish()
        if listening { scoreListening(&results) }
        try report(scenarios, results: results, engines: engines, listening: listening)
    }

    /// CallAudio and SpeexDSP, and AEC3 unless left out or unavailable.
    func availableEngines() -> [Engine] {
        var engines: [Engine] = [.callaudio, .speex]
        guard !noAEC3 else { return engines }
        if AEC3.isAvailable(install: true) { engines.append(.aec3) } else {
            note("WebRTC AEC3 unavailable (Python or the aec-audio-processing build failed): left out")
        }
        return engines
    }

    /// One seed of one scenario: its files (kept for the first seed), then every engine on them.
    func runSeed(_ seedIndex: Int, of suiteScenario: SuiteScenario, engines: [Engine], options: ProcessingOptions,
                 scoring: Bool, listening: Bool, into results: inout SuiteResults, progress: inout Progress) throws {
        let seed = set.seed(seedIndex)
        let pair = set.talkers[seedIndex]
        let talkers = suiteScenario.swapsTalkers ? (far: pair.near, near: pair.far) : pair
        let speechDir = speech ?? (set == .tuning ? "\(Repository.root)/Tests/Fixtures/speech" : "\(Repository.root)/out/test-speech")
        var far = try ScenarioFiles.load("\(speechDir)/\(talkers.far)", rate: 16000)
        if suiteScenario.narrowbandFar {
            far = try SpeexResampler.resample(try SpeexResampler.resample(far, from: 16000, to: 8000, quality: 8),
                                              from: 8000, to: 16000, quality: 8)
        }
        let near = try ScenarioFiles.load("\(speechDir)/\(talkers.near)", rate: 16000)
        var config = ScenarioConfiguration(seed: seed)
        set.prepare(&config)
        if room == .decayingNoise { config.room = .decayingNoise(rt60: 0.3) }
        suiteScenario.change(&config)
        let scenario = try Scenario.make(far: far, near: near, configuration: config)
        let keep = seedIndex == 0 || allWAVs
        let folder = keep ? "\(outDir)/\(suiteScenario.name)/seed\(seed)"
            : FileManager.default.temporaryDirectory.appendingPathComponent("aecbench-\(UUID().uuidString)").path
        if !keep { results.temporaries.append(folder) }
        try ScenarioFiles.write(scenario, to: folder, farFile: talkers.far, nearFile: talkers.near, rirFile: nil)
        let truth = ScenarioFiles.groundTruth(scenario)
        for engine in engines {
            progress.step("\(suiteScenario.name) seed \(seed) \(engine.rawValue)")
            let m = try measure(engine, on: scenario, truth: truth, echoPath: config.hasEchoPath, options: options,
                                scoring: scoring, folder: folder)
            if listening {
                results.jobRuns[results.jobs.count] = (suiteScenario.name, engine, seedIndex, results.runs.count)
                results.jobs.append(Self.listeningJob(id: results.jobs.count, folder: folder, engine: engine, truth: truth))
            }
            results.metrics[suiteScenario.name, default: [:]][engine, default: []].append(m)
            var run = dictionary(m)
            run["scenario"] = suiteScenario.name
            run["seed"] = Int(seed)
            run["engine"] = engine.rawValue
            results.runs.append(run)
        }
        if seedIndex == 0 {
            try plot(suiteScenario, scenario: scenario, results: results.metrics[suiteScenario.name]!, engines: engines, folder: folder)
        }
    }

    /// Runs one engine on a scenario, writes its outputs into `folder` and returns its metrics.
    func measure(_ engine: Engine, on scenario: Scenario, truth: GroundTruth, echoPath: Bool, options: ProcessingOptions,
                 scoring: Bool, folder: String) throws -> Metrics {
        let result = try Engines.run(engine, far: scenario.far, mic: scenario.mic, sampleRate: 16000,
                                     options: options, workDirectory: folder)
        var m = Measure.compute(truth, output: result.output, linear: result.linear)
        m.record(result, sampleRate: 16000)
        if scoring {
            m.scoreDoubleTalk(truth, output: result.output, workDirectory: folder)
            if !echoPath {
                // The same microphone with the far end silent: what "untouched" scores.
                let silent = try Engines.run(engine, far: [Float](repeating: 0, count: scenario.far.count),
                                             mic: scenario.mic, sampleRate: 16000, options: options,
                                             workDirectory: folder)
                var s = Metrics()
                s.scoreDoubleTalk(truth, output: silent.output, workDirectory: folder)
                m.pesqFarSilent = s.pesq
            }
        }
        try WAV.write(WAVAudio(sampleRate: 16000, samples: result.output), to: "\(folder)/out-\(engine.rawValue).wav")
        if let linear = result.linear {
            try WAV.write(WAVAudio(sampleRate: 16000, samples: linear), to: "\(folder)/linear-\(engine.rawValue).wav")
        }
        return m
    }

    /// AECMOS and DNSMOS for every output, in one Python run, into the metrics and the JSON runs.
    func scoreListening(_ results: inout SuiteResults) {
        note("scoring \(results.jobs.count) outputs with AECMOS and DNSMOS")
        for (id, scores) in ListeningScores.score(results.jobs, workDirectory: outDir) {
            guard let r = results.jobRuns[id] else { continue }
            results.metrics[r.scenario]?[r.engine]?[r.seed].record(listening: scores)
            for (key, value) in scores { results.runs[r.run][key] = value }
        }
    }

    /// The table, the targets, the plots of the listening scores and suite.json.
    func report(_ scenarios: [SuiteScenario], results: SuiteResults, engines: [Engine], listening: Bool) throws {
        let medians = results.metrics.mapValues { byEngine in byEngine.mapValues(Self.median) }
        printTable(scenarios, medians: medians, engines: engines)
        if listening { try plotListening(scenarios, medians: medians, engines: engines) }
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
        file["runs"] = results.runs
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
            \.pathChangeRecoveryS, \.linearPathChangeRecoveryS, \.addedDelayMs, \.pesq, \.stoi, \.pesqFarSilent,
            \.estimatedDelayMs, \.estimatedDriftPPM, \.realtimeFactor,
            \.aecmosEchoST, \.aecmosEchoDT, \.aecmosDegDT, \.dnsmosSIG, \.dnsmosBAK, \.dnsmosOVRL,
        ]
        for key in scalars { m[keyPath: key] = med { $0[keyPath: key] } }
        m.cancellerResets = runs.compactMap(\.cancellerResets).map(Double.init).median.map { Int($0.rounded()) }
        m.echoMoves = runs.compactMap(\.echoMoves).map(Double.init).median.map { Int($0.rounded()) }
        return m
    }

    func printTable(_ scenarios: [SuiteScenario], medians: [String: [Engine: Metrics]], engines: [Engine]) {
        func f(_ v: Double?, _ format: String = "%.1f") -> String { v.map { String(format: format, $0) } ?? "-" }
        let header = ["scenario", "engine", "ERLE", "linERLE", "conv_s", "postDT", "recov_s", "PESQ", "PESQ_fs", "STOI", "echoMOS", "degMOS", "OVRL",
                      "delay_ms", "drift_ppm", "added_ms", "RTF", "resets", "moves"]
        var rows: [[String]] = [header]
        for s in scenarios {
            for (i, e) in engines.enumerated() {
                guard let m = medians[s.name]?[e] else { continue }
                rows.append([i == 0 ? s.name : "", e.rawValue, f(m.erleDB), f(m.linearERLEDB), f(m.convergenceS, "%.2f"),
                             f(m.postDoubleTalkERLEDB), f(m.pathChangeRecoveryS, "%.2f"), f(m.pesq, "%.2f"), f(m.pesqFarSilent, "%.2f"), f(m.stoi, "%.2f"),
                             f(m.aecmosEchoST, "%.2f"), f(m.aecmosDegDT, "%.2f"), f(m.dnsmosOVRL, "%.2f"),
                             f(m.estimatedDelayMs), f(m.estimatedDriftPPM), f(m.addedDelayMs), f(m.realtimeFactor, "%.4f"),
                             m.cancellerResets.map(String.init) ?? "-", m.echoMoves.map(String.init) ?? "-"])
            }
        }
        print("Medians over \(seeds) seed(s); 16 kHz, 20 s, near end 8-14 s (echofree 1-19 s). ERLE in dB over far-end single talk after 2 s; "
              + "PESQ_fs: the same near end with the far end silent; echoMOS: AECMOS echo MOS over far-end single talk; "
              + "degMOS: AECMOS degradation MOS over double talk; OVRL: DNSMOS P.835 overall over double talk.")
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

/// What one suite run gathers: per-seed metrics by scenario and engine, the JSON runs, and the
/// listening-score jobs with the run each belongs to.
struct SuiteResults {
    var metrics: [String: [Engine: [Metrics]]] = [:]
    var runs: [[String: Any]] = []
    var jobs: [ListeningScores.Job] = []
    var jobRuns: [Int: (scenario: String, engine: Engine, seed: Int, run: Int)] = [:]
    var temporaries: [String] = []
}
