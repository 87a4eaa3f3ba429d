import ArgumentParser
import Foundation
import Simulation

struct SimulateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "simulate",
        abstract: "Build an echo scenario from real speech and write its signals.",
        discussion: """
            Writes far.wav (the loudspeaker signal), mic.wav (echo + near + noise), echo.wav, near.wav \
            (ground truth), noise.wav and scenario.json into --out-dir. The far end talks throughout; the near \
            end talks during --double-talk. Levels are active speech levels: the far end plays at -20 dBFS, the \
            echo reaches the microphone at -26 dBFS.
            """
    )

    @Option(help: "Far-end speech (WAV, any rate; resampled to --rate).")
    var far: String
    @Option(help: "Near-end speech (WAV); without it there is no double talk.")
    var near: String?
    @Option(help: "Room reverberation time in seconds (a shoebox room by the image method, drawn from --seed).")
    var rt60: Double?
    @Option(help: "A measured room impulse response (WAV) instead of a simulated room.")
    var rir: String?
    @Option(name: .customLong("delay-ms"), help: "Bulk delay before the room, in milliseconds.")
    var delayMs = 5.0
    @Option(name: .customLong("drift-ppm"), help: "Capture clock minus playback clock, in ppm.")
    var driftPPM = 0.0
    @Option(help: "Loudspeaker distortion: none, mild (about -24 dB) or hard (about -12 dB).")
    var nonlinear: LoudspeakerNonlinearity = .none
    @Option(name: .customLong("ser-db"), help: "Near-end to echo level, in dB.")
    var serDB = 0.0
    @Option(name: .customLong("enr-db"), help: "Echo to noise level, in dB.")
    var enrDB = 40.0
    @Option(name: .customLong("path-change-s"), help: "Time of an echo-path change (the loudspeaker moves), in seconds.")
    var pathChangeS: Double?
    @Flag(name: .customLong("no-echo-path"), help: "No echo reaches the microphone (a headset, or a far end played on another device).")
    var noEchoPath = false
    @Option(help: "Seed for the room geometry and the noise.")
    var seed: UInt64 = 1
    @Option(name: .customLong("out-dir"), help: "Folder for the WAV files and scenario.json.")
    var outDir: String
    @Option(help: "Seconds of signal.")
    var duration = 20.0
    @Option(name: .customLong("double-talk"), help: "Double-talk span START,END in seconds, or 'none'.")
    var doubleTalk = "8,14"
    @Option(help: "Sampling rate of the scenario, in Hz.")
    var rate = 16000

    func validate() throws {
        if rt60 != nil && rir != nil { throw ValidationError("give --rt60 or --rir, not both") }
        if let rt60, !(0.05...2).contains(rt60) { throw ValidationError("--rt60 must be in 0.05...2") }
        guard (0...2000).contains(delayMs) else { throw ValidationError("--delay-ms must be in 0...2000") }
        guard abs(driftPPM) <= 1000 else { throw ValidationError("--drift-ppm must be within +-1000") }
        guard duration > 1, duration <= 600 else { throw ValidationError("--duration must be in (1, 600] s") }
        guard [8000, 16000, 32000, 48000].contains(rate) else { throw ValidationError("--rate must be 8000, 16000, 32000 or 48000") }
        _ = try parsedDoubleTalk()
    }

    func parsedDoubleTalk() throws -> Range<Double>? {
        if doubleTalk == "none" { return nil }
        let parts = doubleTalk.split(separator: ",").compactMap { Double($0) }
        guard parts.count == 2, parts[0] >= 0, parts[1] > parts[0] else {
            throw ValidationError("--double-talk must be START,END in seconds or 'none'")
        }
        return parts[0]..<parts[1]
    }

    func run() throws {
        let farSpeech = try ScenarioFiles.load(far, rate: rate)
        let nearSpeech = try near.map { try ScenarioFiles.load($0, rate: rate) }
        var config = ScenarioConfiguration(sampleRate: rate, duration: duration, bulkDelay: delayMs / 1000, driftPPM: driftPPM,
                                           nonlinearity: nonlinear, signalToEchoDB: serDB, echoToNoiseDB: enrDB,
                                           pathChangeTime: pathChangeS, doubleTalk: nearSpeech == nil ? nil : try parsedDoubleTalk(),
                                           seed: seed)
        config.hasEchoPath = !noEchoPath
        if let rir {
            config.room = .impulseResponse(try ScenarioFiles.load(rir, rate: rate))
        } else {
            config.room = .shoebox(rt60: rt60 ?? 0.3)
        }
        let scenario = try Scenario.make(far: farSpeech, near: nearSpeech, configuration: config)
        try ScenarioFiles.write(scenario, to: outDir, farFile: far, nearFile: near, rirFile: rir)
        var summary = "wrote \(outDir): \(Int(duration)) s at \(rate) Hz"
        if let d = scenario.distortionDB { summary += String(format: ", loudspeaker distortion %.1f dB", d) }
        if scenario.clippedSamples > 0 { summary += ", \(scenario.clippedSamples) microphone samples clip" }
        print(summary)
    }
}

