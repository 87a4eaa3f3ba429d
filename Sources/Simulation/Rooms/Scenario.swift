import DSP
import Platform
import AudioAnalysis

/// What a simulated call looks like at the microphone: which room, how the echo gets there,
/// how loud everything is, and when the near end talks.
///
/// Thread safety: a value type; safe from any thread.
public struct ScenarioConfiguration: Sendable, Equatable {
    /// Where the room response comes from.
    public enum Room: Sendable, Equatable {
        /// A shoebox room by the image method; size and positions are drawn from the seed.
        case shoebox(rt60: Double)
        /// Exponentially decaying noise (``AudioAnalysis/ImpulseResponse/decayingNoise(sampleRate:rt60:delay:length:gain:seed:)``).
        case decayingNoise(rt60: Double)
        /// A measured or precomputed response at the scenario's sampling rate.
        case impulseResponse([Float])
    }

    public var sampleRate: Int
    /// Seconds of signal.
    public var duration: Double
    public var room: Room
    /// Delay before the room (converters, buffers), in seconds.
    public var bulkDelay: Double
    /// Capture clock minus playback clock, in parts per million.
    public var driftPPM: Double
    public var nonlinearity: LoudspeakerNonlinearity
    /// Active level of the near-end talker relative to the echo's, in dB.
    public var signalToEchoDB: Double
    /// Active level of the echo relative to the noise's, in dB.
    public var echoToNoiseDB: Double
    /// When the room response changes, in seconds (the loudspeaker moves), if it does.
    public var pathChangeTime: Double?
    /// When the near end talks, in seconds; the far end talks throughout.
    public var doubleTalk: Range<Double>?
    /// Active level of the far-end speech as played, in dBFS.
    public var farLevelDBFS: Double
    /// Active level of the echo at the microphone, in dBFS.
    public var echoLevelDBFS: Double
    /// Seed for the room geometry, the noise and a decaying-noise response.
    public var seed: UInt64
    /// Whether the loudspeaker reaches the microphone at all. Without an echo path (a headset
    /// with no leak, a far end played on another device) the microphone holds only the near end
    /// and the noise, still set relative to ``echoLevelDBFS``, so levels compare with the
    /// scenarios that have an echo.
    public var hasEchoPath: Bool
    /// Moves of the echo's delay during the call (``EchoPathDelayMove``; see
    /// ``EchoPathDelayMove/bursts(duration:seed:)``); none by default.
    public var delayMoves: [EchoPathDelayMove] = []
    /// A DC offset the microphone's converter adds, in full scale (a cheap converter without a
    /// highpass, or a recording made through one); none by default.
    public var captureDCOffset: Float = 0

    public init(sampleRate: Int = 16000, duration: Double = 20, room: Room = .shoebox(rt60: 0.3), bulkDelay: Double = 0.005,
                driftPPM: Double = 0, nonlinearity: LoudspeakerNonlinearity = .none, signalToEchoDB: Double = 0,
                echoToNoiseDB: Double = 40, pathChangeTime: Double? = nil, doubleTalk: Range<Double>? = 8..<14,
                farLevelDBFS: Double = -20, echoLevelDBFS: Double = -26, seed: UInt64 = 1, hasEchoPath: Bool = true) {
        self.sampleRate = sampleRate
        self.duration = duration
        self.room = room
        self.bulkDelay = bulkDelay
        self.driftPPM = driftPPM
        self.nonlinearity = nonlinearity
        self.signalToEchoDB = signalToEchoDB
        self.echoToNoiseDB = echoToNoiseDB
        self.pathChangeTime = pathChangeTime
        self.doubleTalk = doubleTalk
        self.farLevelDBFS = farLevelDBFS
        self.echoLevelDBFS = echoLevelDBFS
        self.seed = seed
        self.hasEchoPath = hasEchoPath
    }
}

/// Where things stand in a shoebox scenario.
///
/// Thread safety: a value type; safe from any thread.
public struct ScenarioGeometry: Sendable, Equatable, Codable {
    public var room: ShoeboxRoom
    public var loudspeaker: Point3
    public var microphone: Point3
    /// Where the loudspeaker is after the echo-path change, if there is one.
    public var movedLoudspeaker: Point3?

    /// A furnished-office-sized room (4-6 x 3-5 x 2.5-3 m) with a device at table height, its
    /// microphone 0.2-0.6 m from its loudspeaker, drawn from `seed`. The moved loudspeaker is
    /// at least 0.15 m nearer or farther than the original, so the direct path changes too.
    public static func random(rt60: Double, seed: UInt64) -> ScenarioGeometry {
        var rng = SeededRandom(seed: seed ^ 0x5EED_0F00_2003)
        let size = Point3(rng.uniform(4...6), rng.uniform(3...5), rng.uniform(2.5...3))
        let room = ShoeboxRoom(size: size, rt60: rt60)
        let mic = Point3(rng.uniform(1...(size.x - 1)), rng.uniform(1...(size.y - 1)), rng.uniform(0.7...0.8))
        func around(_ distance: Double) -> Point3 {
            let azimuth = rng.uniform(0...(2 * Double.pi))
            let elevation = rng.uniform(-0.3...0.3)
            return Point3(mic.x + distance * Math.cos(elevation) * Math.cos(azimuth),
                          mic.y + distance * Math.cos(elevation) * Math.sin(azimuth),
                          mic.z + distance * Math.sin(elevation))
        }
        let distance = rng.uniform(0.2...0.6)
        let speaker = around(distance)
        var movedDistance = rng.uniform(0.15...0.9)
        if abs(movedDistance - distance) < 0.15 { movedDistance = distance + (distance < 0.45 ? 0.3 : -0.15) }
        let moved = around(movedDistance)
        return ScenarioGeometry(room: room, loudspeaker: speaker, microphone: mic, movedLoudspeaker: moved)
    }
}

/// A simulated stretch of a call: the far-end speech as played, the echo it leaves in the
/// microphone, the near-end talker, the noise, and their sum at the microphone.
///
/// The far end talks throughout; the near end only during ``ScenarioConfiguration/doubleTalk``.
/// Levels are active speech levels (``SignalLevels/activePower(_:sampleRate:)``): the far end
/// plays at ``ScenarioConfiguration/farLevelDBFS``, the echo is scaled to
/// ``ScenarioConfiguration/echoLevelDBFS``, the near end sits ``ScenarioConfiguration/signalToEchoDB``
/// above the echo and pink noise ``ScenarioConfiguration/echoToNoiseDB`` below it.
///
/// Thread safety: a value type; safe from any thread.
public struct Scenario: Sendable {
    public let configuration: ScenarioConfiguration
    /// The loudspeaker signal (what the echo canceller gets as reference).
    public let far: [Float]
    /// The echo at the microphone.
    public let echo: [Float]
    /// The near-end talker at the microphone (zero outside double talk).
    public let near: [Float]
    public let noise: [Float]
    /// `echo + near + noise`, plus the converter's DC offset.
    public let mic: [Float]
    /// The room response used (before ``echoGain``), and the one after the change.
    public let impulseResponse: [Float]
    public let changedImpulseResponse: [Float]?
    /// Scale applied to the responses to reach the echo level.
    public let echoGain: Float
    /// The shoebox geometry, when the room is one.
    public let geometry: ScenarioGeometry?
    /// Distortion of the loudspeaker relative to its linear part, in dB (nil without nonlinearity).
    public let distortionDB: Double?
    /// Samples where only the far end talks.
    public let farSingleTalk: [Range<Int>]
    /// Samples where both talk.
    public let doubleTalk: Range<Int>?
    /// The sample at which the room response changes.
    public let pathChangeSample: Int?
    /// Microphone samples beyond full scale (they clip when written as 16-bit).
    public let clippedSamples: Int

    /// Builds a scenario from far-end and (optional) near-end speech at `configuration.sampleRate`.
    /// Speech shorter than the scenario is looped.
    public static func make(far farSpeech: [Float], near nearSpeech: [Float]?,
                            configuration c: ScenarioConfiguration) throws(EchoPathError) -> Scenario {
        let fs = c.sampleRate
        let count = Int(c.duration * Double(fs))
        guard count > 0 else { throw EchoPathError("duration \(c.duration) s") }
        guard !farSpeech.isEmpty else { throw EchoPathError("empty far-end speech") }
        let far = SignalLevels.scaled(loop(farSpeech, count), toActiveLevel: c.farLevelDBFS, sampleRate: fs)

        let (ir, changedIR, geometry) = try roomResponses(c)

        // The echo at unit gain, then scaled to its level.
        var path = EchoPathConfiguration(sampleRate: fs, impulseResponse: ir, bulkDelay: c.bulkDelay,
                                         nonlinearity: c.nonlinearity, driftPPM: c.driftPPM)
        if let t = c.pathChangeTime, let changedIR { path.change = EchoPathChange(time: t, impulseResponse: changedIR) }
        path.delayMoves = c.delayMoves
        let rawEcho = try EchoPath.render(path, signal: far)
        let rawLevel = SignalLevels.activePower(rawEcho, sampleRate: fs)
        guard rawLevel > 0 else { throw EchoPathError("the echo is silent") }
        let echoGain = c.hasEchoPath ? Float((Math.pow(10, c.echoLevelDBFS / 10) / rawLevel).squareRoot()) : 0
        let echo = rawEcho.map { $0 * echoGain }
        let echoPower = Math.pow(10, c.echoLevelDBFS / 10)

        let (near, doubleTalk) = nearEnd(nearSpeech, configuration: c, count: count, echoPower: echoPower)
        let noise = SignalLevels.pinkNoise(count: count, rms: (echoPower * Math.pow(10, -c.echoToNoiseDB / 10)).squareRoot(),
                                           seed: c.seed &+ 7)
        var mic = [Float](repeating: 0, count: count)
        var clipped = 0
        for i in 0..<count {
            mic[i] = echo[i] + near[i] + noise[i] + c.captureDCOffset
            if abs(mic[i]) >= 1 { clipped += 1 }
        }
        var single: [Range<Int>] = []
        if let dt = doubleTalk {
            if dt.lowerBound > 0 { single.append(0..<dt.lowerBound) }
            if dt.upperBound < count { single.append(dt.upperBound..<count) }
        } else {
            single = [0..<count]
        }
        var distortion: Double?
        if c.nonlinearity != .none {
            distortion = LoudspeakerNonlinearity.distortionDB(input: far, output: far.map { c.nonlinearity.apply($0) })
        }
        return Scenario(configuration: c, far: far, echo: echo, near: near, noise: noise, mic: mic, impulseResponse: ir,
                        changedImpulseResponse: changedIR, echoGain: echoGain, geometry: geometry, distortionDB: distortion,
                        farSingleTalk: single, doubleTalk: doubleTalk,
                        pathChangeSample: c.pathChangeTime.map { Int($0 * Double(fs)) }, clippedSamples: clipped)
    }

    /// The room's impulse response, the one after the path change (when there is one), and the
    /// shoebox geometry they came from.
    private static func roomResponses(_ c: ScenarioConfiguration) throws(EchoPathError)
        -> (ir: [Float], changed: [Float]?, geometry: ScenarioGeometry?) {
        let fs = c.sampleRate
        var geometry: ScenarioGeometry?
        let ir: [Float], changedIR: [Float]?
        switch c.room {
        case .shoebox(let rt60):
            guard rt60 > 0.05, rt60 <= 2 else { throw EchoPathError("RT60 \(rt60) s must be in (0.05, 2]") }
            let g = ScenarioGeometry.random(rt60: rt60, seed: c.seed)
            geometry = g
            ir = g.room.impulseResponse(source: g.loudspeaker, microphone: g.microphone, sampleRate: fs)
            changedIR = c.pathChangeTime == nil ? nil
                : g.room.impulseResponse(source: g.movedLoudspeaker!, microphone: g.microphone, sampleRate: fs)
        case .decayingNoise(let rt60):
            guard rt60 > 0.01, rt60 <= 2 else { throw EchoPathError("RT60 \(rt60) s must be in (0.01, 2]") }
            ir = ImpulseResponse.decayingNoise(sampleRate: fs, rt60: rt60, delay: 0.001, seed: c.seed)
            changedIR = c.pathChangeTime == nil ? nil
                : ImpulseResponse.decayingNoise(sampleRate: fs, rt60: rt60, delay: 0.002, seed: c.seed &+ 1000)
        case .impulseResponse(let response):
            guard !response.isEmpty else { throw EchoPathError("empty impulse response") }
            ir = response
            // Without a second measured response, a change inverts everything after the first
            // 2 ms (the reflections): the same decay, a different path.
            changedIR = c.pathChangeTime == nil ? nil : response.enumerated().map { i, v in i > fs / 500 ? -v : v }
        }
        return (ir, changedIR, geometry)
    }

    /// The near end, only during double talk, starting at its first word, at its level against
    /// the echo; and where it talks.
    private static func nearEnd(_ nearSpeech: [Float]?, configuration c: ScenarioConfiguration, count: Int,
                                echoPower: Double) -> ([Float], Range<Int>?) {
        let fs = c.sampleRate
        var near = [Float](repeating: 0, count: count)
        var doubleTalk: Range<Int>?
        if let dt = c.doubleTalk, let nearSpeech, !nearSpeech.isEmpty {
            let start = max(0, min(count, Int(dt.lowerBound * Double(fs))))
            let end = max(start, min(count, Int(dt.upperBound * Double(fs))))
            if end > start {
                let speech = loop(Array(nearSpeech[firstActive(nearSpeech, sampleRate: fs)...]), end - start)
                let level = SignalLevels.activePower(speech, sampleRate: fs)
                if level > 0 {
                    let gain = Float((echoPower * Math.pow(10, c.signalToEchoDB / 10) / level).squareRoot())
                    let fade = fs / 100
                    for i in 0..<(end - start) {
                        let edge = min(i, end - start - 1 - i)
                        let ramp = edge < fade ? Float(edge) / Float(fade) : 1
                        near[start + i] = speech[i] * gain * ramp
                    }
                    doubleTalk = start..<end
                }
            }
        }
        return (near, doubleTalk)
    }

    /// `x` repeated or cut to `count` samples.
    static func loop(_ x: [Float], _ count: Int) -> [Float] {
        guard !x.isEmpty else { return [Float](repeating: 0, count: count) }
        return (0..<count).map { x[$0 % x.count] }
    }

    /// Index of the first 10 ms frame within 30 dB of the loudest one (skips leading silence).
    static func firstActive(_ x: [Float], sampleRate: Int) -> Int {
        let frame = max(1, sampleRate / 100)
        let energies = SignalLevels.frameEnergies(x, frame: frame)
        guard let peak = energies.max(), peak > 0 else { return 0 }
        let index = energies.firstIndex { $0 >= peak * 1e-3 } ?? 0
        return index * frame
    }
}
