import AudioAnalysis
import DSP
import SpeexDSP
import Testing
import TestSupport
@testable import VoiceProcessing

@Suite("The post filter: SpeexDSP's preprocessor after the canceller, with comfort noise and the distortion suppressor")
struct PostFilterTests {
    static let block = 160, rate = 16000

    /// What a run gives: the canceller's output, the post filter's, and each block's speech decision.
    struct Run {
        var linear: [Int16] = []
        var output: [Int16] = []
        var speech: [Bool] = []
    }

    /// Runs SpeexDSP's canceller and a post filter over `far` and `mic` block by block, as the
    /// unit does (AGC off); `echoPath` is what the post filter is told from the first block on.
    static func run(far: [Int16], mic: [Int16], residualSuppression: Bool = true, echoPath: Bool = true) throws -> Run {
        let canceller = try SpeexMDFEchoCanceller(blockSize: block, tailLength: rate / 4, sampleRate: rate)
        let c = VoiceProcessingConfiguration(maximumFramesPerPeriod: block, suppressesResidualEcho: residualSuppression,
                                             agcEnabled: false)
        let filter = try PostFilter(configuration: c, block: block, canceller: canceller)
        filter.follow(echoPath: echoPath)
        var run = Run()
        var linear = [Int16](repeating: 0, count: block)
        for start in stride(from: 0, through: min(far.count, mic.count) - block, by: block) {
            let capture = Array(mic[start..<(start + block)]), reference = Array(far[start..<(start + block)])
            capture.withUnsafeBufferPointer { d in
                reference.withUnsafeBufferPointer { x in
                    linear.withUnsafeMutableBufferPointer { canceller.cancel(capture: d, reference: x, output: $0) }
                }
            }
            filter.analyse(capture: capture, linear: linear)
            var output = linear
            let energy = capture.reduce(0.0) { $0 + Double($1) * Double($1) }
            let speech = output.withUnsafeMutableBufferPointer {
                filter.process($0.baseAddress!, capture: capture, captureEnergy: energy, held: false)
            }
            run.linear += linear
            run.output += output
            run.speech.append(speech)
        }
        return run
    }

    static func levelDB(_ x: ArraySlice<Int16>) -> Double {
        10 * Math.log10(max(1e-9, x.reduce(0.0) { $0 + Double($1) * Double($1) } / Double(x.count)))
    }

    /// `seconds` of far-end speech and its echo through a decaying-noise room, with room noise 50 dB under it.
    static func echo(seconds: Double) throws -> (far: [Int16], mic: [Int16]) {
        let far = try VPSignals.speech(Fixtures.englishFemale, seconds: seconds)
        let room = ImpulseResponse.decayingNoise(sampleRate: rate, rt60: 0.15, delay: 0.002, seed: 3)
        let gain = Float((0.25 / Levels.energy(room)).squareRoot())
        let echo = Convolution.filter(far, with: room.map { $0 * gain })
        let noise = Tone.noise(count: far.count, rms: 0.0003, seed: 4)
        return (VPSignals.pcm(far), VPSignals.pcm(zip(echo, noise).map { $0 + $1 }))
    }

    @Test("With no far end, a near-end talker passes at his level and is told from the silence before him")
    func nearEndPasses() throws {
        let talker = try VPSignals.speech(Fixtures.englishMale, seconds: 4)
        let noise = Tone.noise(count: talker.count + 16000, rms: 0.0003, seed: 1)
        let mic = VPSignals.pcm(noise.indices.map { noise[$0] + ($0 >= 16000 ? talker[$0 - 16000] : 0) })
        let run = try Self.run(far: [Int16](repeating: 0, count: mic.count), mic: mic)
        let change = Self.levelDB(run.output[24000...]) - Self.levelDB(mic[24000...])
        #expect(abs(change) < 1, "the talker's level moved by \(change) dB")
        // Speech from the talker's first words on, none in the half second of noise before him.
        #expect(!run.speech[50..<100].contains(true))
        let share = Double(run.speech[100...].filter { $0 }.count) / Double(run.speech.count - 100)
        #expect(share > 0.5, "speech in \(share) of the talker's blocks")
    }

    @Test("The residual echo the canceller leaves comes out at least 8 dB lower (measured 11.3), only with residual echo suppression")
    func residualEchoSuppressed() throws {
        let (far, mic) = try Self.echo(seconds: 5)
        let suppressed = try Self.run(far: far, mic: mic)
        let last = 48000...
        let reduction = Self.levelDB(suppressed.linear[last]) - Self.levelDB(suppressed.output[last])
        #expect(reduction >= 8, "residual lowered by \(reduction) dB")
        let plain = try Self.run(far: far, mic: mic, residualSuppression: false)
        #expect(plain.linear == suppressed.linear)
        let plainReduction = Self.levelDB(plain.linear[last]) - Self.levelDB(plain.output[last])
        // Noise suppression alone barely touches it (measured 0.8 dB).
        #expect(plainReduction < 3, "without residual echo suppression: \(plainReduction) dB")
    }

    @Test("Told there is no echo path, it is the post filter without residual echo suppression, bit for bit")
    func detachedIsPlain() throws {
        let (far, mic) = try Self.echo(seconds: 3)
        let detached = try Self.run(far: far, mic: mic, echoPath: false)
        let plain = try Self.run(far: far, mic: mic, residualSuppression: false)
        #expect(detached.output == plain.output)
        #expect(detached.speech == plain.speech)
    }
}
