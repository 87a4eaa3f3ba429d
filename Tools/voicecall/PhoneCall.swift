import ToolSupport
import AudioSession
import Foundation
import Janus
import Synchronization
import VoiceCall

/// Runs a connected call of `voicecall listen` / `voicecall call` until it ends: the route asked
/// for, keys on a terminal, a live status line, hang-up after `--seconds`, on `q` or on Ctrl-C;
/// then the session is inactive again and the output file is written.
enum PhoneCall {
    static func talk(_ call: Call, on endpoint: PhoneEndpoint, options: PhoneOptions) async -> PhoneReport {
        let interactive = !options.json && isatty(STDOUT_FILENO) != 0
        let status = StatusLine(enabled: interactive)
        do { try endpoint.applyRoute() } catch { status.note("route \(options.route.rawValue): \(error)") }
        let actions = ActionQueue()
        let keys = interactive ? TerminalKeys { key in keyPressed(key, actions) } : nil
        let signals = StopSignals { actions.push(.hangUp) }
        if keys != nil { status.note("keys: s speaker on/off, p proximity near/far, h plug/unplug a headset, k hold/resume, m mute/unmute, 0-9 * # DTMF, q hang up") }
        // Keys the peer presses, and `--dtmf` a second after the call connects (an IVR menu).
        let received = Mutex("")
        let listener = Task {
            for await key in call.dtmf {
                // Kept to the last 64 keys: a peer may press keys for as long as the call lasts.
                received.withLock { if $0.count < 64 { $0.append(key) } }
                status.note("the peer pressed \(key)")
            }
        }
        if let keys = options.dtmf {
            Task {
                try? await Task.sleep(for: .seconds(1))
                do { try await call.sendDTMF(keys) } catch { status.note("\(error)") }
            }
        }
        let events = Task { await showEvents(of: endpoint, on: status) }

        let connected = ContinuousClock.now
        await run(call, on: endpoint, from: connected, for: options.seconds, actions: actions, status: status)
        status.finish()
        // A room leg's participants as Janus lists them at the end, ourselves included.
        let participants = call.transport == "janus" ? (try? await call.roomParticipants())?.map { $0.display ?? "\($0.id)" } : nil
        await call.hangUp()  // nothing to do when the peer already did
        let reason = await call.ended()
        let duration = connected.duration(to: .now)
        keys?.restore()
        signals.cancel()
        events.cancel()
        listener.cancel()
        let statistics = await call.statistics
        await endpoint.controller.shutdown()
        var written: String?
        do { written = try endpoint.writeOutput() } catch { status.note("cannot write the output: \(error)") }
        return PhoneReport(statistics: statistics, direction: call.direction.rawValue, remote: call.remoteURI, transport: call.transport,
                           ended: "\(reason)", sessionActive: endpoint.session.isActive,
                           seconds: duration.seconds, dtmfReceived: received.withLock { $0 },
                           output: written, roomParticipants: participants)
    }

    /// A key on the terminal, as an action for the call's loop.
    private static func keyPressed(_ key: Character, _ actions: ActionQueue) {
        switch key {
        case "s": actions.push(.toggleSpeaker)
        case "p": actions.push(.toggleProximity)
        case "h": actions.push(.toggleHeadset)
        case "q": actions.push(.hangUp)
        case "k": actions.push(.toggleHold)
        case "m": actions.push(.toggleMute)
        case "0"..."9", "*", "#": actions.push(.dtmf(key))
        default: break
        }
    }

    /// Route changes, interruptions and the peer's hold, on the status line.
    private static func showEvents(of endpoint: PhoneEndpoint, on status: StatusLine) async {
        for await event in endpoint.controller.events {
            switch event {
            case let .routeChanged(reason, route):
                status.note("route: \(route.outputs.map(\.portType.rawValue).joined(separator: "+")) (\(reason))")
            case let .interruption(interruption):
                status.note("interruption \(interruption.type)")
            case let .peerHold(_, held):
                status.note(held ? "the peer put the call on hold" : "the peer took the call off hold")
            case let .transferred(_, to):
                status.note("the peer transferred the call: calling \(to.remoteURI) (voicecall phone follows it)")
            case .replaced:
                status.note("another call replaced this one")
            case let .registration(_, state):
                status.note("registration: \(state)")
            case let .room(_, event):
                status.note(describe(event))
            }
        }
    }

    /// A room's event, for the status line.
    private static func describe(_ event: AudioBridgeEvent) -> String {
        switch event {
        case let .participants(list): "in the room: " + list.map { "\($0.display ?? "\($0.id)")\($0.muted == true ? " (muted)" : "")" }.joined(separator: ", ")
        case let .left(id): "participant \(id) left the room"
        case let .talking(id, talks): "participant \(id) \(talks ? "talks" : "stopped talking")"
        case .roomDestroyed: "the room was destroyed"
        case let .serverGone(why): "the conference server went away: \(why)"
        }
    }

    /// Takes the actions and shows the statistics every 200 ms until the call ends, an action
    /// hangs up, or `seconds` have passed since `connected`.
    private static func run(_ call: Call, on endpoint: PhoneEndpoint, from connected: ContinuousClock.Instant,
                            for seconds: Double?, actions: ActionQueue, status: StatusLine) async {
        var hangUp = false
        while !call.state.isEnded, !hangUp {
            try? await Task.sleep(for: .milliseconds(200))
            for action in actions.drain() {
                switch action {
                case .hangUp: hangUp = true
                case .dtmf(let key):
                    do { try await call.sendDTMF(String(key)) } catch { status.note("\(error)") }
                    continue
                case .toggleHold:
                    let held = if case .held(.local) = call.state { true } else { false }
                    do {
                        if held { try await call.resume() } else { try await call.hold() }
                        status.note(held ? "resumed" : "on hold")
                    } catch {
                        status.note("\(error)")
                    }
                    continue
                case .toggleMute:
                    await call.setMuted(!call.isMuted)
                    status.note(call.isMuted ? "muted" : "unmuted")
                    continue
                default: break
                }
                status.note(endpoint.perform(action))
            }
            if let seconds, connected.duration(to: .now) >= .seconds(seconds) { hangUp = true }
            status.show([("call", await call.statistics)])
        }
    }
}

/// Actions from the key thread and signal handlers, taken by the call's loop.
final class ActionQueue: Sendable {
    private let queue = Mutex<[PhoneAction]>([])
    func push(_ action: PhoneAction) { queue.withLock { $0.append(action) } }
    func drain() -> [PhoneAction] { queue.withLock { q in defer { q = [] }; return q } }
}

/// What one call of `voicecall listen` / `voicecall call` did, for people and (`--json`) machines.
struct PhoneReport: Encodable {
    var statistics: CallStatistics
    var direction: String
    var remote: String
    /// The SIP transport: udp, tcp or tls.
    var transport: String
    var ended: String
    var sessionActive: Bool
    var seconds: Double
    /// The DTMF keys the peer pressed.
    var dtmfReceived: String
    var output: String?
    /// A conference leg's room, as Janus listed it before we left: the display names.
    var roomParticipants: [String]?

    enum CodingKeys: String, CodingKey {
        case direction, remote, transport, ended, sessionActive = "session_active", seconds, dtmfReceived = "dtmf_received", output
        case roomParticipants = "room_participants"
    }

    func encode(to encoder: any Encoder) throws {
        try statistics.encode(to: encoder)  // the statistics' keys at the top level, as in the demo's endpoints
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(direction, forKey: .direction)
        try c.encode(remote, forKey: .remote)
        try c.encode(transport, forKey: .transport)
        try c.encode(ended, forKey: .ended)
        try c.encode(sessionActive, forKey: .sessionActive)
        try c.encode(seconds, forKey: .seconds)
        try c.encode(dtmfReceived, forKey: .dtmfReceived)
        try c.encodeIfPresent(output, forKey: .output)
        try c.encodeIfPresent(roomParticipants, forKey: .roomParticipants)
    }

    func print(json: Bool) {
        func f(_ x: Double?, _ d: Int = 1) -> String { x.map { String(format: "%.\(d)f", $0) } ?? "-" }
        let s = statistics
        let rows = [
            ("call", "\(direction) with \(printable(remote)) over \(transport), \(f(seconds)) s, \(printable(ended))"),
            ("packets sent / received / lost", "\(s.packetsSent) / \(s.packetsReceived) / \(s.packetsLost)"),
            ("FEC recovered / concealed ms", "\(s.fecRecovered) / \(f(s.concealedMs, 0)) (\(f(s.concealedWithoutLossMs, 0)) with no packet lost)"),
            ("jitter / RTT ms", "\(f(s.jitterMs)) / \(f(s.rttMs))"),
            ("jitter buffer delay ms", f(s.jitterBufferDelayMs)),
            ("echo removed (ERLE) dB", f(s.erleDB)),
            ("echo path / delay ms / drift ppm", "\(s.echoPath) / \(f(s.echoDelayMs)) / \(f(s.driftPPM))"),
            ("echo canceller restarts", "\(s.cancellerResets)"),
            ("route", s.route),
            ("audio thread CPU %", f(s.cpuLoad * 100, 2)),
            ("xruns / packets dropped", "\(s.xruns) / \(s.packetsDropped)"),
            ("media encryption", s.mediaEncryption == "off" ? "off"
                : "\(s.mediaEncryption) \(s.srtpProfile ?? "(no keys)"): protected \(s.srtpProtected), unprotected \(s.srtpUnprotected), "
                + "bad tags \(s.srtpAuthenticationFailures), replays \(s.srtpReplays)"
                + (s.dtlsHandshakeMs.map { ", handshake \(f($0)) ms" } ?? "")),
            ("session active after the call", "\(sessionActive)"),
            ("DTMF keys the peer pressed", dtmfReceived.isEmpty ? "-" : dtmfReceived),
        ] + (output.map { [("peer's voice written to", $0)] } ?? [])
            + (roomParticipants.map { [("in the room at the end", $0.joined(separator: ", "))] } ?? [])
        let width = rows.map(\.0.count).max()! + 2
        for (name, value) in rows { Swift.print("  " + name.padding(toLength: width) + value) }
        if json {
            printJSONLine(self)
        }
    }
}
