import ArgumentParser
import Simulation

/// One of the standard scenarios: the base call with one thing changed.
struct SuiteScenario {
    var name: String
    var summary: String
    /// Whether the far end is narrowband, as from the telephone network: through 8 kHz and back.
    var narrowbandFar = false
    /// Whether each seed's far-end talker talks at the near end and the near-end one at the far end.
    var swapsTalkers = false
    var change: @Sendable (inout ScenarioConfiguration) -> Void

    /// 20 s at 16 kHz; the far end talks throughout, the near end from 8 to 14 s unless said.
    static let all: [SuiteScenario] = [
        SuiteScenario(name: "base", summary: "RT60 0.3 s, 5 ms delay, SER 0 dB, ENR 40 dB") { _ in },
        SuiteScenario(name: "doubletalk", summary: "base, near end 6 dB below the echo (SER -6 dB)") { $0.signalToEchoDB = -6 },
        SuiteScenario(name: "nonlinear", summary: "base, mild loudspeaker distortion (about -24 dB)") { $0.nonlinearity = .mild },
        SuiteScenario(name: "delay150", summary: "base, 150 ms bulk delay") { $0.bulkDelay = 0.150 },
        SuiteScenario(name: "drift50", summary: "base, capture clock 50 ppm fast") { $0.driftPPM = 50 },
        SuiteScenario(name: "pathchange", summary: "base, the loudspeaker moves at 16 s") { $0.pathChangeTime = 16 },
        SuiteScenario(name: "noise", summary: "base, pink noise 15 dB below the echo (ENR 15 dB)") { $0.echoToNoiseDB = 15 },
        // No echo at all while the far end plays: a headset, or a far end played on another
        // device. The near end talks almost throughout, from the first second, so the start of
        // the call (before anything is known about the echo) is scored too.
        SuiteScenario(name: "echofree",
                      summary: "no echo path: microphone = near end (1-19 s, at the base's level) + noise") {
            $0.hasEchoPath = false
            $0.doubleTalk = 1..<19
        },
        // The same with a narrowband far end (the telephone network's 8 kHz), as most of the
        // test set's far ends are: SpeexDSP's residual suppression reacts to the far end, and
        // what it does to the near end depends on the far end's band.
        SuiteScenario(name: "echofreenb", summary: "echofree with a narrowband far end (through 8 kHz and back)",
                      narrowbandFar: true) {
            $0.hasEchoPath = false
            $0.doubleTalk = 1..<19
        },
        // The same with each seed's talkers in each other's place: other pairs of voices, whose
        // whitened spectra can line up by chance into a peak an echo would give.
        SuiteScenario(name: "echofreeswap", summary: "echofree with the far and near talkers swapped", swapsTalkers: true) {
            $0.hasEchoPath = false
            $0.doubleTalk = 1..<19
        },
        // A headset: the earpiece leaks into the boom microphone through a short, weak path,
        // and the talker is much louder than that leak.
        SuiteScenario(name: "headset",
                      summary: "weak short echo path (RT60 50 ms, echo 26 dB under the far end), near end 20 dB above it, ENR 20 dB") {
            $0.room = .decayingNoise(rt60: 0.05)
            $0.echoLevelDBFS = -46
            $0.signalToEchoDB = 20
            $0.echoToNoiseDB = 20
        },
        // Where the chain is weakest: double talk while the clocks drift, a near end much
        // louder than the echo, and a long reverberant tail.
        SuiteScenario(name: "driftdt", summary: "base, capture clock 50 ppm fast, near end 6 dB below the echo") {
            $0.driftPPM = 50
            $0.signalToEchoDB = -6
        },
        SuiteScenario(name: "loudnear", summary: "base, near end 10 dB above the echo (SER +10 dB)") { $0.signalToEchoDB = 10 },
        // The test set's base differs from the tuning set's in its far ends (narrowband) and its
        // room (RT60 0.45 s); each of these changes one of the two on the tuning set's talkers.
        SuiteScenario(name: "basenb", summary: "base with a narrowband far end (through 8 kHz and back)",
                      narrowbandFar: true) { _ in },
        SuiteScenario(name: "midroom", summary: "base in a room of RT60 0.5 s") { $0.room = .shoebox(rt60: 0.5) },
        SuiteScenario(name: "longtail", summary: "base in a reverberant room (RT60 0.8 s)") { $0.room = .shoebox(rt60: 0.8) },
        // A converter's DC offset at the microphone, -40 dBFS (cheap converters without a
        // highpass; recordings made through them): with an echo, and in an echo-free call.
        SuiteScenario(name: "dcoffset", summary: "base, a DC offset of -40 dBFS at the microphone") {
            $0.captureDCOffset = 0.01
        },
        SuiteScenario(name: "echofreedc", summary: "echofree with a DC offset of -40 dBFS at the microphone") {
            $0.hasEchoPath = false
            $0.doubleTalk = 1..<19
            $0.captureDCOffset = 0.01
        },
        // The echo's delay jumps within the call (a stream that drops or repeats audio).
        SuiteScenario(name: "pulsebursts", summary: "base, the echo's delay moves by 5-60 ms every 1.5-4 s from 3 s on") {
            $0.delayMoves = EchoPathDelayMove.bursts(duration: $0.duration, seed: $0.seed)
        },
    ]

    /// Far-end and near-end talkers per seed: always two different people.
    static let talkers: [(far: String, near: String)] = [
        ("en_f_congrats_16k.wav", "fr_f_msginstruct_16k.wav"),
        ("fr_f_congrats_16k.wav", "en_m_librivox_16k.wav"),
        ("en_f_echotest_16k.wav", "fr_f_congrats_16k.wav"),
    ]
}

/// Which scenarios a suite runs: the tuning set, on which every decision about the chain is
/// made, or the test set, scored only to report: other talkers and languages (the far end
/// narrowband, as from a telephone network), another room size and other seeds.
enum BenchSet: String, ExpressibleByArgument, Sendable {
    case tuning, test

    /// Far-end and near-end talkers per seed.
    var talkers: [(far: String, near: String)] {
        switch self {
        case .tuning: SuiteScenario.talkers
        case .test: [("it_f_menardi.wav", "es_co_f.wav"), ("fr_f_armelle.wav", "es_f_allison.wav"), ("es_co_f.wav", "it_f_menardi.wav")]
        }
    }

    /// The seed of seed index `index`: the room's geometry, the noise.
    func seed(_ index: Int) -> UInt64 { UInt64(index + 1) + (self == .test ? 100 : 0) }

    /// What the set changes in every scenario before the scenario's own change.
    func prepare(_ configuration: inout ScenarioConfiguration) {
        if self == .test { configuration.room = .shoebox(rt60: 0.45) }
    }
}

/// A target of issues 5 and 20, checked against the suite's medians.
struct Target {
    var name: String
    var requirement: String
    var value: (Engine) -> Double?
    var met: (Double) -> Bool
}

extension SuiteCommand {
    static func targets(_ medians: [String: [Engine: Metrics]]) -> [Target] {
        func get(_ scenario: String, _ key: @escaping (Metrics) -> Double?) -> (Engine) -> Double? {
            { engine in medians[scenario]?[engine].flatMap(key) }
        }
        func loss(_ scenario: String) -> (Engine) -> Double? {
            { e in
                guard let b = medians["base"]?[e]?.erleDB, let d = medians[scenario]?[e]?.erleDB else { return nil }
                return b - d
            }
        }
        func worst(_ key: KeyPath<Metrics, Double?>) -> (Engine) -> Double? {
            { e in medians.values.compactMap { $0[e]?[keyPath: key] }.min() }
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
            Target(name: "clock drift 50 ppm, ERLE loss vs base (dB)", requirement: "<= 3", value: loss("drift50")) { $0 <= 3 },
            Target(name: "bulk delay 150 ms, ERLE loss vs base (dB)", requirement: "<= 3", value: loss("delay150")) { $0 <= 3 },
            Target(name: "added delay (ms)", requirement: "<= 10", value: get("base", \.addedDelayMs)) { $0 <= 10 },
            Target(name: "realtime factor", requirement: "<= 0.01", value: get("base", \.realtimeFactor)) { $0 <= 0.01 },
            // Issue 20: a near end that no echo reaches is left as it is.
            Target(name: "echo-free double talk PESQ-WB", requirement: ">= 3.6", value: get("echofree", \.pesq)) { $0 >= 3.6 },
            Target(name: "echo-free PESQ-WB, far-end-silent minus playing", requirement: "<= 0.3", value: { e in
                guard let m = medians["echofree"]?[e], let silent = m.pesqFarSilent, let playing = m.pesq else { return nil }
                return silent - playing
            }) { $0 <= 0.3 },
            Target(name: "far-end single talk AECMOS echo MOS, worst scenario", requirement: ">= 4.6",
                   value: worst(\.aecmosEchoST)) { $0 >= 4.6 },
            Target(name: "double talk AECMOS degradation MOS, worst scenario", requirement: ">= 4.4",
                   value: worst(\.aecmosDegDT)) { $0 >= 4.4 },
        ]
    }
}
