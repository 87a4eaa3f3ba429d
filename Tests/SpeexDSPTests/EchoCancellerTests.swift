import AudioAnalysis
import SpeexDSP
import Testing
import TestSupport
import WAV

@Suite("SpeexDSP echo canceller")
struct EchoCancellerTests {
    @Test("A 128 ms canceller removes >= 20 dB of a room echo after 3 s")
    func removesRoomEcho() throws {
        let rate = 16000, frame = 160
        let far = Levels.normalized(Array(try Fixtures.speech(Fixtures.englishFemale).samples.prefix(rate * 8)), rms: 0.1)
        // Speech through a decaying-noise room (RT60 0.1 s) after 5 ms: well inside the 128 ms tail.
        let room = ImpulseResponse.decayingNoise(sampleRate: rate, rt60: 0.1, delay: 0.005, gain: 0.5, seed: 11)
        let echo = Convolution.filter(far, with: room)
        let canceller = try SpeexEchoCanceller(frameSize: frame, filterLength: rate * 128 / 1000, sampleRate: rate)
        let farPCM = far.map(WAVAudio.int16), echoPCM = echo.map(WAVAudio.int16)
        var residual: [Int16] = []
        for start in stride(from: 0, through: far.count - frame, by: frame) {
            residual += canceller.cancel(capture: Array(echoPCM[start..<(start + frame)]),
                                         reference: Array(farPCM[start..<(start + frame)]))
        }
        let settled = (rate * 3)..<residual.count
        let erle = Levels.erle(echo: echoPCM[settled].map(Float.init), residual: residual[settled].map(Float.init))
        #expect(erle >= 20, "ERLE after 3 s was \(erle) dB")
        // MDF works in whole frames, so the 2048-sample tail is rounded up to 13 frames of 160.
        #expect(canceller.impulseResponseSize == 2080)
    }

    @Test("Impossible sizes are rejected with typed errors")
    func rejectsBadSizes() {
        #expect(throws: SpeexError.invalidArgument) { _ = try SpeexEchoCanceller(frameSize: 0, filterLength: 1024, sampleRate: 16000) }
        #expect(throws: SpeexError.invalidArgument) { _ = try SpeexEchoCanceller(frameSize: 160, filterLength: 80, sampleRate: 16000) }
        #expect(throws: SpeexError.invalidArgument) { _ = try SpeexEchoCanceller(frameSize: 160, filterLength: 2048, sampleRate: 0) }
    }
}

@Suite("SpeexDSP preprocessor")
struct PreprocessorTests {
    @Test("Noise suppression lowers stationary noise by >= 6 dB")
    func lowersStationaryNoise() throws {
        let rate = 16000, frame = 160
        var pre = try SpeexPreprocessor(frameSize: frame, sampleRate: rate)
        try pre.setDenoise(true)
        try pre.setNoiseSuppress(dB: -25)
        let noise = Tone.noise(count: rate * 4, rms: 0.03, seed: 12).map(WAVAudio.int16)
        var out: [Int16] = []
        for start in stride(from: 0, through: noise.count - frame, by: frame) {
            var f = Array(noise[start..<(start + frame)])
            pre.process(&f)
            out += f
        }
        let settled = (rate * 2)..<out.count  // after the noise estimate has converged
        let reduction = Levels.erle(echo: noise[settled].map(Float.init), residual: out[settled].map(Float.init))
        #expect(reduction >= 6, "noise reduced by \(reduction) dB")
        pre.detachEchoCanceller()
    }

    @Test("Every setter reads back")
    func settersReadBack() throws {
        var pre = try SpeexPreprocessor(frameSize: 160, sampleRate: 16000)
        try pre.setDenoise(false); do { let v = pre.isDenoiseEnabled; #expect(!v) }
        try pre.setNoiseSuppress(dB: -20); do { let v = pre.noiseSuppressDB; #expect(v == -20) }
        try pre.setAGC(true); do { let v = pre.isAGCEnabled; #expect(v) }
        try pre.setAGCTarget(12000); do { let v = pre.agcTarget; #expect(v == 12000) }
        try pre.setAGCMaxGain(dB: 20); do { let v = pre.agcMaxGainDB; #expect(v == 20) }
        try pre.setVAD(true); do { let v = pre.isVADEnabled; #expect(v) }
        try pre.setSpeechProbabilityStart(60); do { let v = pre.speechProbabilityStart; #expect(v == 60) }
        try pre.setSpeechProbabilityContinue(40); do { let v = pre.speechProbabilityContinue; #expect(v == 40) }
        try pre.setDereverb(true); do { let v = pre.isDereverbEnabled; #expect(v) }
        try pre.setEchoSuppress(dB: -50); do { let v = pre.echoSuppressDB; #expect(v == -50) }
        try pre.setEchoSuppressActive(dB: -20); do { let v = pre.echoSuppressActiveDB; #expect(v == -20) }
        // Residual echo suppression reads the canceller's state, which the preprocessor keeps alive.
        pre.attach(try SpeexEchoCanceller(frameSize: 160, filterLength: 1600, sampleRate: 16000))
        var frame = [Int16](repeating: 0, count: 160)
        pre.process(&frame)
    }

    @Test("Out-of-range settings are rejected")
    func rejectsBadSettings() throws {
        let pre = try SpeexPreprocessor(frameSize: 160, sampleRate: 16000)
        #expect(throws: SpeexError.invalidArgument) { try pre.setNoiseSuppress(dB: 5) }
        #expect(throws: SpeexError.invalidArgument) { try pre.setAGCTarget(0) }
        #expect(throws: SpeexError.invalidArgument) { try pre.setSpeechProbabilityStart(101) }
        do { let v = pre.noiseSuppressDB; #expect(v < 0) }
    }
}

@Suite("SpeexDSP resampler")
struct ResamplerTests {
    @Test("A 1 kHz tone at 48 kHz becomes a 1 kHz tone at 16 kHz")
    func downsamplesTone() throws {
        let resampler = try SpeexResampler(inputRate: 48000, outputRate: 16000, quality: 5)
        let tone = Tone.sine(frequency: 1000, sampleRate: 48000, seconds: 1)
        let out = resampler.resampleAll(tone)
        #expect(abs(out.count - 16000) <= 1)
        #expect(abs(Tone.dominantFrequency(out, sampleRate: 16000) - 1000) < 2)
        // Same level: the low-pass filter leaves 1 kHz alone.
        #expect(abs(Levels.dBFS(out[1000..<15000]) - Levels.dBFS(tone[3000..<45000])) < 0.5)
    }

    @Test("Resampling a whole signal: unchanged at the same rate, the whole tone at another")
    func resamplesWholeSignals() throws {
        let tone = Tone.sine(frequency: 1000, sampleRate: 48000, seconds: 1)
        #expect(try SpeexResampler.resample(tone, from: 48000, to: 48000) == tone)
        let out = try SpeexResampler.resample(tone, from: 48000, to: 16000)
        #expect(abs(out.count - 16000) <= 1)
        #expect(abs(Tone.dominantFrequency(out, sampleRate: 16000) - 1000) < 2)
    }

    @Test("A fractional ratio is kept and can change while running")
    func fractionalRatio() throws {
        // 16 kHz corrected by +50 ppm: 16000.8 / 16000.
        let resampler = try SpeexResampler(numerator: 16_000_800, denominator: 16_000_000, inputRate: 16000, outputRate: 16000)
        #expect(resampler.ratio.numerator * 16_000_000 == resampler.ratio.denominator * 16_000_800)
        let out = resampler.resampleAll(Tone.sine(frequency: 500, sampleRate: 16000, seconds: 10))
        #expect(abs(out.count - 159_992) <= 2)  // 50 ppm fewer samples
        try resampler.setRatio(numerator: 15_999_200, denominator: 16_000_000, inputRate: 16000, outputRate: 16000)
        #expect(resampler.ratio.numerator * 16_000_000 == resampler.ratio.denominator * 15_999_200)
    }

    @Test("Invalid qualities and rates are rejected")
    func rejectsBadArguments() {
        #expect(throws: SpeexError.invalidArgument) { _ = try SpeexResampler(inputRate: 48000, outputRate: 16000, quality: 11) }
        #expect(throws: SpeexError.invalidArgument) { _ = try SpeexResampler(inputRate: 0, outputRate: 16000) }
        #expect(throws: SpeexError.invalidArgument) { _ = try SpeexResampler(channels: 0, inputRate: 48000, outputRate: 16000) }
    }
}
