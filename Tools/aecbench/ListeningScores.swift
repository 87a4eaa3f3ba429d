import Foundation

/// What listeners would say, predicted: AECMOS (echo and degradation MOS) and DNSMOS (P.835
/// SIG/BAK/OVRL) through `Tools/scoring/mos.py` (the `speechmos` wheel in `.venv`, whose ONNX
/// models ship with it). Optional: without Python the bench leaves these columns out.
enum ListeningScores {
    /// One output to score, with the segments that say which AECMOS scenario each part is.
    struct Job {
        var id: Int
        var far: String, mic: String, out: String
        var farSingleTalk: [[Double]] = []
        var doubleTalk: [Double]?

        var json: [String: Any] {
            ["id": id, "far": far, "mic": mic, "out": out, "far_single_talk_s": farSingleTalk,
             "double_talk_s": doubleTalk ?? NSNull()]
        }
    }

    /// Whether the scorer imports; with `install`, installs `Tools/scoring/requirements-mos.txt`
    /// into `.venv` first (made by `Tools/score` if missing).
    static func isAvailable(install: Bool) -> Bool {
        if check() { return true }
        guard install else { return false }
        note("installing AECMOS/DNSMOS (speechmos, onnxruntime, librosa) into .venv, once")
        if !FileManager.default.isExecutableFile(atPath: Repository.venvPython) {
            _ = try? runCommand("/usr/bin/env", ["python3", "-m", "venv", "\(Repository.root)/.venv"], echoStderr: true)
        }
        _ = try? runCommand("\(Repository.root)/.venv/bin/pip", ["install", "-q", "--disable-pip-version-check", "-r",
                                                                  "\(Repository.root)/Tools/scoring/requirements-mos.txt"],
                            echoStderr: true)
        return check()
    }

    private static func check() -> Bool {
        guard FileManager.default.isExecutableFile(atPath: Repository.venvPython) else { return false }
        return (try? runCommand(Repository.venvPython, ["-c", "import speechmos, onnxruntime, librosa"]).status) == 0
    }

    /// Scores every job in one Python run (the models load once); returns the scores by job id.
    static func score(_ jobs: [Job], workDirectory: String) -> [Int: [String: Double]] {
        guard !jobs.isEmpty else { return [:] }
        let path = "\(workDirectory)/mos-jobs-\(UUID().uuidString).json"
        defer { try? FileManager.default.removeItem(atPath: path) }
        guard let data = try? JSONSerialization.data(withJSONObject: jobs.map(\.json)),
              (try? data.write(to: URL(fileURLWithPath: path))) != nil,
              let result = try? runCommand(Repository.venvPython, ["\(Repository.root)/Tools/scoring/mos.py", path], echoStderr: true)
        else { return [:] }
        var scores: [Int: [String: Double]] = [:]
        for line in result.output.split(separator: "\n") {
            guard let object = (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any],
                  let id = object["id"] as? Int else { continue }
            scores[id] = object.compactMapValues { $0 as? Double }
        }
        return scores
    }
}

extension Metrics {
    /// Takes `mos.py`'s scores for this run.
    mutating func record(listening s: [String: Double]) {
        aecmosEchoST = s["aecmos_echo_st"]
        aecmosEchoDT = s["aecmos_echo_dt"]
        aecmosDegDT = s["aecmos_deg_dt"]
        aecmosEcho = s["aecmos_echo"]
        aecmosDeg = s["aecmos_deg"]
        dnsmosSIG = s["dnsmos_sig"]
        dnsmosBAK = s["dnsmos_bak"]
        dnsmosOVRL = s["dnsmos_ovrl"]
    }
}

extension SuiteCommand {
    /// The job for one engine's output in a scenario folder: far-end single talk after 2 s, double talk.
    static func listeningJob(id: Int, folder: String, engine: Engine, truth: GroundTruth) -> ListeningScores.Job {
        let fs = Double(truth.sampleRate)
        let single = Measure.clip(truth.farSingleTalk, from: 2 * truth.sampleRate).map { [Double($0.lowerBound) / fs, Double($0.upperBound) / fs] }
        return ListeningScores.Job(id: id, far: "\(folder)/far.wav", mic: "\(folder)/mic.wav", out: "\(folder)/out-\(engine.rawValue).wav",
                                   farSingleTalk: single,
                                   doubleTalk: truth.doubleTalk.map { [Double($0.lowerBound) / fs, Double($0.upperBound) / fs] })
    }

    /// AECMOS per scenario and engine: echo MOS in far-end single talk, degradation MOS in double talk.
    func plotListening(_ scenarios: [SuiteScenario], medians: [String: [Engine: Metrics]], engines: [Engine]) throws {
        let names = scenarios.map(\.name)
        for (title, file, key) in [("AECMOS echo MOS, far-end single talk", "mos-echo", \Metrics.aecmosEchoST),
                                   ("AECMOS degradation MOS, double talk", "mos-degradation", \Metrics.aecmosDegDT)] {
            var plot = SVGPlot(title: "\(title) (medians; x: \(names.enumerated().map { "\($0.offset) \($0.element)" }.joined(separator: ", ")))",
                               xLabel: "scenario", yLabel: "MOS", xRange: -0.5...(Double(names.count) - 0.5), yRange: 1...5,
                               guides: [(4.4, "4.4"), (4.6, "4.6")])
            plot.width = 1100
            for (i, engine) in engines.enumerated() {
                let points = names.enumerated().map { (Double($0.offset), medians[$0.element]?[engine]?[keyPath: key]) }
                plot.series.append(.init(name: engine.title, color: SVGPlot.palette[i % SVGPlot.palette.count], points: points))
            }
            try plot.write(to: "\(outDir)/\(file).svg")
        }
    }
}
