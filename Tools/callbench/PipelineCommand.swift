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
        let rate = 16000, period = rate / 50, aecFrame = rate / 100
        try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)

        // The room: near-end speech, the far end's echo, and a little sensor noise.
        let count = Int(seconds * Double(rate)) / period * period
        let nearSpeech = Levels.normalized(fit(try SpeechFiles.load(near, sampleRate: rate), count), rms: 0.05)
        let farSpeech = Levels.normalized(fit(try SpeechFiles.load(far, sampleRate: rate), count), rms: 0.05)
        let room = ImpulseResponse.decayingNoise(sampleRate: rate, rt60: rt60, delay: delayMs / 1000, seed: seed)
        let echo = Levels.normalized(Convolution.filter(farSpeech, with: room), rms: 0.05 * pow(10, echoDb / 20))
        let noise = Tone.noise(count: count, rms: 0.05 * pow(10, -40.0 / 20), seed: seed &+ 1)
        let mic = (0..<count).map { nearSpeech[$0] + echo[$0] + noise[$0] }
        let micPCM = mic.map(WAVAudio.int16), farPCM = farSpeech.map(WAVAudio.int16)
        try Data(micPCM.withUnsafeBytes { Array($0) }).write(to: URL(fileURLWithPath: "\(out)/mic.raw"))

        // The devices: ALSA PCMs backed by files (no sound card needed).
        let capConfig = FilePCMConfiguration(name: "callaudio_mic", inputFile: "\(out)/mic.raw")
        var capture = try PCM(name: capConfig.name, configuration: capConfig.text, stream: .capture)
        try capture.configure(PCMParameters(sampleRate: rate, channels: 1, periodFrames: period))
        let playConfig = FilePCMConfiguration(name: "callaudio_speaker", outputFile: "\(out)/received.raw")
        var playback = try PCM(name: playConfig.name, configuration: playConfig.text, stream: .playback)
        try playback.configure(PCMParameters(sampleRate: rate, channels: 1, periodFrames: period))

        // The voice processing and the codec.
        let canceller = try SpeexEchoCanceller(frameSize: aecFrame, filterLength: rate * tailMs / 1000, sampleRate: rate)
        var preprocessor = try SpeexPreprocessor(frameSize: aecFrame, sampleRate: rate)
        preprocessor.attach(canceller)
        try preprocessor.setDenoise(true)
        let encoder = try OpusEncoder(sampleRate: rate, channels: 1, application: .voip)
        try encoder.setBitrate(bitrate)
        try encoder.setInbandFEC(true)
        try encoder.setExpectedPacketLoss(percent: 5)
        let decoder = try OpusDecoder(sampleRate: rate, channels: 1)

        // Buffers allocated once, as the real-time path will have them.
        let captured = UnsafeMutableBufferPointer<Int16>.allocate(capacity: period)
        let cleaned = UnsafeMutableBufferPointer<Int16>.allocate(capacity: period)
        let decoded = UnsafeMutableBufferPointer<Int16>.allocate(capacity: period)
        let packet = UnsafeMutableRawBufferPointer.allocate(byteCount: OpusEncoder.maxPacketBytes, alignment: 1)
        defer { captured.deallocate(); cleaned.deallocate(); decoded.deallocate(); packet.deallocate() }
        var uplink: [Int16] = [], received: [Int16] = []
        uplink.reserveCapacity(count)
        received.reserveCapacity(count)
        var packetBytes = 0
        let started = ContinuousClock.now
        for start in stride(from: 0, to: count, by: period) {
            _ = try capture.read(into: UnsafeMutableRawBufferPointer(captured), frames: period)
            for sub in stride(from: 0, to: period, by: aecFrame) {
                let frame = sub..<(sub + aecFrame)
                let reference = (start + sub)..<(start + sub + aecFrame)
                let output = UnsafeMutableBufferPointer(rebasing: cleaned[frame])
                farPCM.withUnsafeBufferPointer { farAll in
                    canceller.cancel(capture: UnsafeBufferPointer(rebasing: captured[frame]),
                                     reference: UnsafeBufferPointer(rebasing: farAll[reference]), output: output)
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
        try playback.drain()
        let elapsed = started.duration(to: .now)

        // What happened, measured.
        let report = Report.measure(near: nearSpeech, echo: echo, mic: mic, uplink: uplink.map { Float($0) / 32768 },
                                    received: received.map { Float($0) / 32768 }, lookahead: encoder.lookahead,
                                    rate: rate, packetBytes: packetBytes, elapsed: elapsed,
                                    xruns: capture.xrunCount + playback.xrunCount)
        for (name, signal) in [("near", nearSpeech), ("far", farSpeech), ("mic", mic),
                               ("uplink", uplink.map { Float($0) / 32768 }), ("received", received.map { Float($0) / 32768 })] {
            try WAV.write(WAVAudio(sampleRate: rate, samples: signal), to: "\(out)/\(name).wav")
        }
        try? FileManager.default.removeItem(atPath: "\(out)/mic.raw")
        report.print(json: json, out: out)
    }

    /// Loops or cuts `x` to exactly `count` samples.
    private func fit(_ x: [Float], _ count: Int) -> [Float] {
        guard !x.isEmpty else { return [Float](repeating: 0, count: count) }
        return (0..<count).map { x[$0 % x.count] }
    }
}
