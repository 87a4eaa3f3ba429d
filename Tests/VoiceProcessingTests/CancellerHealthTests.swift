import DSP
import Platform
import AudioAnalysis
import Testing
@testable import VoiceProcessing

@Suite("Canceller monitor: divergence and collapse")
struct CancellerHealthTests {
    static let frame = 160  // 10 ms at 16 kHz

    /// Runs `seconds` of 10 ms frames: far-end noise as the reference, the capture at its level,
    /// the output `gainDB` relative to the capture. Returns the frames the monitor flagged.
    static func run(_ monitor: CancellerHealth, seconds: Double, gainDB: Double, seed: UInt64, nearDB: Double? = nil) -> [Int] {
        var random = SeededRandom(seed: seed)
        let gain = Math.pow(10, gainDB / 20)
        // Near-end speech as loud as `nearDB` relative to the echo (absent when nil).
        let near = nearDB.map { 0.5 * 3000 * Math.pow(10, $0 / 20) } ?? 0
        var flagged: [Int] = []
        var reference = [Int16](repeating: 0, count: frame), capture = reference, output = reference
        for k in 0..<Int(seconds * 100) {
            for i in 0..<frame {
                let x = random.gaussian() * 3000
                reference[i] = Int16(clamping: Int(x))
                capture[i] = Int16(clamping: Int(0.5 * x + random.gaussian() * 300 + random.gaussian() * near))
                output[i] = Int16(clamping: Int((Double(capture[i]) * gain).rounded()))
            }
            if monitor.update(capture: capture, reference: reference, output: output) == .diverged { flagged.append(k) }
        }
        return flagged
    }

    @Test("A converged canceller that stops removing echo for 0.4 s is flagged; for 0.35 s it is not")
    func collapseAfterConvergence() {
        let monitor = CancellerHealth(blockSize: Self.frame, sampleRate: 16000)
        #expect(Self.run(monitor, seconds: 2, gainDB: -25, seed: 1).isEmpty)  // converged
        #expect(Self.run(monitor, seconds: 0.35, gainDB: 0, seed: 2).isEmpty)  // a moment of double talk gone wrong
        #expect(Self.run(monitor, seconds: 0.3, gainDB: -25, seed: 3).isEmpty)
        let flagged = Self.run(monitor, seconds: 1, gainDB: 0, seed: 4)  // the echo path changed
        // After 0.4 to 0.6 s: two whole 0.2 s blocks (the unit resets the canceller and the
        // monitor at the first flag; here nothing does, so it flags again).
        #expect((39...59).contains(flagged.first ?? 0))
    }

    @Test("Blocks where the capture is well above the learned echo return (the near end talks) do not count")
    func nearEndBlocksDoNotCount() {
        let monitor = CancellerHealth(blockSize: Self.frame, sampleRate: 16000)
        #expect(Self.run(monitor, seconds: 2, gainDB: -25, seed: 1).isEmpty)
        // Double talk 10 dB over the echo, through a filter that takes nothing out.
        #expect(Self.run(monitor, seconds: 2, gainDB: 0, seed: 2, nearDB: 10).isEmpty)
        #expect(!Self.run(monitor, seconds: 1, gainDB: 0, seed: 3).isEmpty)
    }

    @Test("Before it has converged, and after a reset, removing nothing is not a collapse")
    func noCollapseBeforeConvergence() {
        let monitor = CancellerHealth(blockSize: Self.frame, sampleRate: 16000)
        #expect(Self.run(monitor, seconds: 3, gainDB: 0, seed: 1).isEmpty)  // a filter still learning
        #expect(Self.run(monitor, seconds: 2, gainDB: -25, seed: 2).isEmpty)
        monitor.reset()
        #expect(Self.run(monitor, seconds: 1, gainDB: 0, seed: 3).isEmpty)
    }

    @Test("An output louder than the input (+3 dB) for 0.1 s is divergence, at any time")
    func divergence() {
        let monitor = CancellerHealth(blockSize: Self.frame, sampleRate: 16000)
        #expect(Self.run(monitor, seconds: 0.09, gainDB: 6, seed: 1).isEmpty)
        #expect(Self.run(monitor, seconds: 0.05, gainDB: -25, seed: 2).isEmpty)
        #expect(Self.run(monitor, seconds: 0.1, gainDB: 6, seed: 3) == [9])
    }
}
