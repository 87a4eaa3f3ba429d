import AudioAnalysis
import Opus
import RTP
import Testing
import TestSupport
import WAV

/// G.711 and G.722 through the call's send path and jitter buffer, at the call's rates.
@Suite("Codecs beside Opus: send path and jitter buffer")
struct CodecPathTests {
    /// Speech at `rate`, from the 16 kHz fixture (resampled by repetition or decimation is not
    /// needed: the fixture is used at 16 kHz, and 48 kHz calls take it three times over).
    static func speech(rate: Int, seconds: Double) throws -> [Int16] {
        let source = try Fixtures.speech(Fixtures.englishFemale).int16Samples
        let count = Int(seconds * 16000)
        guard rate == 48000 else { return Array(source[..<count]) }
        // Linear interpolation up to 48 kHz: enough for a codec check band-limited to 4 or 8 kHz.
        var out = [Int16](repeating: 0, count: count * 3)
        for i in 0..<count {
            let a = Int(source[i]), b = Int(source[min(i + 1, count - 1)])
            for k in 0..<3 { out[3 * i + k] = Int16((a * (3 - k) + b * k) / 3) }
        }
        return out
    }

    /// Sends `speech` through a codec's encoder and jitter buffer, a packet per 20 ms arriving
    /// on time; returns what played, and the packets' timestamps and payload sizes.
    static func roundTrip(_ codec: AudioCodec, rate: Int, speech: [Int16], drop: Set<Int> = [])
        throws -> (played: [Int16], timestamps: [UInt32], sizes: [Int], statistics: JitterBufferStatistics) {
        let config = OpusCallConfiguration(sampleRate: rate)
        var encoder = try RTPAudioEncoder(configuration: config, codec: codec,
                                          packetizer: RTPPacketizer(payloadType: codec.staticPayloadType ?? 96, timestamp: 0))
        var buffer = try JitterBuffer(configuration: JitterBufferConfiguration(sampleRate: rate), codec: codec)
        let frame = config.framesPerPacket
        var datagram = [UInt8](repeating: 0, count: RTPAudioEncoder.maxDatagramSize)
        var out = [Int16](repeating: 0, count: frame)
        var played: [Int16] = [], timestamps: [UInt32] = [], sizes: [Int] = []
        for k in 0..<(speech.count / frame) {
            let now = UInt64(k) * 20_000_000 + 1_000_000_000
            let n = try speech[(k * frame)..<((k + 1) * frame)].withUnsafeBufferPointer { pcm in
                try datagram.withUnsafeMutableBytes { try encoder.encode(pcm, into: $0) }
            }
            let packet = try RTPPacket.parse(Array(datagram[0..<n]))
            timestamps.append(packet.header.timestamp)
            sizes.append(packet.payload.count)
            if !drop.contains(k) {
                let received = RTPReceivedPacket(sequenceNumber: Int64(packet.header.sequenceNumber),
                                                 timestamp: packet.header.timestamp, arrival: now)
                Array(datagram[packet.payload]).withUnsafeBytes { buffer.insert(received, payload: $0) }
            }
            out.withUnsafeMutableBufferPointer { buffer.pull(into: $0, now: now) }
            played += out
        }
        return (played, timestamps, sizes, buffer.statistics)
    }

    @Test("G.711 and G.722 packets: 160 bytes and 160 timestamp units per 20 ms, at any call rate",
          arguments: [AudioCodec.pcmu, .pcma, .g722], [16000, 48000])
    func packets(codec: AudioCodec, rate: Int) throws {
        let result = try Self.roundTrip(codec, rate: rate, speech: try Self.speech(rate: rate, seconds: 1))
        #expect(result.sizes.allSatisfy { $0 == 160 })
        #expect(zip(result.timestamps, result.timestamps.dropFirst()).allSatisfy { $1 &- $0 == 160 })
    }

    @Test("Speech comes out of the jitter buffer as it went into the encoder", arguments: [AudioCodec.pcmu, .pcma, .g722], [16000, 48000])
    func speechSurvives(codec: AudioCodec, rate: Int) throws {
        let speech = try Self.speech(rate: rate, seconds: 4)
        let result = try Self.roundTrip(codec, rate: rate, speech: speech)
        let reference = speech.map { Float($0) }, played = result.played.map { Float($0) }
        let alignment = Alignment.find(reference: reference, test: played, maxLag: rate / 5)
        // Window by window: the buffer may drop or repeat a quiet frame, which moves the lag.
        let correlation = Alignment.segmentedCorrelation(reference: reference, test: played, around: alignment.lag,
                                                         window: rate / 2, search: rate / 50, tracking: true)
        // G.711 keeps 4 kHz of the band, so a wideband source correlates less than through G.722's 7 kHz.
        let minimum = codec == .g722 ? 0.95 : 0.85
        #expect(correlation > minimum, "\(codec) at \(rate) Hz: \(correlation), lag \(alignment.lag)")
        #expect(alignment.lag > 0 && alignment.lag < rate / 10)
        #expect(result.statistics.undecodable == 0 && result.statistics.concealedMs == 0)
    }

    @Test("A lost G.711 or G.722 packet is concealed by spandsp and counted", arguments: [AudioCodec.pcmu, .g722])
    func lossIsConcealed(codec: AudioCodec) throws {
        let speech = try Self.speech(rate: 16000, seconds: 3)
        let result = try Self.roundTrip(codec, rate: 16000, speech: speech, drop: [60, 90, 91])
        #expect(result.statistics.lost == 3)
        #expect(result.statistics.concealedMs == 60)
        // Concealment repeats the pitch: the lost packets' time is not silence.
        let energy = result.played[(61 * 320)..<(62 * 320)].reduce(0.0) { $0 + Double($1) * Double($1) }
        #expect(energy > 0)
    }

    @Test("Encoding, buffering and decoding G.711 and G.722 do not allocate once running", arguments: [AudioCodec.pcma, .g722])
    func noAllocations(codec: AudioCodec) throws {
        #expect(AllocationCounter.isActive)
        let rate = 48000  // the resamplers run too
        let speech = try Self.speech(rate: rate, seconds: 2)
        var encoder = try RTPAudioEncoder(configuration: OpusCallConfiguration(sampleRate: rate), codec: codec,
                                          packetizer: RTPPacketizer(payloadType: 8, timestamp: 0))
        var buffer = try JitterBuffer(configuration: JitterBufferConfiguration(sampleRate: rate), codec: codec)
        let datagram = UnsafeMutableRawBufferPointer.allocate(byteCount: RTPAudioEncoder.maxDatagramSize, alignment: 16)
        let out = UnsafeMutableBufferPointer<Int16>.allocate(capacity: 960)
        defer { datagram.deallocate(); out.deallocate() }
        var allocations: UInt64 = 0
        for k in 0..<100 {
            let now = UInt64(k) * 20_000_000 + 1_000_000_000
            let before = AllocationCounter.thisThread
            let n = try speech.withUnsafeBufferPointer { pcm in
                try encoder.encode(UnsafeBufferPointer(rebasing: pcm[(k * 960)..<((k + 1) * 960)]), into: datagram)
            }
            let packet = RTPReceivedPacket(sequenceNumber: Int64(k), timestamp: UInt32(k * 160), arrival: now)
            // Every seventh packet lost: concealment runs too.
            if k % 7 != 3 { buffer.insert(packet, payload: UnsafeRawBufferPointer(rebasing: datagram[RTPHeader.fixedSize..<n])) }
            buffer.pull(into: out, now: now + 40_000_000)
            if k >= 10 { allocations += AllocationCounter.thisThread - before }
        }
        #expect(allocations == 0)
        #expect(buffer.statistics.packetsInserted == 86 && buffer.statistics.concealedMs >= 200)
    }

    @Test("A payload no codec packet can be is dropped and counted")
    func hostilePayloads() throws {
        var buffer = try JitterBuffer(codec: .pcmu)
        let empty = [UInt8]()
        let huge = [UInt8](repeating: 0xFF, count: 1400)  // 175 ms: longer than any packet
        for (k, payload) in [empty, huge].enumerated() {
            payload.withUnsafeBytes { buffer.insert(RTPReceivedPacket(sequenceNumber: Int64(k), timestamp: 0, arrival: 0), payload: $0) }
        }
        #expect(buffer.statistics.undecodable == 2 && buffer.statistics.packetsInserted == 0)
    }

    @Test("G.711 and G.722 refuse stereo with a typed error")
    func stereoRefused() {
        #expect(throws: CodecError.self) {
            _ = try RTPAudioEncoder(configuration: OpusCallConfiguration(channels: 2), codec: .pcma, packetizer: RTPPacketizer(payloadType: 8))
        }
        #expect(throws: CodecError.self) { _ = try JitterBuffer(configuration: JitterBufferConfiguration(channels: 2), codec: .g722) }
    }

    @Test("Codec names: SDP encodings, static payload types and clocks (RFC 3551)")
    func names() {
        #expect(AudioCodec(name: "PCMU") == .pcmu && AudioCodec(name: "g722") == .g722 && AudioCodec(name: "G729") == nil)
        #expect(AudioCodec.g722.rtpmap == "G722/8000" && AudioCodec.opus.rtpmap == "opus/48000/2")
        #expect(AudioCodec.allCases.map(\.staticPayloadType) == [nil, 9, 0, 8])
        #expect(AudioCodec.g722.rtpClockRate == 8000 && AudioCodec.g722.codedSampleRate == 16000)
    }
}
