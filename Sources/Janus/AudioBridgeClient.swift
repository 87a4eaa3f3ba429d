import Synchronization

/// A client of Janus's AudioBridge plugin over Janus's HTTP API: one Janus session with one
/// plugin handle, which joins one room at a time as a plain-RTP participant.
///
/// ``connect(to:keepaliveInterval:)`` creates the session and attaches the plugin; from then a
/// long poll reads the session's events (replies to asynchronous requests and the room's
/// ``events``) and a keepalive goes every `keepaliveInterval`, under Janus's
/// `session_timeout`. ``close()`` detaches and destroys the session.
///
/// Thread safety: safe from any thread; requests may run concurrently.
public final class AudioBridgeClient: Sendable {
    /// The server's HTTP API, as given.
    public let server: String
    /// The room's events (participants, talk, the room or server going away). Finishes at
    /// ``close()`` or once the server is gone. Keeps the newest 256 when nobody reads.
    public let events: AsyncStream<AudioBridgeEvent>

    let http: JanusHTTP
    let sessionID: UInt64
    let handleID: UInt64
    private let continuation: AsyncStream<AudioBridgeEvent>.Continuation
    private let transactions = Transactions()
    private let isClosed = Atomic<Bool>(false)
    /// Messages from the long poll that were not Janus's API (counted, dropped).
    private let malformed = Atomic<Int>(0)
    /// How long an asynchronous request (join, configure, leave) waits for its event.
    static let replyTimeout = Duration.seconds(10)

    private init(server: String, http: JanusHTTP, sessionID: UInt64, handleID: UInt64) {
        self.server = server
        self.http = http
        self.sessionID = sessionID
        self.handleID = handleID
        (events, continuation) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(256))
    }

    /// Creates a Janus session at `url` (`http://host:8088/janus`) and attaches AudioBridge.
    ///
    /// - Throws: ``JanusError/invalidURL(_:)``, ``JanusError/unreachable(_:)`` when nothing
    ///   answers, ``JanusError/server(code:reason:)`` when Janus refuses (no AudioBridge).
    public static func connect(to url: String, keepaliveInterval: Duration = .seconds(25)) async throws(JanusError) -> AudioBridgeClient {
        let http = try JanusHTTP(url: url)
        let session = try await http.post([], ["janus": .string("create"), "transaction": .string(newTransaction())]).identifier()
        let handle: UInt64
        do {
            handle = try await http.post([session], ["janus": .string("attach"), "plugin": .string("janus.plugin.audiobridge"),
                                                     "transaction": .string(newTransaction())]).identifier()
        } catch {
            _ = try? await http.post([session], ["janus": .string("destroy"), "transaction": .string(newTransaction())])
            throw error
        }
        let client = AudioBridgeClient(server: url, http: http, sessionID: session, handleID: handle)
        client.start(keepaliveInterval: keepaliveInterval)
        return client
    }

    /// Starts the long poll and the keepalives. Neither is cancelled (see `JanusHTTP.fetch`):
    /// each stops at its next turn once the client is closed.
    private func start(keepaliveInterval: Duration) {
        Task { [weak self] in _ = await self?.pollLoop() }
        Task { [weak self] in
            while true {
                try? await Task.sleep(for: keepaliveInterval)
                guard let self, !self.isClosed.load(ordering: .acquiring) else { return }
                _ = try? await self.http.post([self.sessionID], ["janus": .string("keepalive"), "transaction": .string(Self.newTransaction())])
            }
        }
    }

    /// Reads the long poll until the client closes or the server is gone (three failures in a
    /// row, or Janus no longer knows the session).
    private func pollLoop() async {
        var failures = 0
        while !isClosed.load(ordering: .acquiring) {
            do {
                let messages = try await http.poll(sessionID)
                failures = 0
                for message in messages { dispatch(message) }
            } catch {
                if isClosed.load(ordering: .acquiring) { return }
                failures += 1
                if case .server(JanusError.noSuchSession, _) = error { failures = Self.pollFailureLimit }
                if case .malformed = error { malformed.add(1, ordering: .relaxed) }
                if failures >= Self.pollFailureLimit { return serverGone("\(error)") }
                try? await Task.sleep(for: .milliseconds(200))
            }
        }
    }

    static let pollFailureLimit = 3

    /// Routes one message of the long poll: a reply someone waits for, or a room event.
    private func dispatch(_ message: JanusMessage) {
        if transactions.deliver(message) { return }
        switch message.janus {
        case "event":
            guard let data = message.plugindata?.data else { return }
            for event in Self.events(in: data) {
                continuation.yield(event)
                if event == .roomDestroyed { continuation.finish() }
            }
        case "timeout": serverGone("Janus timed the session out")
        case "detached": serverGone("Janus detached the AudioBridge handle")
        case "error": if message.error?.code == JanusError.noSuchSession { serverGone("Janus no longer knows the session") }
        default: break  // keepalive, ack, webrtcup, media, slowlink: nothing for a plain-RTP leg
        }
    }

    /// The room events an AudioBridge event carries.
    static func events(in data: AudioBridgeData) -> [AudioBridgeEvent] {
        switch data.audiobridge {
        case "talking": return data.id.map { [.talking($0, true)] } ?? []
        case "stopped-talking": return data.id.map { [.talking($0, false)] } ?? []
        case "destroyed": return [.roomDestroyed]
        case "event", "joined":
            var events: [AudioBridgeEvent] = []
            if let participants = data.participants, !participants.isEmpty { events.append(.participants(participants)) }
            if let leaving = data.leaving { events.append(.left(leaving)) }
            if let kicked = data.kicked { events.append(.left(kicked)) }
            return events
        default: return []
        }
    }

    private func serverGone(_ why: String) {
        guard !isClosed.exchange(true, ordering: .acquiringAndReleasing) else { return }
        transactions.close()
        continuation.yield(.serverGone(why))
        continuation.finish()
    }

    /// The server's host name or address (where its RTP comes from).
    public var serverHost: String { http.host }

    /// Malformed messages dropped from the long poll.
    public var malformedMessages: Int { malformed.load(ordering: .relaxed) }

    /// Leaves the room if in one, detaches the handle and destroys the session; the events
    /// finish. Safe to call more than once.
    public func close() async {
        guard !isClosed.exchange(true, ordering: .acquiringAndReleasing) else { return }
        transactions.close()
        _ = try? await http.post([sessionID, handleID], ["janus": .string("detach"), "transaction": .string(Self.newTransaction())])
        _ = try? await http.post([sessionID], ["janus": .string("destroy"), "transaction": .string(Self.newTransaction())])
        continuation.finish()
    }

    /// Sends `body` to the plugin. A request the plugin answers at once comes back in the
    /// POST's reply; one it acknowledges is answered on the long poll.
    func request(_ body: [String: JSONValue]) async throws(JanusError) -> AudioBridgeData {
        guard !isClosed.load(ordering: .acquiring) else { throw .closed }
        let transaction = Self.newTransaction()
        transactions.expect(transaction)
        var reply: JanusMessage
        do {
            reply = try await http.post([sessionID, handleID], ["janus": .string("message"), "transaction": .string(transaction),
                                                                "body": .object(body)])
        } catch {
            transactions.fail(transaction, error)
            throw error
        }
        if reply.janus == "ack" {
            reply = try await transactions.wait(for: transaction, timeout: Self.replyTimeout)
        } else {
            transactions.forget(transaction)
        }
        if let error = reply.error { throw .server(code: error.code, reason: error.reason) }
        guard let data = reply.plugindata?.data else { throw .malformed("a \(reply.janus) without plugin data") }
        if let failure = data.failure { throw failure }
        return data
    }

    static func newTransaction() -> String {
        String(UInt64.random(in: 1...UInt64.max), radix: 36)
    }
}

extension JanusMessage {
    /// The id a `create` or `attach` returned.
    func identifier() throws(JanusError) -> UInt64 {
        if let error { throw .server(code: error.code, reason: error.reason) }
        guard janus == "success", let id = data?.id else { throw .malformed("a \(janus) without an id") }
        return id
    }
}
