import ToolSupport
import Simulation
import Platform
import ArgumentParser
import AudioAnalysis
import AudioIO
import Foundation
import RTP
import VoiceCall
import WAV

/// The README's first command: a two-endpoint call on loopback, end to end.
struct DemoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Two endpoints on loopback: SIP call setup, simulated echoing rooms, the whole pipeline.",
        discussion: """
            The caller dials the callee over SIP (UDP on 127.0.0.1); each side has a simulated room \
            (a talker, a loudspeaker whose sound echoes back into the microphone) paced in real time, \
            voice processing (echo cancellation, noise suppression, AGC), Opus over RTP with a jitter \
            buffer, FEC and loss concealment. After --seconds the caller hangs up and both audio \
            sessions deactivate. Prints a summary; with --json the last line is one JSON object.
            """
    )

    @Option(help: "Seconds of conversation.") var seconds = 10.0
    @Option(help: "The caller's talker (WAV). Default: the shipped English fixture.") var callerSpeech = SpeechFiles.defaultNear
    @Option(help: "The callee's talker (WAV). Default: the shipped French fixture.") var calleeSpeech = SpeechFiles.defaultFar
    @Option(help: "Packet loss per direction, percent.") var loss = 0.0
    @Option(name: .customLong("jitter-ms"), help: "Network jitter per direction (uniform +-), ms.") var jitterMs = 0.0
    @Option(name: .customLong("delay-ms"), help: "One-way network delay, ms.") var delayMs = 0.0
    @Option(help: "Seed of the network impairments and room noise.") var seed: UInt64 = 1
    @Option(help: "Folder for the WAV recordings.") var out = "out/demo"
    @Flag(help: "Print one JSON object as the last line.") var json = false

    func validate() throws {
        guard seconds >= 2, seconds <= 600 else { throw ValidationError("--seconds must be in 2...600") }
        guard (0...100).contains(loss) else { throw ValidationError("--loss must be a percentage") }
        guard jitterMs >= 0, delayMs >= 0 else { throw ValidationError("--jitter-ms and --delay-ms must be >= 0") }
    }

    @OptionGroup var logging: LoggingOptions

    func run() async throws {
        logging.bootstrap()
        let rate = 16000
        let impaired = loss > 0 || jitterMs > 0 || delayMs > 0
        let profile = ImpairmentProfile(delayMs: delayMs + jitterMs, jitterMs: jitterMs, lossPercent: loss)
        let relays = RelayPair(profile: impaired ? profile : nil, seed: seed)

        let (caller, callee) = try makeEndpoints(rate: rate, relays: relays)
        await caller.controller.start()
        await callee.controller.start()
        let answering = Task { () -> Call? in
            for await call in callee.controller.incomingCalls {
                do { try await call.answer() } catch { print("callee could not answer: \(error)") }
                return call
            }
            return nil
        }

        let target = "sip:callee@\(callee.controller.sipAddress)"
        let call = try await caller.controller.dial(target)
        let started = ContinuousClock.now
        let state = await call.connected()
        let answered = await answering.value
        guard state == .active, let calleeCall = answered else {
            throw ValidationError("the call did not connect: \(call.state)")
        }
        let status = StatusLine(enabled: !json && isatty(STDOUT_FILENO) != 0)
        while started.duration(to: .now) < .seconds(seconds), call.state != CallState.ended(.remoteHangUp) {
            try await Task.sleep(for: .milliseconds(250))
            let a = await call.statistics, b = await calleeCall.statistics
            status.show([("caller", a), ("callee", b)])
        }
        status.finish()

        let callerStats = await call.statistics, calleeStats = await calleeCall.statistics
        await call.hangUp()
        _ = await calleeCall.ended()
        _ = relays.stop()
        await caller.controller.shutdown()
        await callee.controller.shutdown()

        let callerUplink = await caller.controller.recordedUplink(of: call)
        let calleeUplink = await callee.controller.recordedUplink(of: calleeCall)
        let report = try DemoReport.measure(caller: caller, callee: callee,
                                            callerUplink: callerUplink, calleeUplink: calleeUplink,
                                            callerStats: callerStats,
                                            calleeStats: calleeStats, callerEnd: call.state, calleeEnd: calleeCall.state,
                                            networkDelayMs: impaired ? delayMs + jitterMs : 0, sampleRate: rate)
        try write([(caller, callerUplink), (callee, calleeUplink)], rate: rate)
        report.print(json: json, out: out)
    }

    /// The two endpoints in their rooms, talking in turns: 2 s each, the caller first, each after a 0.4 s pause.
    private func makeEndpoints(rate: Int, relays: RelayPair) throws -> (caller: DemoEndpoint, callee: DemoEndpoint) {
        let length = Int((seconds + 5) * Double(rate))
        let callerTurns = Conversation.turns(try SpeechFiles.load(callerSpeech, sampleRate: rate), length: length,
                                             turn: 2 * rate, pause: rate * 2 / 5, speaksFirst: true)
        let calleeTurns = Conversation.turns(try SpeechFiles.load(calleeSpeech, sampleRate: rate), length: length,
                                             turn: 2 * rate, pause: rate * 2 / 5, speaksFirst: false)
        let caller = try DemoEndpoint(name: "caller", speech: callerTurns, sampleRate: rate, seed: seed,
                                      mediaPath: relays.path(toward: "callee"))
        let callee = try DemoEndpoint(name: "callee", speech: calleeTurns, sampleRate: rate, seed: seed &+ 7,
                                      mediaPath: relays.path(toward: "caller"))
        return (caller, callee)
    }

    /// Each endpoint's room recording, and what its voice processing sent on (the microphone after
    /// echo cancellation, noise suppression and AGC), under `--out`.
    private func write(_ uplinks: [(DemoEndpoint, [Int16])], rate: Int) throws {
        for (endpoint, uplink) in uplinks {
            guard let room = endpoint.device else { continue }
            try FileManager.default.createDirectory(atPath: "\(out)/\(endpoint.name)", withIntermediateDirectories: true)
            try room.writeRecording(to: "\(out)/\(endpoint.name)")
            try WAV.write(WAVAudio(sampleRate: rate, int16Samples: uplink), to: "\(out)/\(endpoint.name)/uplink.wav")
        }
    }
}

/// Two one-way impairment relays, caller -> callee and callee -> caller, or none.
final class RelayPair: @unchecked Sendable {
    // @unchecked: `relays` is filled lazily on the controllers' task (one call) and read after it.
    private let profile: ImpairmentProfile?
    private let seed: UInt64
    private var relays: [String: ImpairmentRelay] = [:]
    private let lock = NSLock()

    init(profile: ImpairmentProfile?, seed: UInt64) {
        self.profile = profile
        self.seed = seed
    }

    /// The media path for packets going to `peer`: a relay that forwards to the address the peer gave in SDP.
    func path(toward peer: String) -> (@Sendable (SocketAddress) -> SocketAddress)? {
        guard let profile else { return nil }
        let seed = self.seed &+ (peer == "caller" ? 1 : 2)
        return { [self] target in
            lock.lock(); defer { lock.unlock() }
            if let relay = relays[peer] { return relay.listenAddress }
            guard let listen = try? SocketAddress(host: "127.0.0.1", port: 0),
                  let relay = try? ImpairmentRelay(listen: listen, targets: [target], forward: profile, seed: seed) else {
                return target
            }
            relay.start()
            relays[peer] = relay
            return relay.listenAddress
        }
    }

    /// Stops the relays and returns the jitter they added (95th percentile, ms).
    func stop() -> [String: ImpairmentRelay.Statistics] {
        lock.lock(); defer { lock.unlock() }
        var stats: [String: ImpairmentRelay.Statistics] = [:]
        for (peer, relay) in relays { stats[peer] = relay.statistics; relay.stop() }
        return stats
    }
}

/// A status line per endpoint, rewritten in place on a terminal.
struct StatusLine {
    let enabled: Bool

    func show(_ endpoints: [(String, CallStatistics)]) {
        guard enabled else { return }
        let text = endpoints.map { name, s in
            String(format: "%@ mic %4.0f dB spk %4.0f dB loss %3d jit %4.1f ms rtt %@ ERLE %@ %@", name,
                   s.captureLevelDBFS, s.playbackLevelDBFS, s.packetsLost, s.jitterMs,
                   s.rttMs.map { String(format: "%3.0f ms", $0) } ?? "  - ms",
                   s.erleDB.map { String(format: "%2.0f dB", $0) } ?? " - dB", s.route)
        }.joined(separator: " | ")
        // One write, so the line is replaced atomically on the terminal.
        let line = Array(("\r\u{1B}[K" + text).utf8)
        _ = line.withUnsafeBytes { write(STDOUT_FILENO, $0.baseAddress, $0.count) }
    }

    /// A line above the status line (or a plain line when there is no status line).
    func note(_ text: String) {
        guard enabled else { return Swift.print(text) }
        let line = Array(("\r\u{1B}[K" + text + "\n").utf8)
        _ = line.withUnsafeBytes { write(STDOUT_FILENO, $0.baseAddress, $0.count) }
    }

    func finish() { if enabled { Swift.print("") } }
}
