import ToolSupport
import ArgumentParser
import Foundation
import Opus
import Platform
import RTP
import SpanDSP
import SpeexDSP
import WAV

/// `callbench codec-path`: speech through one stage of a G.711 or G.722 call at a time, offline
/// and deterministic, to tell which stage costs how much against the codec's own ceiling.
struct CodecPathCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "codec-path",
        abstract: "Run speech through G.711 or G.722 as a call does, one stage at a time, offline.",
        discussion: """
            Stages (each includes the ones before it, so the PESQ of two stages' outputs against \
            the input tells the share of the later one):
              codec     spandsp through the SpanDSP wrapper alone, at the codec's rate (the input \
            resampled to it at SpeexDSP quality 10, not the call's resampler)
              send      the call's sender (RTPAudioEncoder: the call's resampler to the codec's \
            rate, encoding, RTP), its payloads decoded by the wrapper at the codec's rate
              call      the sender, then the receiver: a JitterBuffer fed every packet on time \
            (or --jitter-ms late at most), pulled in --pull-ms periods, its decoder and resampler
              resample  two resamplers alone (call rate to the codec's and back, --quality), no codec
            Writes --output (16-bit mono WAV) and prints the jitter buffer's statistics for `call`.
            """
    )

    enum Stage: String, ExpressibleByArgument, CaseIterable { case codec, send, call, resample }

    @Option(help: "Speech to send (WAV, any rate; resampled to --rate at SpeexDSP quality 10).")
    var input: String
    @Option(help: "Where to write what comes out (16-bit mono WAV).")
    var output: String
    @Option(help: "g722, pcmu or pcma.")
    var codec: String = "g722"
    @Option(help: "The stage to stop after: \(Stage.allCases.map(\.rawValue).joined(separator: ", ")).")
    var stage: Stage = .call
    @Option(help: "The call's rate, in Hz (voicecall's --rate).")
    var rate = 16000
    @Option(help: "The receiver's period, in ms (the device's pull).")
    var pullMs = 20.0
    @Option(help: "Each packet arrives up to this many ms late, uniformly at random (seeded).")
    var jitterMs = 0.0
    @Option(help: "The seed of the arrival jitter.")
    var seed: UInt64 = 1
    @Option(help: "The jitter buffer's delay before any packet is measured, in ms.")
    var initialDelayMs = JitterBufferConfiguration().initialDelayMs
    @Option(help: "SpeexDSP quality of the resample stage's resamplers (the call's are RTP's).")
    var quality = 3
    @Flag(help: "The jitter buffer neither drops nor repeats quiet frames.")
    var noTimeStretch = false
    @Flag(help: "Print one JSON object as the last line.")
    var json = false

    func validate() throws {
        guard let codec = AudioCodec(name: codec), codec != .opus else { throw ValidationError("--codec must be g722, pcmu or pcma") }
        guard [8000, 16000, 48000].contains(rate) else { throw ValidationError("--rate must be 8000, 16000 or 48000") }
        guard pullMs > 0, jitterMs >= 0 else { throw ValidationError("--pull-ms must be > 0, --jitter-ms >= 0") }
    }

    func run() throws {
        let codec = AudioCodec(name: self.codec)!
        let codedRate = codec.codedSampleRate!
        switch stage {
        case .codec:
            let speech = try SpeechFiles.load(input, sampleRate: codedRate).map(WAVAudio.int16)
            try write(Self.codecAlone(codec, speech), rate: codedRate)
        case .resample:
            let speech = try SpeechFiles.load(input, sampleRate: rate).map(WAVAudio.int16)
            try write(try Self.resampleTwice(speech, rate: rate, codedRate: codedRate, quality: quality), rate: rate)
        case .send:
            let speech = try SpeechFiles.load(input, sampleRate: rate).map(WAVAudio.int16)
            let packets = try Self.send(codec, speech, rate: rate)
            try write(Self.decodeAlone(codec, packets.map(\.payload)), rate: codedRate)
        case .call:
            let speech = try SpeechFiles.load(input, sampleRate: rate).map(WAVAudio.int16)
            let packets = try Self.send(codec, speech, rate: rate)
            let (played, statistics) = try receive(codec, packets)
            try write(played, rate: rate)
            print(String(format: "%d packets; jitter buffer: dropped %.0f ms, repeated %.0f ms, concealed %.0f ms, delay %.1f ms",
                         packets.count, statistics.droppedMs, statistics.stretchedMs, statistics.concealedMs,
                         statistics.currentDelayMs))
            if json { printJSONLine(statistics) }
        }
    }

    private func write(_ samples: [Int16], rate: Int) throws {
        try WAV.write(WAVAudio(sampleRate: rate, int16Samples: samples), to: output)
    }

    /// The wrapper's encoder and decoder back to back, at the codec's rate.
    static func codecAlone(_ codec: AudioCodec, _ speech: [Int16]) throws -> [Int16] {
        let even = Array(speech.prefix(speech.count / 2 * 2))
        switch codec {
        case .pcmu: return G711.decode(G711.encode(speech, law: .mulaw), law: .mulaw)
        case .pcma: return G711.decode(G711.encode(speech, law: .alaw), law: .alaw)
        default:
            var encoder = try G722Encoder(), decoder = try G722Decoder()
            return decoder.decode(encoder.encode(even))
        }
    }

    /// The payloads decoded by the wrapper, at the codec's rate (no jitter buffer, no resampler).
    static func decodeAlone(_ codec: AudioCodec, _ payloads: [[UInt8]]) throws -> [Int16] {
        var decoder = try G722Decoder()
        return payloads.flatMap { payload -> [Int16] in
            switch codec {
            case .pcmu: G711.decode(payload, law: .mulaw)
            case .pcma: G711.decode(payload, law: .alaw)
            default: decoder.decode(payload)
            }
        }
    }

    /// The call's resamplers alone: SpeexDSP at the quality the codecs use, down and up, frame by frame.
    static func resampleTwice(_ speech: [Int16], rate: Int, codedRate: Int, quality: Int) throws -> [Int16] {
        guard rate != codedRate else { return speech }
        let down = try SpeexResampler(inputRate: rate, outputRate: codedRate, quality: quality)
        let up = try SpeexResampler(inputRate: codedRate, outputRate: rate, quality: quality)
        let frame = rate / 50, coded = codedRate / 50
        var out: [Int16] = []
        var a = [Int16](repeating: 0, count: coded), b = [Int16](repeating: 0, count: frame)
        for start in stride(from: 0, to: speech.count - frame + 1, by: frame) {
            let m = speech[start..<(start + frame)].withUnsafeBufferPointer { i in
                a.withUnsafeMutableBufferPointer { down.process(input: i, output: $0).produced }
            }
            let n = a[..<m].withUnsafeBufferPointer { i in
                b.withUnsafeMutableBufferPointer { up.process(input: i, output: $0).produced }
            }
            out += b[..<n]
        }
        return out
    }

    /// One packet as it leaves the sender.
    struct Packet {
        var sequence: Int64
        var timestamp: UInt32
        var payload: [UInt8]
    }

    /// The call's sender: 20 ms frames at the call's rate through `RTPAudioEncoder`.
    static func send(_ codec: AudioCodec, _ speech: [Int16], rate: Int) throws -> [Packet] {
        let config = OpusCallConfiguration(sampleRate: rate)
        var encoder = try RTPAudioEncoder(configuration: config, codec: codec,
                                          packetizer: RTPPacketizer(payloadType: codec.staticPayloadType!, sequenceNumber: 0, timestamp: 0))
        let frame = config.framesPerPacket
        var datagram = [UInt8](repeating: 0, count: RTPAudioEncoder.maxDatagramSize)
        var packets: [Packet] = []
        for start in stride(from: 0, to: speech.count - frame + 1, by: frame) {
            let n = try speech[start..<(start + frame)].withUnsafeBufferPointer { pcm in
                try datagram.withUnsafeMutableBytes { try encoder.encode(pcm, into: $0) }
            }
            let packet = try RTPPacket.parse(Array(datagram[0..<n]))
            packets.append(Packet(sequence: Int64(packet.header.sequenceNumber), timestamp: packet.header.timestamp,
                                  payload: Array(datagram[packet.payload])))
        }
        return packets
    }

    /// The call's receiver: each packet sent every 20 ms, arriving up to --jitter-ms late, the
    /// buffer pulled every --pull-ms; ends a second after the last packet.
    func receive(_ codec: AudioCodec, _ packets: [Packet]) throws -> (played: [Int16], statistics: JitterBufferStatistics) {
        let configuration = JitterBufferConfiguration(sampleRate: rate, initialDelayMs: initialDelayMs, timeStretch: !noTimeStretch)
        var buffer = try JitterBuffer(configuration: configuration, codec: codec)
        var random = SeededRandom(seed: seed)
        let start: UInt64 = 1_000_000_000, packetNs: UInt64 = 20_000_000
        let arrivals = packets.indices.map { start + UInt64($0) * packetNs + UInt64(random.unit() * jitterMs * 1e6) }
        let order = packets.indices.sorted { arrivals[$0] < arrivals[$1] }
        let pullFrames = Int((pullMs * Double(rate) / 1000).rounded())
        let pullNs = UInt64(pullFrames) * 1_000_000_000 / UInt64(rate)
        let end = start + UInt64(packets.count) * packetNs + 1_000_000_000
        var out = [Int16](repeating: 0, count: pullFrames), played: [Int16] = []
        var next = 0
        var now = start
        while now < end {
            // Every packet that has arrived by this pull's time, as receive(from:availableAt:) gives them.
            while next < order.count, arrivals[order[next]] <= now {
                let packet = packets[order[next]]
                let received = RTPReceivedPacket(sequenceNumber: packet.sequence, timestamp: packet.timestamp, arrival: now)
                packet.payload.withUnsafeBytes { buffer.insert(received, payload: $0) }
                next += 1
            }
            out.withUnsafeMutableBufferPointer { buffer.pull(into: $0, now: now) }
            played += out
            now += pullNs
        }
        return (played, buffer.statistics)
    }
}
