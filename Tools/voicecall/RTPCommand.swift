import ToolSupport
import SDP
import MediaNegotiation
import Simulation
import Platform
import ArgumentParser
import Foundation
import Opus
import RTP
import WAV

/// `voicecall rtp`: a bare RTP endpoint (no signalling) for peers such as GStreamer
/// and ffmpeg, and the tools around it.
struct RTPCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rtp",
        abstract: "A bare RTP endpoint: Opus payload type 96 (opus/48000/2, RFC 7587), or G.722, PCMU or PCMA with --codec; no signalling.",
        subcommands: [RTPEndpointCommand.self],
        defaultSubcommand: RTPEndpointCommand.self
    )
}

/// Sends a WAV file over RTP in real time and records what it receives.
struct RTPEndpointCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "endpoint",
        abstract: "Send a WAV file as RTP (paced) and record what arrives through the jitter buffer.",
        discussion: """
            RTP is received on --local and RTCP on the next port (or the same one with --rtcp-mux); RTP goes \
            to --remote and RTCP to its next port. The first source to send two packets in sequence is locked; \
            anything else is dropped and counted. The received audio is written as 16-bit mono WAV at \
            --rate (16 kHz by default). --loss, --jitter-ms and friends put an \
            in-process, seeded impairment relay on the outgoing RTP; --tee sends the same impaired packets \
            to more receivers. The received audio is pulled from the jitter buffer every --period-ms, as a \
            sound card with that period would: periods that divide the packet let the buffer place its \
            delay more finely (see Docs/rtp.md).
            """
    )

    @Option(help: "Where to receive RTP, HOST:PORT ([::1]:PORT for IPv6).")
    var local: String
    @Option(help: "Where to send RTP, HOST:PORT.")
    var remote: String
    @Option(help: "Speech to send (WAV, any rate; resampled). Without it nothing is sent.")
    var input: String?
    @Option(help: "Where to write the received audio (16-bit mono WAV at --rate).")
    var output: String?
    @Option(help: "How long to run in seconds. Default: the input's length plus 1.5 s, or 10 s.")
    var seconds: Double?
    @Option(help: "Write an SDP file describing the stream sent to --remote (for ffmpeg -i FILE.sdp).")
    var sdpOut: String?
    @Flag(help: "Print one JSON object as the last line.")
    var json = false

    @Option(name: .customLong("codec"), help: "The codec sent and expected: opus, g722, pcmu or pcma (the Opus options apply to opus only; the others are at the codec's rate, resampled from and to --rate).")
    var codecName = "opus"
    @OptionGroup var codec: OpusCodecOptions
    @Option(help: "Playout period in ms: the audio pulled from the jitter buffer at a time (1 ... 60).")
    var periodMs = 5
    @Flag(help: "Jitter buffer: hold a packet more while packets are being lost, so FEC can rebuild them (+20 ms).")
    var fecDelay = false
    @Option(help: "Jitter buffer: never play out with less delay than this, in ms (a receiver that waits for every packet: the ceiling of what FEC and concealment can do).")
    var minDelayMs = 0.0
    @Flag(help: "RTP and RTCP on one port (RFC 5761).")
    var rtcpMux = false
    @Option(name: .customLong("payload-type"), help: "The RTP payload type (default: the codec's static one, 96 for Opus).")
    var payloadTypeOption: UInt8?

    @Option(help: "Impairment relay: random loss of outgoing RTP, in percent.")
    var loss = 0.0
    @Option(help: "Impairment relay: delay of outgoing RTP, in ms.")
    var delayMs = 0.0
    @Option(help: "Impairment relay: uniform jitter (+-) around the delay, in ms.")
    var jitterMs = 0.0
    @Option(help: "Impairment relay: packets held back 40 ms so later ones overtake them, in percent.")
    var reorderPercent = 0.0
    @Option(help: "Impairment relay: packets sent twice, in percent.")
    var duplicatePercent = 0.0
    @Option(help: "Impairment relay: the seed for its decisions.")
    var seed: UInt64 = 1
    @Option(help: "Also send the (impaired) RTP to this HOST:PORT; repeatable.")
    var tee: [String] = []

    var opus: OpusCallConfiguration { codec.configuration }
    var audioCodec: AudioCodec { AudioCodec(rawValue: codecName) ?? .opus }
    var payloadType: UInt8 { payloadTypeOption ?? audioCodec.staticPayloadType ?? 96 }
    var rate: Int { codec.rate }
    var frameMs: Int { codec.frameMs }

    func validate() throws {
        guard payloadType < 128 else { throw ValidationError("--payload-type must be below 128") }
        guard AudioCodec(rawValue: codecName) != nil else {
            throw ValidationError("--codec must be one of \(AudioCodec.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        guard sdpOut == nil || audioCodec == .opus else { throw ValidationError("--sdp-out describes Opus only") }
        guard (0...100).contains(loss), (0...100).contains(reorderPercent), (0...100).contains(duplicatePercent) else {
            throw ValidationError("percentages must be in 0...100")
        }
        guard delayMs >= 0, jitterMs >= 0, delayMs < 10_000, jitterMs < 10_000 else {
            throw ValidationError("--delay-ms and --jitter-ms must be in 0 ..< 10000")
        }
        guard (0...500).contains(minDelayMs) else { throw ValidationError("--min-delay-ms must be in 0 ... 500") }
        guard (1...60).contains(periodMs) else { throw ValidationError("--period-ms must be in 1 ... 60") }
        if let seconds { guard seconds > 0, seconds <= 3600 else { throw ValidationError("--seconds must be in (0, 3600]") } }
    }

    @OptionGroup var logging: LoggingOptions

    func run() throws {
        logging.bootstrap()
        let localAddress = try SocketAddress(parsing: local)
        let remoteAddress = try SocketAddress(parsing: remote)
        let teeAddresses = try tee.map { try SocketAddress(parsing: $0) }
        let speech: [Int16] = try input.map { try SpeechFiles.load($0, sampleRate: rate).map(WAVAudio.int16) } ?? []
        let duration = seconds ?? (input == nil ? 10 : Double(speech.count) / Double(rate) + 1.5)

        let opus = self.opus
        let relay = try makeRelay(listen: localAddress, targets: [remoteAddress] + teeAddresses)
        let session = try makeSession(local: localAddress, remote: remoteAddress, relay: relay)
        if let sdpOut {
            let sdp = AudioSDP.receiverDescription(destination: remoteAddress, payloadType: payloadType,
                                                  configuration: opus, rtcpMux: rtcpMux)
            try sdp.text.write(toFile: sdpOut, atomically: true, encoding: .utf8)
        }
        var sender = try session.makeSender()
        var jitter = try session.makeJitterBuffer(jitterConfiguration)

        relay?.start()
        session.start()
        let recording = RTPRecording(frames: Int(duration * Double(rate)) + rate, frameSize: rate * periodMs / 1000)
        // One clock for both directions, ticking at the largest step that both the playout
        // period and the frame are made of.
        let tickMs = Self.gcd(periodMs, frameMs)
        let ticksPerPeriod = periodMs / tickMs, ticksPerFrame = frameMs / tickMs
        let started = Pacer.run(seconds: duration, periodMs: tickMs) { tick, now in
            // The I/O cycle: packets in, a period of audio out, a frame of speech sent.
            if tick % ticksPerPeriod == 0 {
                jitter.receive(from: session.ring)
                recording.withNextFrame { jitter.pull(into: $0, now: now) }
            }
            let frame = opus.framesPerPacket
            if tick % ticksPerFrame == 0 {
                let start = tick / ticksPerFrame * frame
                if start + frame <= speech.count {
                    speech.withUnsafeBufferPointer { pcm in
                        _ = sender.send(UnsafeBufferPointer(rebasing: pcm[start..<(start + frame)]), now: now)
                    }
                }
            }
        }
        session.stop()
        relay?.stop()

        if let output {
            try WAV.write(WAVAudio(sampleRate: rate, int16Samples: recording.samples), to: output)
        }
        let report = RTPEndpointReport(session: session.statistics, jitter: session.jitterMonitor.snapshot,
                                       relay: relay?.statistics, seconds: Double(started) / 1e9, outputRate: rate,
                                       localRTP: session.localAddress.description,
                                       localRTCP: session.localRTCPAddress.description)
        report.print(json: json)
    }

    /// The impairment relay between our RTP socket and the remote (and any tee), when one is asked for.
    private func makeRelay(listen local: SocketAddress, targets: [SocketAddress]) throws -> ImpairmentRelay? {
        let profile = ImpairmentProfile(delayMs: delayMs, jitterMs: jitterMs, lossPercent: loss,
                                        reorderPercent: reorderPercent, duplicatePercent: duplicatePercent)
        guard profile != .none || targets.count > 1 else { return nil }
        return try ImpairmentRelay(listen: local.with(port: 0), targets: targets, forward: profile, seed: seed)
    }

    /// The RTP session, sending through `relay` when there is one; RTCP goes to the remote itself.
    private func makeSession(local: SocketAddress, remote: SocketAddress, relay: ImpairmentRelay?) throws -> RTPSession {
        var config = RTPSessionConfiguration(localAddress: local, remoteAddress: relay?.listenAddress ?? remote,
                                             rtcpMux: rtcpMux, payloadType: payloadType, opus: opus)
        config.codec = audioCodec
        config.remoteRTCPAddress = rtcpMux ? remote : remote.with(port: remote.port &+ 1)
        return try RTPSession(configuration: config)
    }

    private var jitterConfiguration: JitterBufferConfiguration {
        var configuration = JitterBufferConfiguration()
        configuration.useFEC = !codec.noFec
        configuration.fecDelay = fecDelay
        configuration.minimumDelayMs = minDelayMs
        configuration.initialDelayMs = max(configuration.initialDelayMs, minDelayMs)
        return configuration
    }

    private static func gcd(_ a: Int, _ b: Int) -> Int { b == 0 ? a : gcd(b, a % b) }
}

/// The received audio, preallocated so the I/O cycle never allocates.
final class RTPRecording {
    private var storage: [Int16]
    private var count = 0
    private let frameSize: Int

    init(frames: Int, frameSize: Int) {
        storage = [Int16](repeating: 0, count: frames + frameSize)
        self.frameSize = frameSize
    }

    /// Hands the next frame's space to `body` (or scratch space once full).
    func withNextFrame(_ body: (UnsafeMutableBufferPointer<Int16>) -> Void) {
        let start = min(count, storage.count - frameSize)
        storage.withUnsafeMutableBufferPointer { all in
            body(UnsafeMutableBufferPointer(rebasing: all[start..<(start + frameSize)]))
        }
        count = min(count + frameSize, storage.count - frameSize)
    }

    var samples: [Int16] { Array(storage[0..<count]) }
}
