import ToolSupport
import ALSA
import ArgumentParser
import AudioAnalysis
import Foundation
import Opus
import SpeexDSP
import WAV

/// One end of a call's uplink, offline: a simulated room feeds an ALSA capture
/// device (the `file` plugin), the echo canceller and preprocessor clean it, Opus
/// codes it, and the decoded audio goes out through an ALSA playback device.
struct PipelineCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pipeline",
        abstract: "Run speech through a simulated echoing room, echo cancellation, noise suppression and Opus, offline.",
        discussion: """
            The near-end talker speaks while the far-end talker's voice plays from the loudspeaker and echoes \
            back into the microphone. The microphone signal is captured through an ALSA file-plugin PCM, \
            cleaned by SpeexDSP (echo canceller + preprocessor), encoded with Opus, decoded, and played \
            through an ALSA file-plugin PCM. Writes WAVs of each stage and prints a summary.
            """
    )

    @Option(help: "Near-end speech (WAV). Default: the shipped English fixture.")
    var near = SpeechFiles.defaultNear
    @Option(help: "Far-end speech played from the loudspeaker (WAV). Default: the shipped French fixture.")
    var far = SpeechFiles.defaultFar
    @Option(help: "Seconds to process.")
    var seconds = 20.0
    @Option(help: "Room reverberation time RT60 in seconds.")
    var rt60 = 0.3
    @Option(help: "Loudspeaker-to-microphone delay in milliseconds.")
    var delayMs = 5.0
    @Option(help: "Echo level relative to the near-end speech, in dB.")
    var echoDb = 0.0
    @Option(help: "Echo canceller tail in milliseconds.")
    var tailMs = 256
    @Option(help: "Opus bitrate in bits per second.")
    var bitrate = 24000
    @Option(help: "Seed for the room and the noise.")
    var seed: UInt64 = 1
    @Option(help: "Folder for the WAV files.")
    var out = "out/pipeline"
    @Flag(help: "Print one JSON object as the last line.")
    var json = false

    func validate() throws {
        guard seconds > 0.5 else { throw ValidationError("--seconds must be > 0.5") }
        guard rt60 > 0, rt60 <= 2 else { throw ValidationError("--rt60 must be in (0, 2] seconds") }
        guard delayMs >= 0, delayMs < Double(tailMs) else { throw ValidationError("--delay-ms must be in [0, --tail-ms)") }
        guard (20...1000).contains(tailMs) else { throw ValidationError("--tail-ms must be in 20...1000") }
        try OpusOptions.check(OpusCallConfiguration(bitrate: bitrate))
    }

    func run() throws {
        let rate = 16000, period = rate / 50
        try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
        let room = try makeRoom(rate: rate, period: period)
        let micPCM = room.mic.map(WAVAudio.int16)
        try Data(micPCM.withUnsafeBytes { Array($0) }).write(to: URL(fileURLWithPath: "\(out)/mic.raw"))
        defer { try? FileManager.default.removeItem(atPath: "\(out)/mic.raw") }

        // The devices: ALSA PCMs backed by files (no sound card needed).
        let parameters = PCMParameters(sampleRate: rate, channels: 1, periodFrames: period)
        let capConfig = FilePCMConfiguration(name: "callaudio_mic", inputFile: "\(out)/mic.raw")
        var capture = try PCM(name: capConfig.name, configuration: capConfig.text, stream: .capture)
        try capture.configure(parameters)
        let playConfig = FilePCMConfiguration(name: "callaudio_speaker", outputFile: "\(out)/received.raw")
        var playback = try PCM(name: playConfig.name, configuration: playConfig.text, stream: .playback)
        try playback.configure(parameters)

        var chain = try PipelineChain(rate: rate, tailMs: tailMs, bitrate: bitrate)
        let started = ContinuousClock.now
        let streams = try chain.run(room.far.map(WAVAudio.int16), periods: room.mic.count / period,
                                    capture: &capture, playback: &playback)
        try playback.drain()
        let elapsed = started.duration(to: .now)

        // What happened, measured.
        let uplink = streams.uplink.map { Float($0) / 32768 }, received = streams.received.map { Float($0) / 32768 }
        let report = Report.measure(near: room.near, echo: room.echo, mic: room.mic, uplink: uplink, received: received,
                                    lookahead: chain.encoder.lookahead, rate: rate, packetBytes: streams.packetBytes,
                                    elapsed: elapsed, xruns: capture.xrunCount + playback.xrunCount)
        for (name, signal) in [("near", room.near), ("far", room.far), ("mic", room.mic), ("uplink", uplink), ("received", received)] {
            try WAV.write(WAVAudio(sampleRate: rate, samples: signal), to: "\(out)/\(name).wav")
        }
        report.print(json: json, out: out)
    }

    /// The room: near-end speech, the far end's echo, and a little sensor noise, a whole number of periods long.
    private func makeRoom(rate: Int, period: Int) throws -> (near: [Float], far: [Float], echo: [Float], mic: [Float]) {
        let count = Int(seconds * Double(rate)) / period * period
        let nearSpeech = Levels.normalized(fit(try SpeechFiles.load(near, sampleRate: rate), count), rms: 0.05)
        let farSpeech = Levels.normalized(fit(try SpeechFiles.load(far, sampleRate: rate), count), rms: 0.05)
        let room = ImpulseResponse.decayingNoise(sampleRate: rate, rt60: rt60, delay: delayMs / 1000, seed: seed)
        let echo = Levels.normalized(Convolution.filter(farSpeech, with: room), rms: 0.05 * pow(10, echoDb / 20))
        let noise = Tone.noise(count: count, rms: 0.05 * pow(10, -40.0 / 20), seed: seed &+ 1)
        return (nearSpeech, farSpeech, echo, (0..<count).map { nearSpeech[$0] + echo[$0] + noise[$0] })
    }

    /// Loops or cuts `x` to exactly `count` samples.
    private func fit(_ x: [Float], _ count: Int) -> [Float] {
        guard !x.isEmpty else { return [Float](repeating: 0, count: count) }
        return (0..<count).map { x[$0 % x.count] }
    }
}

/// The uplink's processing: SpeexDSP's canceller and preprocessor on 10 ms blocks, then Opus
/// out and back, with every buffer allocated once, as the real-time path has them.
private struct PipelineChain: ~Copyable {
    let canceller: SpeexEchoCanceller
    var preprocessor: SpeexPreprocessor
    let encoder: OpusEncoder
    let decoder: OpusDecoder
    let period: Int, block: Int

    init(rate: Int, tailMs: Int, bitrate: Int) throws {
        (period, block) = (rate / 50, rate / 100)
        let canceller = try SpeexEchoCanceller(frameSize: block, filterLength: rate * tailMs / 1000, sampleRate: rate)
        var preprocessor = try SpeexPreprocessor(frameSize: block, sampleRate: rate)
        preprocessor.attach(canceller)
        try preprocessor.setDenoise(true)
        let encoder = try OpusEncoder(sampleRate: rate, channels: 1, application: .voip)
        try encoder.setBitrate(bitrate)
        try encoder.setInbandFEC(true)
        try encoder.setExpectedPacketLoss(percent: 5)
        let decoder = try OpusDecoder(sampleRate: rate, channels: 1)
        self.canceller = canceller
        self.preprocessor = preprocessor
        self.encoder = encoder
        self.decoder = decoder
    }

    /// Reads `periods` periods from `capture`, cleans each against `render` (what the loudspeaker
    /// played), codes it and writes the decoded audio to `playback`.
    mutating func run(_ render: [Int16], periods: Int, capture: inout PCM,
                      playback: inout PCM) throws -> (uplink: [Int16], received: [Int16], packetBytes: Int) {
        let captured = UnsafeMutableBufferPointer<Int16>.allocate(capacity: period)
        let cleaned = UnsafeMutableBufferPointer<Int16>.allocate(capacity: period)
        let decoded = UnsafeMutableBufferPointer<Int16>.allocate(capacity: period)
        let packet = UnsafeMutableRawBufferPointer.allocate(byteCount: OpusEncoder.maxPacketBytes, alignment: 1)
        defer { captured.deallocate(); cleaned.deallocate(); decoded.deallocate(); packet.deallocate() }
        var uplink: [Int16] = [], received: [Int16] = [], packetBytes = 0
        uplink.reserveCapacity(periods * period)
        received.reserveCapacity(periods * period)
        for start in stride(from: 0, to: periods * period, by: period) {
            _ = try capture.read(into: UnsafeMutableRawBufferPointer(captured), frames: period)
            for offset in stride(from: 0, to: period, by: block) {
                let blockRange = offset..<(offset + block)
                let output = UnsafeMutableBufferPointer(rebasing: cleaned[blockRange])
                render.withUnsafeBufferPointer { all in
                    canceller.cancel(capture: UnsafeBufferPointer(rebasing: captured[blockRange]),
                                     reference: UnsafeBufferPointer(rebasing: all[(start + offset)..<(start + offset + block)]),
                                     output: output)
                }
                preprocessor.process(output)
            }
            let n = try encoder.encode(UnsafeBufferPointer(cleaned), into: packet)
            packetBytes += n
            _ = try decoder.decode(UnsafeRawBufferPointer(rebasing: packet[0..<n]), into: decoded)
            _ = try playback.write(UnsafeRawBufferPointer(decoded), frames: period)
            uplink += cleaned
            received += decoded
        }
        return (uplink, received, packetBytes)
    }
}
