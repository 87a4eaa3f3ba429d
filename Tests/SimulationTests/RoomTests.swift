import DSP
import AudioAnalysis
@testable import Simulation
import Testing
import TestSupport
import WAV

@Suite("Shoebox room")
struct RoomTests {
    static let room = ShoeboxRoom(size: Point3(3.2, 2.6, 2.4), rt60: 0.25)

    @Test("The direct path arrives at d / c with amplitude 1 / (4 pi d)")
    func directPath() {
        let source = Point3(1, 1, 1.2), mic = Point3(2.5, 1.4, 1.1)
        let fs = 8000
        let ir = Self.room.impulseResponse(source: source, microphone: mic, sampleRate: fs, length: 0.02)
        let d = source.distance(to: mic)
        let expectedIndex = d / 343 * Double(fs)
        let peak = ir.indices.max { abs(ir[$0]) < abs(ir[$1]) }!
        #expect(abs(Double(peak) - expectedIndex) <= 1)
        // The tap is spread by the fractional-delay sinc; its band-limited peak is close to 1 / (4 pi d).
        #expect(abs(Double(abs(ir[peak])) - 1 / (4 * Double.pi * d)) < 0.35 / (4 * Double.pi * d))
    }

    @Test("The decay matches the requested RT60 (Schroeder integration)")
    func reverberationTime() {
        let fs = 8000
        let ir = Self.room.impulseResponse(source: Point3(0.7, 0.8, 1.3), microphone: Point3(2.4, 1.9, 1.0),
                                           sampleRate: fs, length: 0.3)
        // Backward-integrated energy, then the slope between -5 and -25 dB, extrapolated to 60 dB (T20).
        var tail = [Double](repeating: 0, count: ir.count)
        var sum = 0.0
        for n in stride(from: ir.count - 1, through: 0, by: -1) {
            sum += Double(ir[n]) * Double(ir[n])
            tail[n] = sum
        }
        let db = tail.map { 10 * Math.log10($0 / tail[0]) }
        let t5 = db.firstIndex { $0 <= -5 }!, t25 = db.firstIndex { $0 <= -25 }!
        let rt60 = Double(t25 - t5) / Double(fs) * 3
        #expect(abs(rt60 - 0.25) < 0.25 * 0.3, "measured RT60 \(rt60) s")
    }

    @Test("Absorption from Sabine and Eyring")
    func absorption() {
        let sabine = ShoeboxRoom(size: Point3(5, 4, 3), rt60: 0.5, formula: .sabine)
        #expect(abs(sabine.absorption - 0.161 * 60 / (94 * 0.5)) < 1e-12)
        let eyring = ShoeboxRoom(size: Point3(5, 4, 3), rt60: 0.5)
        #expect(eyring.absorption < sabine.absorption)
        #expect(abs(-94 * Math.log(1 - eyring.absorption) * 0.5 - 0.161 * 60) < 1e-9)
    }

    @Test("The same inputs give the same response")
    func deterministic() {
        let a = Self.room.impulseResponse(source: Point3(1, 1, 1), microphone: Point3(2, 2, 1), sampleRate: 8000, length: 0.05)
        let b = Self.room.impulseResponse(source: Point3(1, 1, 1), microphone: Point3(2, 2, 1), sampleRate: 8000, length: 0.05)
        #expect(a == b)
    }
}

@Suite("Scenario")
struct ScenarioTests {
    static func make(seed: UInt64, _ change: (inout ScenarioConfiguration) -> Void = { _ in }) throws -> Scenario {
        let far = Array(try Fixtures.speech(Fixtures.englishFemale).samples.prefix(16000 * 6))
        let near = Array(try Fixtures.speech(Fixtures.englishMale).samples.prefix(16000 * 3))
        var config = ScenarioConfiguration(duration: 5, room: .decayingNoise(rt60: 0.1), signalToEchoDB: 6, echoToNoiseDB: 30,
                                           doubleTalk: 2..<4, seed: seed)
        change(&config)
        return try Scenario.make(far: far, near: near, configuration: config)
    }

    @Test("Levels, segments and the microphone sum are as configured")
    func levelsAndSegments() throws {
        let s = try Self.make(seed: 1)
        let fs = 16000
        #expect(abs(SignalLevels.activeLevelDB(s.far, sampleRate: fs) - -20) < 0.01)
        #expect(abs(SignalLevels.activeLevelDB(s.echo, sampleRate: fs) - -26) < 0.01)
        let nearLevel = SignalLevels.activeLevelDB(Array(s.near[s.doubleTalk!]), sampleRate: fs)
        #expect(abs(nearLevel - (-26 + 6)) < 0.5)
        let noiseDB = 10 * Math.log10(Levels.energy(s.noise) / Double(s.noise.count))
        #expect(abs(noiseDB - (-26 - 30)) < 0.01)
        #expect(s.doubleTalk == 32000..<64000)
        #expect(s.farSingleTalk == [0..<32000, 64000..<80000])
        #expect(s.near[..<32000].allSatisfy { $0 == 0 })
        #expect(zip(s.mic.indices, s.mic).allSatisfy { i, m in m == s.echo[i] + s.near[i] + s.noise[i] })
        #expect(s.clippedSamples == 0)
    }

    @Test("A converter's DC offset is added to the microphone and nothing else")
    func dcOffset() throws {
        let plain = try Self.make(seed: 1), offset = try Self.make(seed: 1) { $0.captureDCOffset = 0.01 }
        #expect(offset.echo == plain.echo && offset.near == plain.near && offset.noise == plain.noise)
        #expect(zip(offset.mic, plain.mic).allSatisfy { $0 == $1 + 0.01 })
    }

    @Test("Equal seeds repeat a scenario; different seeds do not")
    func seeds() throws {
        let a = try Self.make(seed: 4), b = try Self.make(seed: 4), c = try Self.make(seed: 5)
        #expect(a.mic == b.mic)
        #expect(a.mic != c.mic)
    }

    @Test("A shoebox scenario places the device in the room and moves the loudspeaker for a path change")
    func shoeboxGeometry() throws {
        let g = ScenarioGeometry.random(rt60: 0.3, seed: 3)
        #expect(g.room.contains(g.loudspeaker) && g.room.contains(g.microphone) && g.room.contains(g.movedLoudspeaker!))
        let d = g.loudspeaker.distance(to: g.microphone), moved = g.movedLoudspeaker!.distance(to: g.microphone)
        #expect((0.2...0.6).contains(d))
        #expect(abs(moved - d) >= 0.149)
    }

    @Test("Nonlinearity is reported, and a path change switches the response")
    func nonlinearityAndChange() throws {
        let s = try Self.make(seed: 2) { $0.nonlinearity = .mild; $0.pathChangeTime = 4.5 }
        #expect(s.distortionDB != nil)
        #expect(s.changedImpulseResponse != nil && s.changedImpulseResponse! != s.impulseResponse)
        #expect(s.pathChangeSample == 72000)
    }
}
