import AudioAnalysis
import Testing
import TestSupport
@testable import VoiceProcessing

@Suite("Coherence between the far end and the microphone")
struct EchoCoherenceTests {
    static let block = 160, rate = 16000

    /// The far end through a small room: a direct path 3 ms late and a few reflections.
    static func echo(of far: [Float]) -> [Float] {
        let taps: [(delay: Int, gain: Float)] = [(48, 0.6), (90, -0.3), (170, 0.2), (260, 0.12), (400, -0.08)]
        var echo = [Float](repeating: 0, count: far.count)
        for (delay, gain) in taps {
            for i in delay..<far.count { echo[i] += gain * far[i - delay] }
        }
        return echo
    }

    /// The coherence test's decision per block, with the echo-only level learned over `learnBlocks`.
    static func decisions(far: [Float], capture: [Float], learnBlocks: Int = 0,
                          coherence: EchoCoherence = EchoCoherence(blockSize: block, sampleRate: rate)) -> [Bool] {
        let x = VPSignals.pcm(far), d = VPSignals.pcm(capture)
        return x.withUnsafeBufferPointer { x in
            d.withUnsafeBufferPointer { d in
                (0..<far.count / block).map { k in
                    coherence.update(capture: d.baseAddress! + k * block, reference: x.baseAddress! + k * block)
                    if k < learnBlocks { coherence.learnEchoOnly() }
                    return coherence.isNearEnd
                }
            }
        }
    }

    static func share(_ flags: ArraySlice<Bool>) -> Double { Double(flags.filter { $0 }.count) / Double(flags.count) }

    @Test("Echo alone through an unknown path stays echo; a talker as loud as the echo is found")
    func findsTheNearEnd() throws {
        let far = try VPSignals.speech("en_f_congrats_16k.wav", seconds: 8)
        let near = try VPSignals.speech("en_m_librivox_16k.wav", seconds: 8, rms: 0.06)
        let echo = Self.echo(of: far)
        // Echo only for 4 s (learned over the first 2), then the near end joins.
        let capture = (0..<far.count).map { i in echo[i] + (i >= 4 * Self.rate ? near[i - 4 * Self.rate] : 0) }
        let flags = Self.decisions(far: far, capture: capture, learnBlocks: 200)
        #expect(Self.share(flags[210..<400]) < 0.05)
        #expect(Self.share(flags[420...]) > 0.5)
    }

    @Test("Says nothing before the echo-only level is learned, and forgets it on reset")
    func learnsFirst() throws {
        let far = try VPSignals.speech("en_f_congrats_16k.wav", seconds: 3)
        let near = try VPSignals.speech("en_m_librivox_16k.wav", seconds: 3)
        let coherence = EchoCoherence(blockSize: Self.block, sampleRate: Self.rate)
        // The near end alone: far from the far end, but nothing learned yet.
        #expect(!Self.decisions(far: far, capture: near, coherence: coherence).contains(true))
        _ = Self.decisions(far: far, capture: Self.echo(of: far), learnBlocks: 100, coherence: coherence)
        #expect(Self.share(Self.decisions(far: far, capture: near, coherence: coherence)[20...]) > 0.9)
        coherence.reset()
        #expect(!Self.decisions(far: far, capture: near, coherence: coherence).contains(true))
    }

    @Test("After the release a talker must lower the coherence further than in a re-armed hold: an echo that moved from its reference lowers it too")
    func movedEchoIsNotATalkerAfterTheRelease() throws {
        let far = try VPSignals.speech("en_f_congrats_16k.wav", seconds: 8)
        let near = try VPSignals.speech("en_m_librivox_16k.wav", seconds: 8, rms: 0.06)
        let echo = Self.echo(of: far)
        // Echo alone for 4 s (learned over the first 2); then the echo 4 ms later than its
        // reference, or a talker as loud as the echo over it.
        let moved = (0..<far.count).map { i in i >= 4 * Self.rate ? echo[i - 64] : echo[i] }
        let talker = (0..<far.count).map { i in echo[i] + (i >= 4 * Self.rate ? near[i - 4 * Self.rate] : 0) }
        func shares(_ capture: [Float]) -> (hold: Double, residual: Double) {
            let coherence = EchoCoherence(blockSize: Self.block, sampleRate: Self.rate)
            let x = VPSignals.pcm(far), d = VPSignals.pcm(capture)
            var hold = 0, residual = 0, counted = 0
            for k in 0..<far.count / Self.block {
                let range = k * Self.block..<(k + 1) * Self.block
                d[range].withUnsafeBufferPointer { d in
                    x[range].withUnsafeBufferPointer { coherence.update(capture: d.baseAddress!, reference: $0.baseAddress!) }
                }
                if k < 200 { coherence.learnEchoOnly() }
                guard k >= 420 else { continue }
                counted += 1
                if coherence.isNearEnd { hold += 1 }
                if coherence.isNearEndOverResidual { residual += 1 }
            }
            return (Double(hold) / Double(counted), Double(residual) / Double(counted))
        }
        // Measured: the moved echo 0.99 and 0.45, the talker 0.98 and 0.71.
        let m = shares(moved), t = shares(talker)
        #expect(m.hold > 0.9 && m.residual < 0.6)
        #expect(t.hold > 0.9 && t.residual > 0.6)
    }

    /// The far end through the room after the loudspeaker moved: other delays, other reflections.
    static func movedEcho(of far: [Float]) -> [Float] {
        let taps: [(delay: Int, gain: Float)] = [(70, 0.5), (130, 0.35), (220, -0.25), (330, 0.15)]
        var echo = [Float](repeating: 0, count: far.count)
        for (delay, gain) in taps {
            for i in delay..<far.count { echo[i] += gain * far[i - delay] }
        }
        return echo
    }

    /// ``EchoCoherence/estimateCorrelation(output:)`` for each block the far end plays in.
    static func estimateCorrelations(far: [Float], capture: [Float], output: [Float]) -> [Double] {
        let x = VPSignals.pcm(far), d = VPSignals.pcm(capture), e = VPSignals.pcm(output)
        let microphone = EchoCoherence(blockSize: block, sampleRate: rate)
        let canceller = EchoCoherence(blockSize: block, sampleRate: rate)
        var values: [Double] = []
        for k in 1..<far.count / block {
            let range = k * block..<(k + 1) * block
            d[range].withUnsafeBufferPointer { d in x[range].withUnsafeBufferPointer { microphone.update(capture: d.baseAddress!, reference: $0.baseAddress!) } }
            e[range].withUnsafeBufferPointer { e in x[range].withUnsafeBufferPointer { canceller.update(capture: e.baseAddress!, reference: $0.baseAddress!) } }
            if Levels.energy(far[range]) / Double(block) > 1e-4 {
                values.append(microphone.estimateCorrelation(output: canceller))
            }
        }
        return values
    }

    static func share(_ values: [Double], _ test: (Double) -> Bool) -> Double {
        Double(values.filter(test).count) / Double(values.count)
    }

    @Test("The output opposes the canceller's estimate only when the estimate is an echo the microphone no longer has")
    func opposedEstimate() throws {
        let far = try VPSignals.speech("en_f_congrats_16k.wav", seconds: 6)
        let near = try VPSignals.speech("en_m_librivox_16k.wav", seconds: 6, rms: 0.06)
        let echo = Self.echo(of: far), moved = Self.movedEcho(of: far)
        // A converged canceller (a residual 30 dB down) with a talker over it: unrelated.
        let talker = Self.estimateCorrelations(far: far, capture: zip(echo, near).map { $0 + $1 },
                                               output: zip(echo, near).map { 0.03 * $0 + $1 })
        #expect(Self.share(talker) { $0 < VoiceProcessingTuning.Gate().opposedEstimate } < 0.02)
        // A canceller short of the echo: its output is more of its estimate.
        let short = Self.estimateCorrelations(far: far, capture: echo, output: echo.map { 0.5 * $0 })
        #expect(Self.share(short) { $0 > 0.5 } > 0.9)
        // The loudspeaker moved: the canceller subtracts the old echo from the new one.
        let opposed = Self.estimateCorrelations(far: far, capture: moved, output: zip(moved, echo).map { $0 - $1 })
        #expect(Self.share(opposed) { $0 < VoiceProcessingTuning.Gate().opposedEstimate } > 0.9)
    }

    @Test("Borrowing another's transform of the reference gives exactly what transforming it again does")
    func sharedReference() throws {
        let far = VPSignals.pcm(try VPSignals.speech("en_f_congrats_16k.wav", seconds: 2))
        let echo = VPSignals.pcm(Self.echo(of: try VPSignals.speech("en_f_congrats_16k.wav", seconds: 2)))
        let near = VPSignals.pcm(try VPSignals.speech("en_m_librivox_16k.wav", seconds: 2))
        let capture = EchoCoherence(blockSize: Self.block, sampleRate: Self.rate)
        let own = EchoCoherence(blockSize: Self.block, sampleRate: Self.rate)
        let borrowed = EchoCoherence(blockSize: Self.block, sampleRate: Self.rate)
        for k in 0..<far.count / Self.block {
            let range = k * Self.block..<(k + 1) * Self.block
            far[range].withUnsafeBufferPointer { x in
                echo[range].withUnsafeBufferPointer { capture.update(capture: $0.baseAddress!, reference: x.baseAddress!) }
                near[range].withUnsafeBufferPointer { own.update(capture: $0.baseAddress!, reference: x.baseAddress!) }
            }
            near[range].withUnsafeBufferPointer { borrowed.update(capture: $0.baseAddress!, referenceOf: capture) }
            #expect(borrowed.coherence == own.coherence)
            #expect(capture.estimateCorrelation(output: borrowed) == capture.estimateCorrelation(output: own))
        }
    }
}
