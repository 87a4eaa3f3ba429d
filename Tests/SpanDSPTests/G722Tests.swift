import SpanDSP
import Testing
import TestSupport
import WAV

@Suite("G.722")
struct G722Tests {
    static let talkers = [Fixtures.englishFemale, Fixtures.frenchFemale, Fixtures.englishMale]

    @Test("Speech survives a round trip at 64 kb/s: aligned for the codec delay, SNR >= 15 dB and correlation >= 0.95",
          arguments: talkers)
    func speechRoundTrip(_ name: String) throws {
        let audio = try Fixtures.speech(name)
        try #require(audio.sampleRate == G722Encoder.sampleRate && audio.channels == 1)
        let speech = Array(audio.int16Samples.prefix(audio.int16Samples.count / 320 * 320))
        var encoder = try G722Encoder(), decoder = try G722Decoder()
        var decoded: [Int16] = []
        var frameSizes: Set<Int> = []
        // 20 ms frames, as an RTP stream carries them.
        for start in stride(from: 0, to: speech.count, by: 320) {
            let bytes = encoder.encode(Array(speech[start..<(start + 320)]))
            frameSizes.insert(bytes.count)
            decoded += decoder.decode(bytes)
        }
        #expect(frameSizes == [160])
        #expect(decoded.count == speech.count)
        let (lag, correlation) = Signals.bestLag(input: speech, output: decoded, lags: 0..<64)
        let snr = Signals.snr(reference: speech, test: decoded, lag: lag)
        print("G.722 \(name): delay \(lag) samples, correlation \(correlation), SNR \(snr) dB")
        #expect(snr >= 15, "SNR \(snr) dB at lag \(lag)")
        #expect(correlation >= 0.95, "correlation \(correlation) at lag \(lag)")
    }

    @Test("320 samples (20 ms) encode to 160 bytes, and 160 bytes decode to 320 samples")
    func frameSizes() throws {
        var encoder = try G722Encoder(), decoder = try G722Decoder()
        let tone = Signals.sine(frequency: 1000, sampleRate: 16000, count: 320, dBFS: -10)
        let bytes = encoder.encode(tone)
        #expect(bytes.count == 160)
        #expect(decoder.decode(bytes).count == 320)
        // The RTP timestamp advances by 160 for those 320 samples (RFC 3551's 8000 Hz clock).
        #expect(320 * G722Encoder.rtpClockRate / G722Encoder.sampleRate == 160)
        #expect(G722Decoder.rtpClockRate == 8000 && G722Decoder.sampleRate == 16000)
    }

    @Test("An encoder's output depends on its history: the codec is stateful")
    func stateful() throws {
        var encoder = try G722Encoder()
        let tone = Signals.sine(frequency: 440, sampleRate: 16000, count: 320, dBFS: -10)
        let first = encoder.encode(tone), second = encoder.encode(tone)
        #expect(first != second)
        var fresh = try G722Encoder()
        #expect(fresh.encode(tone) == first)
    }
}
