import Platform
import AudioAnalysis
import Opus
import Testing
import TestSupport
import WAV

@Suite("Opus encoder and decoder")
struct OpusCodecTests {
    /// Encodes and decodes `pcm` in 20 ms frames, returning the decoded signal.
    func roundTrip(_ pcm: [Int16], sampleRate: Int, bitrate: Int) throws -> (decoded: [Int16], lookahead: Int) {
        let encoder = try OpusEncoder(sampleRate: sampleRate, channels: 1, application: .voip)
        try encoder.setBitrate(bitrate)
        let decoder = try OpusDecoder(sampleRate: sampleRate, channels: 1)
        let frame = sampleRate / 50
        var decoded: [Int16] = []
        for start in stride(from: 0, through: pcm.count - frame, by: frame) {
            let packet = try encoder.encode(Array(pcm[start..<(start + frame)]))
            decoded += try decoder.decode(packet)
        }
        return (decoded, encoder.lookahead)
    }

    @Test("Speech at 24 kb/s decodes, aligned by the lookahead, with correlation >= 0.9")
    func speechRoundTrip() throws {
        let speech = try Fixtures.speech(Fixtures.englishFemale)
        let pcm = Array(speech.int16Samples.prefix(16000 * 10))
        let (decoded, lookahead) = try roundTrip(pcm, sampleRate: 16000, bitrate: 24000)
        let input = pcm.map { Float($0) }, output = decoded.map { Float($0) }
        // The decoder's output is the encoder's input delayed by exactly the lookahead.
        #expect(Alignment.find(reference: input, test: output, maxLag: 400).lag == lookahead)
        #expect(Alignment.correlation(input, output, lag: lookahead) >= 0.9)
    }

    @Test("Every sample rate opens an encoder and a decoder", arguments: OpusFormat.sampleRates)
    func allRates(rate: Int) throws {
        for channels in [1, 2] {
            let encoder = try OpusEncoder(sampleRate: rate, channels: channels, application: .audio)
            let decoder = try OpusDecoder(sampleRate: rate, channels: channels)
            let packet = try encoder.encode([Int16](repeating: 0, count: rate / 50 * channels))
            #expect(try decoder.decode(packet).count == rate / 50 * channels)
        }
    }

    @Test("Frame durations 2.5 to 60 ms are accepted", arguments: OpusFormat.frameDurationsTenthsMs)
    func frameDurations(tenthsMs: Int) throws {
        let encoder = try OpusEncoder(sampleRate: 48000, application: .restrictedLowDelay)
        let decoder = try OpusDecoder(sampleRate: 48000)
        let frames = OpusFormat.frames(tenthsMs: tenthsMs, sampleRate: 48000)
        let packet = try encoder.encode([Int16](repeating: 100, count: frames))
        #expect(try OpusPacket.frameCount(packet, sampleRate: 48000) == frames)
        #expect(try decoder.decode(packet).count == frames)
    }

    @Test("Every setter reads back")
    func settersReadBack() throws {
        let e = try OpusEncoder(sampleRate: 16000)
        try e.setBitrate(24000); do { let v = e.bitrate; #expect(v == 24000) }
        try e.setComplexity(3); do { let v = e.complexity; #expect(v == 3) }
        try e.setVBR(false); do { let v = e.isVBR; #expect(!v) }
        try e.setVBR(true); do { let v = e.isVBR; #expect(v) }
        try e.setVBRConstrained(true); do { let v = e.isVBRConstrained; #expect(v) }
        try e.setInbandFEC(true); do { let v = e.isInbandFECEnabled; #expect(v) }
        try e.setExpectedPacketLoss(percent: 15); do { let v = e.expectedPacketLossPercent; #expect(v == 15) }
        try e.setDTX(true); do { let v = e.isDTXEnabled; #expect(v) }
        try e.setSignal(.voice); do { let v = e.signal; #expect(v == .voice) }
        try e.setMaxBandwidth(.wideband); do { let v = e.maxBandwidth; #expect(v == .wideband) }
        do { let v = e.lookahead; #expect(v > 0) }
        let d = try OpusDecoder(sampleRate: 16000)
        try d.setGain(256); do { let v = d.gain; #expect(v == 256) }
    }

    @Test("Out-of-range settings are rejected with bad-argument errors")
    func badSettings() throws {
        let e = try OpusEncoder(sampleRate: 16000)
        #expect(throws: OpusError.badArgument) { try e.setComplexity(11) }
        #expect(throws: OpusError.badArgument) { try e.setExpectedPacketLoss(percent: 101) }
        #expect(throws: OpusError.badArgument) { try e.setBitrate(Int.max) }
        do { let v = e.complexity; #expect(v != 11) }
    }

    @Test("Loss concealment and FEC recovery give frames of the lost packet's length")
    func concealmentAndFEC() throws {
        let speech = try Fixtures.speech(Fixtures.englishMale).int16Samples
        let encoder = try OpusEncoder(sampleRate: 16000)
        try encoder.setBitrate(24000)
        try encoder.setInbandFEC(true)
        try encoder.setExpectedPacketLoss(percent: 20)
        let decoder = try OpusDecoder(sampleRate: 16000)
        var packets: [[UInt8]] = []
        for k in 0..<50 { packets.append(try encoder.encode(Array(speech[(k * 320)..<((k + 1) * 320)]))) }
        // The later packets carry LBRR data for their predecessors: SILK mode at this rate.
        #expect(OpusPacket.isSILKOrHybrid(packets[40]))
        for k in 0..<40 { _ = try decoder.decode(packets[k]) }
        let recovered = try decoder.decodeFEC(from: packets[41], frames: 320)  // packet 40 lost
        #expect(recovered.count == 320)
        #expect(recovered.contains { $0 != 0 })
        _ = try decoder.decode(packets[41])
        let concealed = try decoder.concealLoss(frames: 320)  // packet 42 lost, no FEC
        #expect(concealed.count == 320)
        #expect(decoder.lastPacketDuration == 320)
    }

    @Test("44.1 kHz is rejected with a typed error naming the rate")
    func rejects44k1() {
        let error = #expect(throws: OpusError.badArgument) { _ = try OpusEncoder(sampleRate: 44100) }
        #expect(error?.message.contains("44100") == true)
        #expect(throws: OpusError.badArgument) { _ = try OpusDecoder(sampleRate: 44100) }
        #expect(throws: OpusError.badArgument) { _ = try OpusDecoder(sampleRate: 16000, channels: 3) }
    }

    @Test("A 7 ms frame is rejected")
    func rejects7msFrame() throws {
        let encoder = try OpusEncoder(sampleRate: 16000)
        #expect(throws: OpusError.badArgument) { _ = try encoder.encode([Int16](repeating: 0, count: 112)) }
    }

    @Test("A garbage packet gives invalidPacket, never a crash")
    func rejectsGarbage() throws {
        let decoder = try OpusDecoder(sampleRate: 48000)
        // TOC code 3 with a frame count of 63: far more than 120 ms of audio.
        #expect(throws: OpusError.invalidPacket) { _ = try decoder.decode([0xFF, 0xFF, 0xFF, 0xFF]) }
        #expect(throws: OpusError.badArgument) { _ = try decoder.decode([]) }
        // Random bytes either decode (Opus is permissive) or fail with a typed error.
        var rng = SeededRandom(seed: 9)
        for _ in 0..<2000 {
            let packet = (0..<Int(rng.next() % 200 + 1)).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
            do { _ = try decoder.decode(packet) } catch let error { #expect(error.code < 0) }
        }
    }

    @Test("Concealing an impossible duration or into a small buffer is rejected")
    func rejectsBadConcealment() throws {
        let decoder = try OpusDecoder(sampleRate: 16000)
        #expect(throws: OpusError.badArgument) { _ = try decoder.concealLoss(frames: 100) }
        #expect(throws: OpusError.badArgument) { _ = try decoder.concealLoss(frames: 16000) }
        var small = [Int16](repeating: 0, count: 100)
        #expect(throws: OpusError.bufferTooSmall) {
            _ = try small.withUnsafeMutableBufferPointer { try decoder.concealLoss(frames: 320, into: $0) }
        }
    }
}
