import AudioAnalysis
import DSP
import Testing
import TestSupport
@testable import VoiceProcessing

/// A canceller that keeps every reference block it is given and outputs the capture times `gain`.
private final class RecordingCanceller: EchoCanceller {
    let blockSize: Int
    let sampleRate = 16000
    let gain: Double
    private(set) var references: [Int16] = []
    private(set) var resets = 0

    init(blockSize: Int, gain: Double) {
        self.blockSize = blockSize
        self.gain = gain
    }

    func cancel(capture: UnsafeBufferPointer<Int16>, reference: UnsafeBufferPointer<Int16>,
                output: UnsafeMutableBufferPointer<Int16>) {
        references.append(contentsOf: reference)
        for i in 0..<blockSize { output[i] = Int16(clamping: Int((Double(capture[i]) * gain).rounded())) }
    }

    func reset() { resets += 1 }
}

@Suite("The echo stage: the reference at the echo's delay, the canceller, its health, and the near end kept safe")
struct EchoStageTests {
    static let block = 160

    /// A stage over `canceller`, with a configuration changed by `change`, and its scratch.
    private static func stage(_ canceller: RecordingCanceller, gated: Bool = false,
                              _ change: (inout VoiceProcessingConfiguration) -> Void = { _ in }) -> (EchoStage, ProcessingScratch) {
        var c = VoiceProcessingConfiguration(maximumFramesPerPeriod: block)
        change(&c)
        let scratch = ProcessingScratch(capacity: 2 * block, block: block)
        return (EchoStage(configuration: c, block: block, canceller: canceller, gated: gated, scratch: scratch), scratch)
    }

    /// Runs render and capture block by block, the render first, as the unit does; the output.
    private static func run(_ stage: EchoStage, _ scratch: ProcessingScratch, render: [Int16], capture: [Int16]) -> [Int16] {
        var output: [Int16] = []
        var floats = [Float](repeating: 0, count: block)
        for start in stride(from: 0, through: min(render.count, capture.count) - block, by: block) {
            for i in 0..<block { floats[i] = Float(render[start + i]) * (1 / 32768) }
            floats.withUnsafeBufferPointer { stage.pushRender($0.baseAddress!, block) }
            for i in 0..<block { scratch.blockIn[i] = capture[start + i] }
            stage.cancel()
            stage.protectNearEnd()
            output.append(contentsOf: UnsafeBufferPointer(start: scratch.blockOut, count: block))
        }
        return output
    }

    /// `x` delayed by `samples` and scaled by `gain`.
    private static func delayed(_ x: [Int16], by samples: Int, gain: Double) -> [Int16] {
        x.indices.map { $0 >= samples ? Int16((Double(x[$0 - samples]) * gain).rounded()) : 0 }
    }

    private static func energy(_ x: ArraySlice<Int16>) -> Double { x.reduce(0) { $0 + Double($1) * Double($1) } }

    @Test("With a fixed delay the canceller's reference is the render that many samples back, exactly")
    func fixedDelayReference() {
        let canceller = RecordingCanceller(blockSize: Self.block, gain: 0.5)
        let (stage, scratch) = Self.stage(canceller) { $0.delay = .fixed(seconds: 0.01) }
        let render = VPSignals.pcm(Tone.noise(count: 16000, rms: 0.1, seed: 1))
        let capture = VPSignals.pcm(Tone.noise(count: 16000, rms: 0.1, seed: 2))
        let output = Self.run(stage, scratch, render: render, capture: capture)
        #expect(canceller.references == Self.delayed(render, by: 160, gain: 1))
        // Ungated, what the canceller gives is what the stage gives.
        #expect(output == capture.map { Int16((Double($0) * 0.5).rounded()) })
        #expect(stage.resets == 0 && stage.captureIndex == 16000)
    }

    @Test("Gated, an unconverged canceller's echo is held back at least 20 dB, and the stage says so")
    func startupHold() throws {
        let canceller = RecordingCanceller(blockSize: Self.block, gain: 1)  // a filter still at zero
        let (stage, scratch) = Self.stage(canceller, gated: true) { $0.delay = .fixed(seconds: 0.005) }
        let far = VPSignals.pcm(try VPSignals.speech(Fixtures.englishFemale, seconds: 2))
        let echo = Self.delayed(far, by: 80, gain: 0.5)
        let output = Self.run(stage, scratch, render: far, capture: echo)
        let reduction = 10 * Math.log10(Self.energy(echo[8000...]) / Self.energy(output[8000...]))
        #expect(reduction >= 20, "held back by \(reduction) dB")
        #expect(stage.isHoldingEcho)
    }

    @Test("A canceller whose output is louder than its input for 0.1 s of far-end activity is started over")
    func divergenceRestarts() {
        let canceller = RecordingCanceller(blockSize: Self.block, gain: 2)
        let (stage, scratch) = Self.stage(canceller) { $0.delay = .fixed(seconds: 0) }
        let render = VPSignals.pcm(Tone.noise(count: 1600, rms: 0.1, seed: 3))
        _ = Self.run(stage, scratch, render: render, capture: Self.delayed(render, by: 0, gain: 0.5))
        #expect(canceller.resets == 1 && stage.resets == 1)
    }

    @Test("An echo 100 ms late is found: the reference goes 4 ms before it and the canceller starts over once")
    func automaticDelay() throws {
        let canceller = RecordingCanceller(blockSize: Self.block, gain: 0.1)
        let (stage, scratch) = Self.stage(canceller)
        let far = VPSignals.pcm(try VPSignals.speech(Fixtures.englishFemale, seconds: 4))
        _ = Self.run(stage, scratch, render: far, capture: Self.delayed(far, by: 1600, gain: 0.5))
        let echo = try #require(stage.alignment.echoDelay)
        #expect(abs(echo - 1600) < 1, "echo found at \(echo) samples")
        #expect(abs(stage.alignment.delay(at: stage.captureIndex) - 1536) < 1)
        #expect(stage.echoPath.state == .present)
        #expect(stage.resets == 1 && canceller.resets == 1)
    }

    /// A gated stage run on `seconds` of far-end speech over a capture of noise alone; the
    /// canceller inverts the capture, so it removes nothing (0 dB) and its output is far from it.
    private static func echoFree(seconds: Double) throws -> (EchoStage, capture: [Int16], output: [Int16]) {
        let (stage, scratch) = Self.stage(RecordingCanceller(blockSize: block, gain: -1), gated: true)
        let far = VPSignals.pcm(try VPSignals.speech(Fixtures.englishFemale, seconds: seconds))
        let capture = VPSignals.pcm(Tone.noise(count: far.count, rms: 0.03, seed: 4))
        return (stage, capture, Self.run(stage, scratch, render: far, capture: capture))
    }

    @Test("With no echo path the capture goes on through the DC notch, not through the canceller")
    func noEchoPathPassesCapture() throws {
        let (stage, capture, output) = try Self.echoFree(seconds: 4)
        #expect(stage.echoPath.state == .absent)
        var notch = DCNotch(sampleRate: 16000)
        var notched = capture
        capture.withUnsafeBufferPointer { x in
            notched.withUnsafeMutableBufferPointer { notch.process(x.baseAddress!, into: $0.baseAddress!, count: x.count) }
        }
        #expect(output[48000...] == notched[48000..<output.count])
        #expect(!stage.isHoldingEcho)
    }

    @Test("An echo-free call is judged so by 1.3 s: a near end that talks early is held back for a moment, not a second")
    func noEchoPathSoon() throws {
        // The estimator's first hop comes about 0.9 s in; three hops without a peak (0.25 s of
        // far-end activity) decide, where six took past 1.5 s and cost early talkers 0.38 PESQ-WB on
        // average over 20 echo-free talker pairs (`Tools/scoring/sweep.py --only echofree --all-pairs`).
        let (stage, _, _) = try Self.echoFree(seconds: 1.3)
        #expect(stage.echoPath.state == .absent)
    }

    @Test("A DC offset on a microphone with no echo is not echo removed: the path is judged absent, nothing reset")
    func dcOffsetIsNotEcho() throws {
        // MDF notches DC out of its input; measured against the capture as it was, a converter's
        // offset 10 dB over a quiet room's noise read as 10 dB removed, an echo seen.
        var c = VoiceProcessingConfiguration(maximumFramesPerPeriod: Self.block)
        c.delay = .automatic
        let scratch = ProcessingScratch(capacity: 2 * Self.block, block: Self.block)
        let canceller = try SpeexMDFEchoCanceller(blockSize: Self.block, tailLength: 4096, sampleRate: 16000)
        let stage = EchoStage(configuration: c, block: Self.block, canceller: canceller, gated: true, scratch: scratch)
        let far = VPSignals.pcm(try VPSignals.speech(Fixtures.englishFemale, seconds: 4))
        let capture = VPSignals.pcm(Tone.noise(count: far.count, rms: 0.003, seed: 6).map { $0 + 0.01 })
        _ = Self.run(stage, scratch, render: far, capture: capture)
        #expect(stage.echoPath.state == .absent)
        #expect(stage.resets == 0)
        let erle = try #require(stage.health.erleDB)
        #expect(abs(erle) < 1, "ERLE \(erle) dB")
    }

    @Test("restart() starts over: history silent, canceller reset, counting from zero")
    func restart() {
        let canceller = RecordingCanceller(blockSize: Self.block, gain: 0.5)
        let (stage, scratch) = Self.stage(canceller) { $0.delay = .fixed(seconds: 0.01) }
        let render = VPSignals.pcm(Tone.noise(count: 3200, rms: 0.1, seed: 5))
        _ = Self.run(stage, scratch, render: render, capture: render)
        stage.restart()
        #expect(stage.captureIndex == 0 && canceller.resets == 1)
        let silence = [Int16](repeating: 0, count: 160)
        _ = Self.run(stage, scratch, render: silence, capture: silence)
        // The block's reference reaches 10 ms back, before the restart: silence now.
        #expect(canceller.references.suffix(160).allSatisfy { $0 == 0 })
    }
}
