import AudioAnalysis
import Foundation
import Simulation
import SpeexDSP
import WAV

/// `scenario.json`: how a scenario was made, and the segments the metrics need.
struct ScenarioDescription: Codable {
    var sampleRate: Int
    var durationS: Double
    var room: String
    var rt60S: Double?
    var roomSizeM: [Double]?
    var loudspeakerM: [Double]?
    var microphoneM: [Double]?
    var movedLoudspeakerM: [Double]?
    var rirFile: String?
    var bulkDelayMs: Double
    /// Moves of the echo's delay within the run: [time s, change ms] each (none: absent).
    var delayMovesMs: [[Double]]?
    var driftPPM: Double
    var nonlinear: String
    var distortionDB: Double?
    var serDB: Double
    var enrDB: Double
    var pathChangeS: Double?
    var doubleTalkS: [Double]?
    var farSingleTalkS: [[Double]]
    var echoGain: Double
    /// False when the microphone hears no echo at all (absent in older files: true).
    var hasEchoPath: Bool?
    /// The microphone's DC offset, full scale (absent: none).
    var captureDCOffset: Double?
    var seed: UInt64
    var farFile: String?
    var nearFile: String?
    var clippedSamples: Int

    enum CodingKeys: String, CodingKey {
        case sampleRate = "sample_rate", durationS = "duration_s", room, rt60S = "rt60_s", roomSizeM = "room_size_m"
        case loudspeakerM = "loudspeaker_m", microphoneM = "microphone_m", movedLoudspeakerM = "moved_loudspeaker_m"
        case rirFile = "rir_file", bulkDelayMs = "bulk_delay_ms", delayMovesMs = "delay_moves_s_ms", driftPPM = "drift_ppm", nonlinear
        case distortionDB = "distortion_db", serDB = "ser_db", enrDB = "enr_db", pathChangeS = "path_change_s"
        case doubleTalkS = "double_talk_s", farSingleTalkS = "far_single_talk_s", echoGain = "echo_gain"
        case hasEchoPath = "echo_path", captureDCOffset = "capture_dc_offset", seed
        case farFile = "far_file", nearFile = "near_file", clippedSamples = "clipped_samples"
    }

    init(_ s: Scenario, farFile: String?, nearFile: String?, rirFile: String?) {
        let c = s.configuration, fs = Double(c.sampleRate)
        sampleRate = c.sampleRate
        durationS = c.duration
        switch c.room {
        case .shoebox(let rt60): room = "shoebox"; rt60S = rt60
        case .decayingNoise(let rt60): room = "decaying-noise"; rt60S = rt60
        case .impulseResponse: room = "rir"
        }
        if let g = s.geometry {
            roomSizeM = [g.room.size.x, g.room.size.y, g.room.size.z]
            loudspeakerM = [g.loudspeaker.x, g.loudspeaker.y, g.loudspeaker.z]
            microphoneM = [g.microphone.x, g.microphone.y, g.microphone.z]
            if c.pathChangeTime != nil, let m = g.movedLoudspeaker { movedLoudspeakerM = [m.x, m.y, m.z] }
        }
        self.rirFile = rirFile
        bulkDelayMs = c.bulkDelay * 1000
        delayMovesMs = c.delayMoves.isEmpty ? nil : c.delayMoves.map { [$0.time, $0.change * 1000] }
        driftPPM = c.driftPPM
        nonlinear = c.nonlinearity.rawValue
        distortionDB = s.distortionDB
        serDB = c.signalToEchoDB
        enrDB = c.echoToNoiseDB
        pathChangeS = c.pathChangeTime
        doubleTalkS = s.doubleTalk.map { [Double($0.lowerBound) / fs, Double($0.upperBound) / fs] }
        farSingleTalkS = s.farSingleTalk.map { [Double($0.lowerBound) / fs, Double($0.upperBound) / fs] }
        echoGain = Double(s.echoGain)
        hasEchoPath = c.hasEchoPath
        captureDCOffset = c.captureDCOffset == 0 ? nil : Double(c.captureDCOffset)
        seed = c.seed
        self.farFile = farFile
        self.nearFile = nearFile
        clippedSamples = s.clippedSamples
    }

    func samples(_ seconds: Double) -> Int { Int((seconds * Double(sampleRate)).rounded()) }
}

enum ScenarioFiles {
    /// Writes far, mic, echo, near and noise WAVs and scenario.json into `directory`.
    static func write(_ s: Scenario, to directory: String, farFile: String?, nearFile: String?, rirFile: String?) throws {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let fs = s.configuration.sampleRate
        for (name, signal) in [("far", s.far), ("mic", s.mic), ("echo", s.echo), ("near", s.near), ("noise", s.noise)] {
            try WAV.write(WAVAudio(sampleRate: fs, samples: signal), to: "\(directory)/\(name).wav")
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try encoder.encode(ScenarioDescription(s, farFile: farFile, nearFile: nearFile, rirFile: rirFile))
            .write(to: URL(fileURLWithPath: "\(directory)/scenario.json"))
    }

    /// The ground truth of a scenario folder, if it has one.
    static func groundTruth(in directory: String) throws -> GroundTruth? {
        let path = "\(directory)/scenario.json"
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        let d = try JSONDecoder().decode(ScenarioDescription.self, from: Data(contentsOf: URL(fileURLWithPath: path)))
        let echo = try WAV.read("\(directory)/echo.wav").samples
        let near = try WAV.read("\(directory)/near.wav").samples
        let noise = try? WAV.read("\(directory)/noise.wav").samples
        return GroundTruth(sampleRate: d.sampleRate, echo: echo, near: near, noise: noise,
                           farSingleTalk: d.farSingleTalkS.map { d.samples($0[0])..<d.samples($0[1]) },
                           doubleTalk: d.doubleTalkS.map { d.samples($0[0])..<d.samples($0[1]) },
                           pathChange: d.pathChangeS.map { d.samples($0) })
    }

    /// The ground truth of an in-memory scenario.
    static func groundTruth(_ s: Scenario) -> GroundTruth {
        GroundTruth(sampleRate: s.configuration.sampleRate, echo: s.echo, near: s.near, noise: s.noise,
                    farSingleTalk: s.farSingleTalk, doubleTalk: s.doubleTalk, pathChange: s.pathChangeSample)
    }

    /// A mono signal at `rate`, resampled with SpeexDSP if the file has another rate.
    static func load(_ path: String, rate: Int) throws -> [Float] {
        let audio = try WAV.read(path)
        return try SpeexResampler.resample(audio.mono, from: audio.sampleRate, to: rate, quality: 8)
    }
}
