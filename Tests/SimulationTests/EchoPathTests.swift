import DSP
import Platform
import AudioAnalysis
@testable import Simulation
import Testing
import TestSupport
import WAV

@Suite("Echo path")
struct EchoPathTests {
    /// A path with everything switched on: room, bulk delay, drift, distortion, a change.
    static func fullPath(sampleRate: Int = 16000) -> EchoPathConfiguration {
        let ir = ImpulseResponse.decayingNoise(sampleRate: sampleRate, rt60: 0.05, delay: 0.001, seed: 1)
        let ir2 = ImpulseResponse.decayingNoise(sampleRate: sampleRate, rt60: 0.05, delay: 0.002, seed: 2)
        var path = EchoPathConfiguration(sampleRate: sampleRate, impulseResponse: ir, gain: 0.5, bulkDelay: 0.0123,
                                         nonlinearity: .mild, driftPPM: 80, change: EchoPathChange(time: 0.7, impulseResponse: ir2))
        path.delayMoves = [EchoPathDelayMove(time: 0.3, change: 0.02), EchoPathDelayMove(time: 0.9, change: -0.01)]
        return path
    }

    @Test("Streaming in random blocks equals the offline render, bit for bit")
    func streamingEqualsOffline() throws {
        let render = Tone.noise(count: 24000, rms: 0.1, seed: 9)
        let offline = try EchoPath.render(Self.fullPath(), signal: render)
        let path = try EchoPath(Self.fullPath())
        var rng = SeededRandom(seed: 10)
        var streamed: [Float] = []
        var start = 0
        while start < render.count {
            let n = min(render.count - start, 1 + Int(rng.next() % 500))
            streamed += path.process(Array(render[start..<(start + n)]))
            start += n
        }
        #expect(streamed == offline)
        #expect(path.sampleCount == render.count)
    }

    @Test("Without drift or distortion the echo is the delayed convolution")
    func linearPathIsDelayedConvolution() throws {
        let ir = ImpulseResponse.decayingNoise(sampleRate: 16000, rt60: 0.05, delay: 0.001, seed: 3)
        let render = Tone.noise(count: 8000, rms: 0.1, seed: 4)
        let config = EchoPathConfiguration(sampleRate: 16000, impulseResponse: ir, gain: 0.25, bulkDelay: 0.01)
        let echo = try EchoPath.render(config, signal: render)
        let expected = [Float](repeating: 0, count: 160) + Convolution.filter(render, with: ir.map { $0 * 0.25 }).dropLast(160)
        let error = zip(echo, expected).map { abs($0 - $1) }.max()!
        #expect(error < 1e-5)
    }

    @Test("Clock drift slides the delay by ppm * elapsed samples", arguments: [100.0, -100.0])
    func driftSlidesDelay(ppm: Double) {
        let fs = 16000.0, f = 300.0
        let delay = DriftingDelay(delay: 200, ppm: ppm, maximumExcursion: 1000)
        let count = 32000
        let input = (0..<count).map { Float(Math.sin(2 * Double.pi * f * Double($0) / fs)) }
        var output = [Float](repeating: 0, count: count)
        delay.process(input, &output, count: count)
        // Output n holds the input at n / (1 + ppm 1e-6) - 200.
        var worst: Float = 0
        for n in stride(from: 1000, to: count, by: 7) {
            let position = Double(n) * 1e6 / (1e6 + ppm) - 200
            let expected = Float(Math.sin(2 * Double.pi * f * position / fs))
            worst = max(worst, abs(output[n] - expected))
        }
        #expect(worst < 2e-4, "largest error \(worst)")
        #expect(abs(delay.delay(at: count) - (200 + Double(count) * ppm / (1e6 + ppm))) < 1e-9)
        #expect(delay.slips == 0)
    }

    @Test("Drift beyond the excursion slips back instead of growing without bound")
    func driftSlips() {
        let delay = DriftingDelay(delay: 100, ppm: 1000, maximumExcursion: 20)
        var buffer = [Float](repeating: 0, count: 50000)
        delay.process(buffer, &buffer, count: buffer.count)
        #expect(delay.slips == 2)
        #expect(abs(delay.delay(at: 50000) - 100) <= 20)
    }

    @Test("Processing a block allocates nothing")
    func noAllocationPerBlock() throws {
        let path = try EchoPath(Self.fullPath())
        let render = UnsafeMutableBufferPointer<Float>.allocate(capacity: 320)
        let echo = UnsafeMutableBufferPointer<Float>.allocate(capacity: 320)
        defer { render.deallocate(); echo.deallocate() }
        render.initialize(repeating: 0.1)
        path.process(render: UnsafeBufferPointer(render), echo: echo)  // warm up
        let before = AllocationCounter.thisThread
        for _ in 0..<100 { path.process(render: UnsafeBufferPointer(render), echo: echo) }
        let after = AllocationCounter.thisThread
        #expect(AllocationCounter.isActive)
        #expect(after - before == 0)
    }

    @Test("The delay moves where it is told to, by what it is told")
    func delayMoves() throws {
        var config = EchoPathConfiguration(sampleRate: 16000, impulseResponse: [1], bulkDelay: 0.01)
        config.delayMoves = [EchoPathDelayMove(time: 0.5, change: 0.02), EchoPathDelayMove(time: 1.0, change: -0.015)]
        let render = Tone.noise(count: 24000, rms: 0.1, seed: 5)
        let echo = try EchoPath.render(config, signal: render)
        /// The lag (samples) at which `echo` over `range` best matches `render`.
        func lag(_ range: Range<Int>) -> Int {
            (0..<700).max { a, b in
                let ca = range.reduce(Float(0)) { $0 + echo[$1] * render[$1 - a] }
                let cb = range.reduce(Float(0)) { $0 + echo[$1] * render[$1 - b] }
                return ca < cb
            }!
        }
        #expect(lag(1000..<7000) == 160)
        #expect(lag(9000..<15000) == 480)
        #expect(lag(17000..<23000) == 240)
    }

    @Test("Bursts: the first move at 3 s, then every 1.5 to 4 s, the delay 0 to 60 ms above the start; the same for a seed")
    func bursts() {
        let moves = EchoPathDelayMove.bursts(duration: 60, seed: 4)
        #expect(moves == EchoPathDelayMove.bursts(duration: 60, seed: 4))
        #expect(moves != EchoPathDelayMove.bursts(duration: 60, seed: 5))
        #expect(moves.first?.time == 3)
        for (a, b) in zip(moves, moves.dropFirst()) { #expect((1.5...4.0).contains(b.time - a.time)) }
        var offset = 0.0
        for move in moves {
            #expect(move.change != 0)
            offset += move.change
            #expect((-1e-9...0.060 + 1e-9).contains(offset))
        }
    }

    @Test("Invalid paths are rejected")
    func rejectsInvalid() {
        #expect(throws: EchoPathError.self) {
            var moving = EchoPathConfiguration(sampleRate: 16000, impulseResponse: [1], bulkDelay: 0.005)
            moving.delayMoves = [EchoPathDelayMove(time: 1, change: -0.005)]
            _ = try EchoPath(moving)
        }
        #expect(throws: EchoPathError.self) { try EchoPath(EchoPathConfiguration(sampleRate: 16000, impulseResponse: [])) }
        #expect(throws: EchoPathError.self) {
            try EchoPath(EchoPathConfiguration(sampleRate: 16000, impulseResponse: [1], bulkDelay: -1))
        }
        #expect(throws: EchoPathError.self) {
            try EchoPath(EchoPathConfiguration(sampleRate: 16000, impulseResponse: [1], blockSize: 100))
        }
    }
}

@Suite("Loudspeaker nonlinearity")
struct NonlinearityTests {
    @Test("Presets give about -24 dB (mild) and -12 dB (hard) of distortion on speech at -20 dBFS")
    func presetsAreCalibrated() throws {
        let speech = Array(try Fixtures.speech(Fixtures.englishFemale).samples.prefix(16000 * 8))
        let x = SignalLevels.scaled(speech, toActiveLevel: -20, sampleRate: 16000)
        let mild = LoudspeakerNonlinearity.distortionDB(input: x, output: x.map { LoudspeakerNonlinearity.mild.apply($0) })
        let hard = LoudspeakerNonlinearity.distortionDB(input: x, output: x.map { LoudspeakerNonlinearity.hard.apply($0) })
        #expect((-26 ... -22).contains(mild), "mild \(mild) dB")
        #expect((-16 ... -10).contains(hard), "hard \(hard) dB")
        #expect(LoudspeakerNonlinearity.none.apply(0.7) == 0.7)
    }
}
