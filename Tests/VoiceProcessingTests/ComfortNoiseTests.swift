import Foundation
import Platform
import Testing
@testable import VoiceProcessing

/// Comfort noise puts the room's noise back where suppression took it, at the floor's level and
/// shape, and leaves an output that holds more than the floor alone.
@Suite("Comfort noise")
struct ComfortNoiseTests {
    static let rate = 16000
    static let block = 160

    /// Runs `seconds` of blocks: capture from `capture(block index)`, output from `output` (silence
    /// when nil: everything suppressed); returns the output after comfort noise, one array per block.
    static func run(seconds: Double, floorGain: Double = 1, emptied: Bool = false,
                    stage: ComfortNoise = ComfortNoise(blockSize: block, sampleRate: rate),
                    capture: (Int) -> [Int16], output: ((Int) -> [Int16])? = nil) -> [[Int16]] {
        var blocks: [[Int16]] = []
        for index in 0..<Int(seconds * Double(rate) / Double(block)) {
            let mic = capture(index)
            var out = output?(index) ?? [Int16](repeating: 0, count: block)
            mic.withUnsafeBufferPointer { m in
                out.withUnsafeMutableBufferPointer {
                    stage.process($0.baseAddress!, capture: m.baseAddress!, floorGain: floorGain, emptied: emptied)
                }
            }
            blocks.append(out)
        }
        return blocks
    }

    static func noise(_ rms: Double, _ random: inout SeededRandom) -> [Int16] {
        (0..<block).map { _ in Int16(clamping: Int((rms * random.gaussian()).rounded())) }
    }

    /// RMS level in dB (16-bit units) of blocks `range`.
    static func level(_ blocks: [[Int16]], _ range: Range<Int>) -> Double {
        var sum = 0.0, n = 0
        for b in blocks[range] { for x in b { sum += Double(x) * Double(x); n += 1 } }
        return 10 * log10(max(sum / Double(n), 1e-9))
    }

    @Test("A fully suppressed output gets the capture's noise back at the fill level under its floor, times the gain")
    func fillsToTheFloor() {
        var random = SeededRandom(seed: 1)
        let white = Self.run(seconds: 3) { _ in Self.noise(300, &random) }
        let expected = 20 * log10(300.0) + VoiceProcessingTuning.ComfortNoise().levelDB
        // The floor follows the smoothed power's dips, so it sits 1 to 2 dB under the mean.
        let measured = Self.level(white, 100..<300)
        #expect(measured < expected && measured > expected - 3, "level \(measured) dB, expected \(expected) dB")
        let quieter = Self.run(seconds: 3, floorGain: 0.1) { _ in Self.noise(300, &random) }
        #expect(abs(Self.level(quieter, 100..<300) - (measured - 10)) < 1.5)
    }

    @Test("A block the echo gate emptied whole is filled to the floor itself, 10 dB above the usual fill")
    func emptiedBlocksGetTheWholeFloor() {
        var random = SeededRandom(seed: 7)
        let usual = Self.level(Self.run(seconds: 3) { _ in Self.noise(300, &random) }, 100..<300)
        let emptied = Self.level(Self.run(seconds: 3, emptied: true) { _ in Self.noise(300, &random) }, 100..<300)
        let level = VoiceProcessingTuning.ComfortNoise().levelDB
        #expect(abs(emptied - usual + level) < 1, "emptied \(emptied) dB, usual \(usual) dB")
        // The floor sits 1 to 2 dB under the noise's mean power.
        #expect(emptied < 20 * log10(300.0) && emptied > 20 * log10(300.0) - 3)
    }

    @Test("The noise has the floor's spectrum: a low room hum gives a low fill")
    func followsTheShape() {
        var random = SeededRandom(seed: 2)
        var state = 0.0
        // One-pole low-pass noise, about 200 Hz corner: 30 dB less at 6 kHz.
        let hum = Self.run(seconds: 3) { _ in
            (0..<Self.block).map { _ in
                state = 0.92 * state + 0.08 * 3000 * random.gaussian()
                return Int16(clamping: Int(state.rounded()))
            }
        }
        let samples = hum[100..<300].flatMap { $0 }.map(Float.init)
        let low = bandLevel(samples, from: 100, to: 1000), high = bandLevel(samples, from: 4000, to: 7500)
        #expect(low - high > 15, "low \(low) dB, high \(high) dB")
    }

    @Test("An output that holds more than the floor in every band is left exactly as it was")
    func leavesSpeechAlone() {
        var random = SeededRandom(seed: 3)
        var loud = SeededRandom(seed: 4)
        var given: [[Int16]] = []
        let out = Self.run(seconds: 2, capture: { _ in Self.noise(100, &random) }, output: { _ in
            given.append(Self.noise(3000, &loud))
            return given.last!
        })
        #expect(out == given)
    }

    @Test("With no gain nothing is added; the floor follows quieter noise at once and louder slowly")
    func followsTheRoom() {
        var random = SeededRandom(seed: 5)
        #expect(Self.run(seconds: 1, floorGain: 0) { _ in Self.noise(300, &random) }.allSatisfy { $0.allSatisfy { $0 == 0 } })
        // 2 s at 1000, 2 s at 100, then 1000 again for 2 s.
        let steps = Self.run(seconds: 6) { index in Self.noise(index < 200 || index >= 400 ? 1000 : 100, &random) }
        // The floor is smoothed over about 100 ms, so it takes 0.45 s to fall 20 dB.
        let loud = Self.level(steps, 150..<200), quiet = Self.level(steps, 260..<400), back = Self.level(steps, 550..<600)
        #expect(abs(loud - quiet - 20) < 2, "the fill went down \(loud - quiet) dB")
        // A talker who starts is not taken for noise: after 2 s the floor rose about 1 dB, not 20.
        #expect(back - quiet < 3, "the fill rose \(back - quiet) dB in 2 s")
    }

    @Test("A reset learns the floor again")
    func resetStartsOver() {
        var random = SeededRandom(seed: 6)
        let stage = ComfortNoise(blockSize: Self.block, sampleRate: Self.rate)
        _ = Self.run(seconds: 1, stage: stage) { _ in Self.noise(100, &random) }
        stage.reset()
        let after = Self.run(seconds: 1, stage: stage) { _ in Self.noise(1000, &random) }
        // Without the reset the floor would still be near the quiet room's, 20 dB under.
        #expect(Self.level(after, 20..<100) > 20 * log10(1000.0) + VoiceProcessingTuning.ComfortNoise().levelDB - 4)
    }

    /// Level in dB of `samples` between two frequencies, from one long FFT-free DFT sweep.
    private func bandLevel(_ samples: [Float], from low: Double, to high: Double) -> Double {
        let n = 4096, count = samples.count / n
        var sum = 0.0
        for segment in 0..<count {
            let x = samples[(segment * n)..<((segment + 1) * n)]
            var k = Int(low / Double(Self.rate) * Double(n))
            while Double(k) * Double(Self.rate) / Double(n) < high {
                var re = 0.0, im = 0.0
                for (i, v) in x.enumerated() {
                    let w = 2 * Double.pi * Double(k * i) / Double(n)
                    re += Double(v) * cos(w); im -= Double(v) * sin(w)
                }
                sum += re * re + im * im
                k += 16
            }
        }
        return 10 * log10(max(sum, 1e-9))
    }
}
