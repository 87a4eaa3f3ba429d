import Foundation
import SpeexDSP
import Testing
@testable import VoiceProcessing

@Suite("Echo path: absent or not converged yet")
struct EchoPathDetectorTests {
    static let frame = 160, rate = 16000

    /// One estimator hop (128 ms, about 13 blocks) with far-end activity as given.
    static func hop(_ d: EchoPathDetector, confidence: Double, erle: Double? = 0, farActive: Bool = true) {
        for _ in 0..<13 { d.endBlock(farActive: farActive) }
        d.hop(confidence: confidence, cancellerERLE: erle)
    }

    @Test("Hops without a peak over far-end speech make the path absent; chance peaks under 10 do not make it present")
    func absentAfterQuietHops() {
        let d = EchoPathDetector(blockSize: Self.frame, sampleRate: Self.rate)
        for _ in 0..<(VoiceProcessingTuning.EchoPath().absentHops - 1) { Self.hop(d, confidence: 4) }
        #expect(d.state == .unknown)
        Self.hop(d, confidence: 4)
        #expect(d.state == .absent)
        // The chance peaks of two independent talkers (up to 8.4 in aecbench's echo-free scenario).
        for c in [7.8, 8.4, 8.4, 6.0, 4.0] { Self.hop(d, confidence: c) }
        #expect(d.state == .absent)
    }

    @Test("A strong peak, or a canceller that removes 10 dB, means an echo; a hop in between restarts the count")
    func presentOnEvidence() {
        let d = EchoPathDetector(blockSize: Self.frame, sampleRate: Self.rate)
        Self.hop(d, confidence: 12)
        #expect(d.state == .present)
        for _ in 0..<(VoiceProcessingTuning.EchoPath().absentHops - 1) { Self.hop(d, confidence: 4) }
        Self.hop(d, confidence: 8)  // something may be there
        for _ in 0..<(VoiceProcessingTuning.EchoPath().absentHops - 1) { Self.hop(d, confidence: 4) }
        #expect(d.state == .present)
        // Once the canceller has removed an echo, a weak one under a loud talker must not be
        // dropped: 10 s of far-end activity without a peak first.
        Self.hop(d, confidence: 4, erle: 12)
        for _ in 0..<60 { Self.hop(d, confidence: 4) }
        #expect(d.state == .present)
        for _ in 0..<30 { Self.hop(d, confidence: 4) }
        #expect(d.state == .absent)
        Self.hop(d, confidence: 4, erle: 12)
        #expect(d.state == .present)
    }

    @Test("A peak the canceller never confirms (two voices lined up by chance) is dropped after the short rule")
    func aPeakAloneIsNotAnEchoSeen() {
        let d = EchoPathDetector(blockSize: Self.frame, sampleRate: Self.rate)
        for c in [10.1, 10.3, 9.7] { Self.hop(d, confidence: c, erle: 0.1) }
        #expect(d.state == .present)
        for _ in 0..<VoiceProcessingTuning.EchoPath().absentHops { Self.hop(d, confidence: 4, erle: 0.1) }
        #expect(d.state == .absent)
        // A chance peak later changes nothing; a peak as strong as an echo's makes it present again.
        Self.hop(d, confidence: 7.2)
        #expect(d.state == .absent)
        Self.hop(d, confidence: 12)
        #expect(d.state == .present)
        // As it was: with peakConfirmsEcho a peak alone earns the long wait.
        var tuning = VoiceProcessingTuning.EchoPath()
        tuning.peakConfirmsEcho = true
        let old = EchoPathDetector(blockSize: Self.frame, sampleRate: Self.rate, tuning: tuning)
        Self.hop(old, confidence: 10.1, erle: 0.1)
        for _ in 0..<20 { Self.hop(old, confidence: 4, erle: 0.1) }
        #expect(old.state == .present)
    }

    @Test("No verdict without far-end speech, nor while the canceller removes something")
    func needsFarEndAndAnIdleCanceller() {
        let silent = EchoPathDetector(blockSize: Self.frame, sampleRate: Self.rate)
        for _ in 0..<20 { Self.hop(silent, confidence: 3, farActive: false) }
        #expect(silent.state == .unknown)
        let working = EchoPathDetector(blockSize: Self.frame, sampleRate: Self.rate)
        for _ in 0..<20 { Self.hop(working, confidence: 3, erle: 6) }
        #expect(working.state == .unknown)
        working.reset()
        for _ in 0..<VoiceProcessingTuning.EchoPath().absentHops { Self.hop(working, confidence: 3) }
        #expect(working.state == .absent)
    }

    @Test("The DC notch is SpeexDSP's: the canceller's output with a silent reference, within rounding")
    func notchMatchesTheCanceller() throws {
        let canceller = try SpeexEchoCanceller(frameSize: Self.frame, filterLength: 4096, sampleRate: Self.rate)
        var notch = DCNotch(sampleRate: Self.rate)
        let silence = [Int16](repeating: 0, count: Self.frame)
        var worst = 0
        for k in 0..<100 {
            // Speech-like: a low tone, a higher one, and a DC offset.
            let mic = (0..<Self.frame).map { i -> Int16 in
                let t = Double(k * Self.frame + i) / Double(Self.rate)
                return Int16(3000 * sin(2 * .pi * 140 * t) + 1500 * sin(2 * .pi * 1900 * t) + 800)
            }
            var expected = [Int16](repeating: 0, count: Self.frame)
            var got = [Int16](repeating: 0, count: Self.frame)
            mic.withUnsafeBufferPointer { m in
                silence.withUnsafeBufferPointer { x in
                    expected.withUnsafeMutableBufferPointer { canceller.cancel(capture: m, reference: x, output: $0) }
                }
                got.withUnsafeMutableBufferPointer { notch.process(m.baseAddress!, into: $0.baseAddress!, count: Self.frame) }
            }
            for i in 0..<Self.frame { worst = max(worst, abs(Int(expected[i]) - Int(got[i]))) }
        }
        #expect(worst <= 2, "largest difference \(worst)")
    }
}
