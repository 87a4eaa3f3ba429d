import DSP
import Platform
import AudioAnalysis
import Testing

@Suite("Signal analysis")
struct AudioAnalysisTests {
    @Test("FFT convolution equals direct convolution")
    func convolutionMatchesDirect() {
        let x = Tone.noise(count: 300, rms: 0.3, seed: 1)
        let h = Tone.noise(count: 37, rms: 0.3, seed: 2)
        let fast = Convolution.filter(x, with: h)
        for n in [0, 1, 36, 37, 150, 299] {
            var direct: Float = 0
            for k in 0...min(n, h.count - 1) { direct += h[k] * x[n - k] }
            #expect(abs(fast[n] - direct) < 1e-4)
        }
    }

    @Test("Alignment finds an injected delay and full correlation", arguments: [-250, -3, 0, 1, 97, 480])
    func alignmentFindsLag(lag: Int) {
        let x = Tone.noise(count: 8000, rms: 0.2, seed: 3)
        let y: [Float] = lag >= 0 ? [Float](repeating: 0, count: lag) + x : Array(x.dropFirst(-lag))
        let found = Alignment.find(reference: x, test: y, maxLag: 600)
        #expect(found.lag == lag)
        #expect(found.correlation > 0.999)
    }

    @Test("Unrelated noise does not correlate")
    func unrelatedNoise() {
        let a = Tone.noise(count: 16000, rms: 0.2, seed: 4)
        let b = Tone.noise(count: 16000, rms: 0.2, seed: 5)
        #expect(abs(Alignment.correlation(a, b, lag: 0)) < 0.05)
    }

    @Test("ERLE of a residual 100 times weaker in amplitude is 40 dB")
    func erle() {
        let echo = Tone.noise(count: 1000, rms: 0.1, seed: 6)
        let residual = echo.map { $0 / 100 }
        #expect(abs(Levels.erle(echo: echo, residual: residual) - 40) < 1e-6)
    }

    @Test("ERLE over ranges sums only inside them, clips them to the signals and has nothing to say without echo")
    func erleOverRanges() {
        let echo = Tone.noise(count: 1000, rms: 0.1, seed: 6)
        var residual = echo.map { $0 / 100 }
        residual[500..<600] = ArraySlice(echo[500..<600])  // loud residual outside the ranges
        let ranges = [0..<500, 600..<1200]
        #expect(abs(Levels.erle(echo: echo, residual: residual, over: ranges)! - 40) < 1e-6)
        #expect(Levels.erle(echo: echo, residual: residual, over: [400..<700])! < 10)
        #expect(Levels.erle(echo: echo, residual: residual, over: []) == nil)
        #expect(Levels.erle(echo: echo, residual: residual, over: [1000..<1100]) == nil)
        #expect(Levels.erle(echo: echo, residual: [Float](repeating: 0, count: 1000), over: [0..<1000], residualFloor: 1e-12)!
                == Levels.decibels(power: Levels.energy(echo) / 1e-12))
    }

    @Test("Far-end single talk: echo without the talker nearby, after the echo frames skipped")
    func farEndSingleTalk() {
        let frame = 100
        let echo = Tone.noise(count: 2000, rms: 0.1, seed: 6)
        var near = [Float](repeating: 0, count: 2000)
        near[1050..<1150] = ArraySlice(Tone.noise(count: 100, rms: 0.1, seed: 7))
        let all = Levels.farEndSingleTalk(near: near, echo: echo, frame: frame, from: 0, to: 2000, nearBelow: -60, echoAbove: -40)
        #expect(all == stride(from: 0, to: 2000, by: frame).filter { $0 != 1000 && $0 != 1100 }.map { $0..<($0 + frame) })
        // A guard of one frame also drops the frames next to the talker; skipping drops the first echo frames.
        let guarded = Levels.farEndSingleTalk(near: near, echo: echo, frame: frame, from: frame, to: 1900, nearBelow: -60,
                                              echoAbove: -40, nearGuard: frame, skippingEchoFrames: 3)
        #expect(guarded == stride(from: 400, to: 1900, by: frame).filter { !(900...1200).contains($0) }.map { $0..<($0 + frame) })
        #expect(Levels.farEndSingleTalk(near: near, echo: echo, frame: frame, from: 0, to: 2000, nearBelow: -60, echoAbove: 0).isEmpty)
    }

    @Test("A decaying-noise impulse response starts after its delay and falls 60 dB over RT60")
    func impulseResponseDecay() {
        let ir = ImpulseResponse.decayingNoise(sampleRate: 16000, rt60: 0.3, delay: 0.005, length: 0.6, seed: 7)
        #expect(ir.prefix(80).allSatisfy { $0 == 0 })
        #expect(ir[80] == 1)
        let early = Levels.energy(ir[81..<(81 + 800)])
        let late = Levels.energy(ir[(80 + 4800)..<(80 + 5600)])  // 0.3 s later: 60 dB down in energy
        #expect(abs(Levels.decibels(power: early / late) - 60) < 3)
    }

    @Test("Dominant frequency of a sine is found within 5 Hz")
    func dominantFrequency() {
        let tone = Tone.sine(frequency: 1234, sampleRate: 16000, seconds: 0.5)
        #expect(abs(Tone.dominantFrequency(tone, sampleRate: 16000) - 1234) < 5)
    }
}

@Suite("Segmented correlation")
struct SegmentedCorrelationTests {
    @Test("A delay that changes mid-signal lowers the global correlation but not the segmented one")
    func followsChangingDelay() {
        let x = Tone.noise(count: 32000, rms: 0.2, seed: 8)
        // The first half arrives 100 samples late, the second 420 (a jitter buffer grew by 20 ms).
        let y = [Float](repeating: 0, count: 100) + Array(x[0..<16000]) + [Float](repeating: 0, count: 320) + Array(x[16000...])
        let global = Alignment.find(reference: x, test: y, maxLag: 1000)
        #expect(global.correlation < 0.8)
        let segmented = Alignment.segmentedCorrelation(reference: x, test: y, around: global.lag, window: 4000, search: 800)
        #expect(segmented > 0.99)
    }

    @Test("A delay step inside a window (a jitter buffer dropped a frame there) is scored on both lags")
    func delayStepInsideWindow() {
        let x = Tone.noise(count: 32000, rms: 0.2, seed: 9)
        // 100 samples late until sample 14000, in the middle of the window 12000..<16000, then 420.
        let y = [Float](repeating: 0, count: 100) + Array(x[0..<14000]) + [Float](repeating: 0, count: 320) + Array(x[14000...])
        let global = Alignment.find(reference: x, test: y, maxLag: 1000)
        let segmented = Alignment.segmentedCorrelation(reference: x, test: y, around: global.lag, window: 4000, search: 800)
        #expect(segmented > 0.99)
        // That window on one lag matches only in its first half.
        #expect(Alignment.correlation(Array(x[12000..<16000]), y, lag: 12100) < 0.6)
    }

    @Test("Each window searches only its documented range, +-search around the lag")
    func searchRange() {
        let x = Tone.noise(count: 16000, rms: 0.2, seed: 11)
        // The test runs 600 samples early (lag -600).
        let y = Array(x[600...])
        #expect(Alignment.segmentedCorrelation(reference: x, test: y, around: 0, window: 4000, search: 800) > 0.99)
        #expect(Alignment.segmentedCorrelation(reference: x, test: y, around: 0, window: 4000, search: 400) < 0.2)
        #expect(Alignment.segmentedCorrelation(reference: x, test: y, around: -600, window: 4000, search: 50) > 0.99)
    }

    @Test("With tracking, a delay that walks further than the search range, a step per window, is followed")
    func tracksWanderingDelay() {
        let x = Tone.noise(count: 32000, rms: 0.2, seed: 12)
        // Window k arrives 100 + 300 k samples late: 2200 by the last one, against a search of 400.
        var y = [Float](repeating: 0, count: 100)
        for start in stride(from: 0, to: 32000, by: 4000) {
            if start > 0 { y += [Float](repeating: 0, count: 300) }
            y += x[start..<(start + 4000)]
        }
        #expect(Alignment.segmentedCorrelation(reference: x, test: y, around: 100, window: 4000, search: 400, tracking: true) > 0.99)
        #expect(Alignment.segmentedCorrelation(reference: x, test: y, around: 100, window: 4000, search: 400) < 0.5)
    }

    @Test("Unrelated signals stay uncorrelated segment by segment, one lag or two")
    func unrelated() {
        let x = Tone.noise(count: 16000, rms: 0.2, seed: 9), y = Tone.noise(count: 16000, rms: 0.2, seed: 10)
        #expect(Alignment.segmentedCorrelation(reference: x, test: y, around: 0, window: 4000, search: 400) < 0.2)
    }

    @Test("A ring's block copy equals sample-by-sample reads, across the wrap and both ends")
    func ringCopyMatchesSamples() {
        let ring = InterpolatingRing(minimumCapacity: 64)
        let x = Tone.noise(count: 150, rms: 0.3, seed: 11)
        for v in x { ring.write(v) }  // 150 written into 64 slots: wrapped, the oldest 86 gone
        var out = [Float](repeating: .nan, count: 40)
        for first in [-50, -10, 60, 80, 86, 100, 120, 140, 200] {
            out.withUnsafeMutableBufferPointer { ring.copy(from: first, count: 40, into: $0.baseAddress!) }
            for i in 0..<40 { #expect(out[i] == ring.sample(at: first + i), "index \(first + i)") }
        }
    }
}
