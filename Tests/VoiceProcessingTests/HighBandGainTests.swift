import DSP
import Testing
import TestSupport
@testable import VoiceProcessing

@Suite("Above 4 kHz: the echo of fricatives a converged canceller leaves, lowered without touching the rest")
struct HighBandGainTests {
    static let rate = 16000, block = 160

    static func sine(_ hz: Double, seconds: Double = 0.5) -> [Int16] {
        (0..<Int(seconds * Double(rate))).map { Int16(8000 * Math.sin(2 * Double.pi * hz * Double($0) / Double(rate))) }
    }

    /// `x` through a fresh split whose gain moves to `gain` over the first block and stays.
    static func filtered(_ x: [Int16], gain: Float) -> [Int16] {
        var split = HighBandGain(sampleRate: rate)
        var y = x
        y.withUnsafeMutableBufferPointer { p in
            for k in stride(from: 0, to: p.count, by: block) {
                split.apply(gain, to: p.baseAddress! + k, count: min(block, p.count - k))
            }
        }
        return y
    }

    /// How much louder `x` is than `y` over their second half, dB.
    static func loss(_ x: [Int16], _ y: [Int16]) -> Double {
        let range = x.count / 2..<x.count
        return 10 * Math.log10(EchoGateTests.power(x, range) / max(EchoGateTests.power(y, range), 1e-20))
    }

    /// `x` with everything under `hz` taken out (one transform over the whole signal).
    static func highPassed(_ x: [Int16], above hz: Double) -> [Int16] {
        var size = 4
        while size < x.count { size <<= 1 }
        let fft = RealFFT(size: size)
        var input = [Float](repeating: 0, count: size), re = [Float](repeating: 0, count: size / 2 + 1)
        var im = re, output = input
        for i in x.indices { input[i] = Float(x[i]) }
        fft.forward(input, real: &re, imaginary: &im)
        for k in 0..<Int(hz * Double(size) / Double(rate)) { (re[k], im[k]) = (0, 0) }
        fft.inverse(real: re, imaginary: im, &output)
        return x.indices.map { Int16(clamping: Int(output[$0].rounded())) }
    }

    @Test("At a gain of 1 the signal passes bit for bit")
    func transparent() throws {
        let speech = VPSignals.pcm(try VPSignals.speech("fr_f_congrats_16k.wav", seconds: 1))
        #expect(Self.filtered(speech, gain: 1) == speech)
    }

    @Test("At 0 the high band goes and the low band stays; half way there is no notch at the crossover")
    func splitsAt4kHz() {
        #expect(abs(Self.loss(Self.sine(1000), Self.filtered(Self.sine(1000), gain: 0))) < 0.5)
        #expect(Self.loss(Self.sine(6000), Self.filtered(Self.sine(6000), gain: 0)) > 14)
        #expect(Self.loss(Self.sine(7000), Self.filtered(Self.sine(7000), gain: 0)) > 25)
        #expect(Self.loss(Self.sine(3000), Self.filtered(Self.sine(3000), gain: 0.5)) < 2.5)
        #expect(Self.loss(Self.sine(4000), Self.filtered(Self.sine(4000), gain: 0.5)) < 5)
    }

    @Test("Once released, the gate lowers echo left only above 4 kHz, and lets a talker over it through")
    func gateLowersTheHighBand() throws {
        let (farSpeech, near, echo, gate) = try EchoGateTests.converged()
        let split = 3 * Self.rate
        let far = Array(farSpeech[split...])
        // The canceller removes everything under 4.5 kHz and nothing above it.
        let leftover = Self.highPassed(Array(echo[split...]), above: 4500)
        let held = EchoGateTests.run(gate, far: far, capture: Array(echo[split...]), residual: leftover)
        #expect(Self.loss(leftover, held) >= 10, "the high band's echo was lowered by \(Self.loss(leftover, held)) dB")

        // A talker over it (under 4 kHz mostly): the capture's coherence says so, nothing is lowered.
        let (blocks, loss) = EchoGateTests.talker(near, over: leftover, of: echo, far: farSpeech, through: gate)
        #expect(blocks > 50)
        #expect(loss < 1, "the talker lost \(loss) dB")
    }
}
