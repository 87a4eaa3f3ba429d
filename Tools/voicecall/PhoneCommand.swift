import ToolSupport
import ArgumentParser
import Foundation
import Synchronization
import VoiceCall

/// `voicecall phone`: a long-running agent driven by commands on standard input, one per line,
/// printing one event per line, as baresip's and pjsua's consoles are driven by people and scripts.
struct PhoneCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "phone",
        abstract: "A softphone agent: commands on standard input, one event per line on standard output.",
        discussion: """
            Commands: dial URI, answer [ID], hangup [ID], hold [ID], resume [ID], mute [ID], unmute [ID], \
            reject [ID] [STATUS], dtmf KEYS [ID], transfer URI|ID [ID], conference ID [ID], record FILE [ID], stop-record [ID], \
            play FILE|ringback|beep [ID], stop-play [ID], calls, quit (or \
            the end of standard input). ID is the number of a call as its events give it; without one, the latest call. transfer \
            to a URI is blind, to a call's ID attended; its ok or error comes when the transfer is done. \
            conference joins two calls in a three-way conference (holding or ending either ends it). record \
            writes the call's two directions to a stereo WAV file (left: sent, right: played) until stop-record \
            or the call's end. play sends a WAV file or a tone to the peer in place of the microphone \
            ("played ID" when it is over). \
            Events: "ready sip:...", "incoming ID URI", "state ID STATE", "peer-hold ID on|off", "dtmf ID KEY", \
            "transferred ID NEWID URI" (a peer transferred call ID: NEWID is our call to its target), \
            "replaced ID NEWID URI" (call NEWID took call ID's place), "registration STATE" (registering, \
            registered, failed, unregistered, with the registrar), "ok COMMAND", "error COMMAND: WHY". Calls ring until answered (any caller that can reach --sip), up to 4 at \
            once (then 486). One call has the audio: answering or resuming another holds it.
            """
    )

    @OptionGroup var phone: PhoneOptions

    @OptionGroup var logging: LoggingOptions

    func run() async throws {
        logging.bootstrap()
        let endpoint = try PhoneEndpoint.checked(options: phone, defaultSIP: "0.0.0.0:5060", acceptsCallsFrom: nil)
        await endpoint.controller.start()
        try await endpoint.registerIfAsked(phone)
        let agent = PhoneAgent(endpoint: endpoint)
        agent.emit("ready sip:\(phone.user)@\(endpoint.controller.sipAddress)")
        let incoming = Task { for await call in endpoint.controller.incomingCalls { agent.track(call, announce: true) } }
        let events = Task { await agent.follow(endpoint.controller.events) }
        for await line in Self.lines() {
            guard await agent.perform(line) else { break }
        }
        incoming.cancel()
        events.cancel()
        await endpoint.controller.shutdown()
        do {
            if let written = try endpoint.writeOutput() { agent.emit("wrote \(written)") }
        } catch {
            agent.emit("error output: \(error)")
        }
        agent.emit("bye")
    }

    /// Standard input's lines, read on a thread of their own (`readLine` blocks).
    static func lines() -> AsyncStream<String> {
        let (stream, continuation) = AsyncStream.makeStream(of: String.self, bufferingPolicy: .bufferingOldest(256))
        Thread.detachNewThread {
            while let line = readLine() { continuation.yield(line) }
            continuation.finish()
        }
        return stream
    }
}

/// Why a command failed (printed as its `error` event).
struct PhoneAgentError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// The calls an agent knows, by number, and what each command does to them.
///
/// Thread safety: safe from any thread (its table behind a lock; printing is whole lines).
final class PhoneAgent: Sendable {
    let endpoint: PhoneEndpoint
    private let calls = Mutex<[(number: Int, call: Call)]>([])
    /// What each call is playing to its peer (`play`), by call ID.
    private let playbacks = Mutex<[String: CallPlayback]>([:])
    private let output = Mutex(())

    init(endpoint: PhoneEndpoint) { self.endpoint = endpoint }

    /// Prints one event line (control characters a peer controls escaped).
    func emit(_ line: String) {
        output.withLock { _ in
            // Written through, with no stdio buffer to flush: fflush(nil) takes every stream's
            // lock, stdin's too, which the reading thread holds while it waits for a line, so
            // events stalled until the next command came.
            FileHandle.standardOutput.write(Data((printable(line) + "\n").utf8))
        }
    }

    /// Numbers `call`, prints its state changes and the keys its peer presses.
    @discardableResult
    func track(_ call: Call, announce: Bool) -> Int {
        let number = calls.withLock { list in
            let n = (list.last?.number ?? 0) + 1
            list.append((n, call))
            return n
        }
        if announce { emit("incoming \(number) \(call.remoteURI)") }
        Task { for await state in call.states { self.emit("state \(number) \(state)") } }
        Task { for await key in call.dtmf { self.emit("dtmf \(number) \(key)") } }
        return number
    }

    func follow(_ events: AsyncStream<CallController.Event>) async {
        for await event in events {
            switch event {
            case let .peerHold(id, held):
                if let number = number(of: id) { emit("peer-hold \(number) \(held ? "on" : "off")") }
            case let .transferred(from, to):
                emit("transferred \(number(of: from).map(String.init) ?? "?") \(track(to, announce: false)) \(to.remoteURI)")
            case let .replaced(id, by):
                emit("replaced \(number(of: id).map(String.init) ?? "?") \(track(by, announce: false)) \(by.remoteURI)")
            case let .registration(_, state):
                emit("registration \(state)")
            default:
                break
            }
        }
    }

    private func number(of id: String) -> Int? { calls.withLock { $0.first { $0.call.id == id }?.number } }

    /// `transfer TARGET [ID]`: blind to a URI, attended to another call's number; reported when done.
    private func transfer(_ words: [String]) throws {
        guard words.count > 1 else { throw PhoneAgentError("transfer needs a SIP URI or a call's number") }
        let call = try call(words.count > 2 ? words[2] : nil)
        let other = Int(words[1]) != nil ? try self.call(words[1]) : nil
        Task {
            do {
                if let other { try await call.transfer(to: other) } else { try await call.transfer(to: words[1]) }
                emit("ok transfer")
            } catch {
                emit("error transfer: \(error)")
            }
        }
    }

    /// The call a command names: its number, else the latest call that has not ended.
    private func call(_ argument: String?) throws -> Call {
        try calls.withLock { list in
            if let argument {
                guard let n = Int(argument), let entry = list.first(where: { $0.number == n }) else {
                    throw PhoneAgentError("no call \(argument)")
                }
                return entry.call
            }
            guard let entry = list.last(where: { !$0.call.state.isEnded }) else { throw PhoneAgentError("no call") }
            return entry.call
        }
    }

    /// Runs one command line; false for `quit`.
    func perform(_ line: String) async -> Bool {
        let words = line.split(separator: " ", omittingEmptySubsequences: true).map(String.init)
        guard let verb = words.first?.lowercased() else { return true }
        let argument = words.count > 1 ? words[1] : nil
        do {
            switch verb {
            case "quit", "exit": return false
            case "dial":
                guard let argument else { throw PhoneAgentError("dial needs a SIP URI") }
                let call = try await endpoint.controller.dial(argument)
                emit("calling \(track(call, announce: false)) \(argument)")
                return true
            case "join":
                guard words.count >= 3, let room = UInt64(words[2]), words.count == 3 || words[3] == "create" else {
                    throw PhoneAgentError("join needs Janus's URL and a room's number (then create, to create it)")
                }
                let call = try await endpoint.controller.join(ConferenceRoom(
                    server: words[1], room: room, createsRoom: words.count > 3, display: endpoint.controller.configuration.userName))
                emit("joined \(track(call, announce: false)) room \(room)")
                return true
            case "answer": try await call(argument).answer()
            case "hangup": await (try call(argument)).hangUp()
            case "hold": try await call(argument).hold()
            case "resume": try await call(argument).resume()
            case "mute": await (try call(argument)).setMuted(true)
            case "unmute": await (try call(argument)).setMuted(false)
            case "reject":
                let status = words.count > 2 ? Int(words[2]) : 486
                guard let status else { throw PhoneAgentError("reject [ID] [STATUS]: the status is a number") }
                try await call(argument).reject(status: status)
            case "dtmf":
                guard let argument else { throw PhoneAgentError("dtmf needs keys") }
                try await call(words.count > 2 ? words[2] : nil).sendDTMF(argument)
            case "transfer":
                try transfer(words)
                return true
            case "record":
                guard let argument else { throw PhoneAgentError("record needs a WAV file's path") }
                try await call(words.count > 2 ? words[2] : nil).startRecording(to: argument)
            case "stop-record":
                let seconds = try await call(argument).stopRecording()
                emit("recorded \(String(format: "%.1f", seconds)) s")
            case "play":
                try await play(words)
            case "stop-play":
                let id = try call(argument).id
                playbacks.withLock { $0.removeValue(forKey: id) }?.stop()
            case "conference":
                guard let argument else { throw PhoneAgentError("conference needs a call's number") }
                try await call(words.count > 2 ? words[2] : nil).conference(with: call(argument))
            case "calls":
                for (number, call) in calls.withLock({ $0 }) { emit("call \(number) \(call.direction) \(call.remoteURI) \(call.state)") }
            default:
                throw PhoneAgentError("unknown command (dial, join, answer, hangup, hold, resume, mute, unmute, reject, dtmf, transfer, conference, record, stop-record, play, stop-play, calls, quit)")
            }
            emit("ok \(verb)")
        } catch {
            emit("error \(verb): \(error)")
        }
        return true
    }

    /// `play FILE|ringback|beep [ID]`: the playback replaces the microphone until it is over.
    private func play(_ words: [String]) async throws {
        guard words.count > 1 else { throw PhoneAgentError("play needs a WAV file's path, ringback or beep") }
        let source: CallAudioSource = switch words[1] {
        case "ringback": .tone(.ringback)
        case "beep": .tone(.beep)
        default: .file(words[1])
        }
        let target = try call(words.count > 2 ? words[2] : nil)
        let playback = try await target.play(source)
        playbacks.withLock { $0[target.id] = playback }
        let number = calls.withLock { list in list.first { $0.call === target }?.number } ?? 0
        Task { [self] in
            await playback.finished()
            emit("played \(number)")
        }
    }
}
