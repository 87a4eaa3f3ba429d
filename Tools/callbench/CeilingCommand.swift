import ToolSupport
import Platform
import ArgumentParser
import AudioAnalysis
import Foundation
import Opus
import WAV

/// `callbench ceiling`: what the codec itself gives under random loss, with no network and
/// no jitter buffer in the way.
struct CeilingCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ceiling",
        abstract: "Encode speech as the sender does, lose packets at random, decode as a perfect receiver would.",
        discussion: """
            The packets are the ones `voicecall rtp` sends (the same encoder settings). A seeded \
            Bernoulli draw loses --loss percent of them. The receiver has every other packet in time: \
            a lost packet is rebuilt from the next packet's in-band FEC when that packet arrived, and \
            concealed by Opus PLC otherwise (or always, with --no-fec). No jitter buffer can do better \
            with the same packets, so the PESQ of --output against --input is the ceiling for the loss \
            and the codec settings (Tools/interop/codec-ceiling scores it over many seeds). The output \
            is aligned with the input sample for sample (the encoder's lookahead removed).
            """
    )

    @Option(help: "Speech to encode (WAV, any rate; resampled to --rate).")
    var input: String
    @Option(help: "Where to write the decoded speech (16-bit mono WAV at --rate).")
    var output: String
    @Option(help: "Random packet loss, in percent.")
    var loss = 0.0
    @Option(help: "The seed of the loss draw.")
    var seed: UInt64 = 1
    @OptionGroup var codec: OpusCodecOptions
    @Flag(help: "Print one JSON object as the last line.")
    var json = false

    func validate() throws {
        guard (0...100).contains(loss) else { throw ValidationError("--loss must be in 0...100") }
    }

    struct Report: Encodable {
        var packets = 0
        var lost = 0
        var fecRecovered = 0
        var concealed = 0
        var bitrate = 0.0
    }

    func run() throws {
        let opus = codec.configuration
        let speech = try SpeechFiles.load(input, sampleRate: opus.sampleRate).map(WAVAudio.int16)
        let encoder = try opus.makeEncoder()
        let decoder = try opus.makeDecoder()
        let frames = opus.framesPerPacket
        var packets: [[UInt8]] = []
        var bytes = 0
        // Whole frames, the last one padded with silence, plus one frame to flush the lookahead.
        let total = (speech.count + encoder.lookahead + frames - 1) / frames
        for index in 0..<total {
            var pcm = [Int16](repeating: 0, count: frames)
            for i in 0..<frames where index * frames + i < speech.count { pcm[i] = speech[index * frames + i] }
            let packet = try encoder.encode(pcm)
            packets.append(packet)
            bytes += packet.count
        }

        var random = SeededRandom(seed: seed)
        let lost = packets.map { _ in random.unit() * 100 < loss }
        var report = Report(packets: packets.count,
                            bitrate: Double(bytes * 8) / (Double(packets.count * frames) / Double(opus.sampleRate)))
        var decoded: [Int16] = []
        decoded.reserveCapacity(packets.count * frames)
        for (index, packet) in packets.enumerated() {
            if !lost[index] {
                decoded += try decoder.decode(packet)
                continue
            }
            report.lost += 1
            // The next packet as a perfect receiver has it: there, unless it was lost too.
            let next = index + 1 < packets.count && !lost[index + 1] ? packets[index + 1] : nil
            if opus.inbandFEC, let next {
                decoded += try decoder.decodeFEC(from: next, frames: frames)
                report.fecRecovered += 1
            } else {
                decoded += try decoder.concealLoss(frames: frames)
                report.concealed += 1
            }
        }
        let aligned = Array(decoded.dropFirst(encoder.lookahead).prefix(speech.count))
        try WAV.write(WAVAudio(sampleRate: opus.sampleRate, int16Samples: aligned), to: output)
        print(String(format: "%d packets, %d lost: %d rebuilt from FEC, %d concealed; %.1f kb/s",
                     report.packets, report.lost, report.fecRecovered, report.concealed, report.bitrate / 1000))
        if json { printJSONLine(report, snakeCase: true) }
    }
}
