import Testing
import TestSupport
import WAV

@Suite("WAV reading and writing")
struct WAVRoundTripTests {
    @Test("16-bit and float files round-trip exactly, mono and stereo", arguments: [
        (WAVSampleFormat.int16, 1), (.int16, 2), (.float32, 1), (.float32, 2),
    ])
    func roundTrip(format: WAVSampleFormat, channels: Int) throws {
        // Values on the 16-bit grid, so the int16 path is lossless by construction.
        let samples = (0..<2000).map { Float(Int16(truncatingIfNeeded: $0 &* 7919)) / 32768 }
        let audio = WAVAudio(sampleRate: 44100, channels: channels, format: format, samples: samples)
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        try WAV.write(audio, to: dir.file("a.wav"))
        let back = try WAV.read(dir.file("a.wav"))
        #expect(back == audio)
        #expect(back.frameCount == 2000 / channels)
    }

    @Test("The shipped speech fixture reads as 16 kHz mono 16-bit")
    func readsFixture() throws {
        let speech = try Fixtures.speech(Fixtures.englishMale)
        #expect(speech.sampleRate == 16000)
        #expect(speech.channels == 1)
        #expect(speech.format == .int16)
        #expect(speech.duration > 9 && speech.duration < 11)
    }

    @Test("A file cut inside its data chunk is rejected with the declared and available sizes")
    func truncatedFile() throws {
        let bytes = try WAV.encode(WAVAudio(sampleRate: 16000, samples: [Float](repeating: 0.1, count: 1000)))
        #expect(throws: WAVError.truncated(what: "'data' chunk", declared: 2000, available: 1000)) {
            _ = try WAV.decode(Array(bytes.prefix(44 + 1000)))
        }
    }

    @Test("A non-PCM encoding is rejected, naming it")
    func nonPCMFile() throws {
        var bytes = try WAV.encode(WAVAudio(sampleRate: 8000, samples: [0, 0]))
        bytes[20] = 6  // format tag: A-law
        bytes[34] = 8  // 8 bits per sample
        let error = #expect(throws: WAVError.self) { _ = try WAV.decode(bytes) }
        #expect(error == .unsupportedEncoding(formatTag: 6, bitsPerSample: 8))
        #expect(error?.description.contains("A-law") == true)
    }

    @Test("24-bit PCM is rejected, naming the bit depth")
    func unsupportedBitDepth() throws {
        var bytes = try WAV.encode(WAVAudio(sampleRate: 8000, samples: [0, 0]))
        bytes[34] = 24
        #expect(throws: WAVError.unsupportedEncoding(formatTag: 1, bitsPerSample: 24)) { _ = try WAV.decode(bytes) }
    }

    @Test("Something that is not RIFF/WAVE is rejected, showing what was found")
    func notAWAVFile() {
        let error = #expect(throws: WAVError.self) { _ = try WAV.decode(Array("OggS and some more bytes".utf8)) }
        #expect(error?.description.contains("OggS") == true)
    }

    @Test("A missing file gives an I/O error with its path")
    func missingFile() {
        let error = #expect(throws: WAVError.self) { _ = try WAV.read("/nonexistent/x.wav") }
        #expect(error?.description.contains("/nonexistent/x.wav") == true)
    }

    @Test("Unknown chunks before the data are skipped")
    func skipsUnknownChunks() throws {
        let plain = try WAV.encode(WAVAudio(sampleRate: 16000, int16Samples: [1, -2, 3]))
        // Insert a LIST chunk (odd size, so the pad byte rule is exercised) between fmt and data.
        let list: [UInt8] = Array("LIST".utf8) + [3, 0, 0, 0] + [1, 2, 3, 0]
        let bytes = Array(plain[0..<36]) + list + Array(plain[36...])
        let audio = try WAV.decode(bytes)
        #expect(audio.int16Samples == [1, -2, 3])
    }

    @Test("Float samples beyond full scale clip when converted to 16 bits")
    func clipsToInt16() {
        #expect(WAVAudio.int16(1.5) == 32767)
        #expect(WAVAudio.int16(-1.5) == -32768)
        #expect(WAVAudio.int16(0.5) == 16384)
    }
}
