import Logging
import OpenSSL
import Platform
import Synchronization

// The transports of one user agent (RFC 3261 section 18): its UDP socket, its TCP and TLS
// listeners, and the connections it opened or accepted. Sends come from any thread (the core's
// actions, flushed after its lock is released) and never block; reads happen on the network
// thread, which waits on every descriptor at once.

/// A user agent's sockets and connections.
///
/// Thread safety: safe from any thread; ``service(timeoutMs:deliver:)`` runs on the network
/// thread alone. One lock guards the connections, held briefly, never while the core's is.
final class SIPTransports: Sendable {
    let udp: UDPSocket
    let tcpListener: TCPListener?
    let tlsListener: TCPListener?
    let wake: WakeEvent
    private let serverTLS: TLSContext?
    private let clientTLS: TLSContext?
    private let limits: SIPLimits
    private let logger: Logger
    private let state = Mutex(State())

    private struct State {
        var connections: [ConnectionID: StreamConnection] = [:]
        /// The connection to reuse for a transport and remote address (the newest).
        var reusable: [ReuseKey: ConnectionID] = [:]
        var nextID: ConnectionID = 1
        var refused = 0
        /// Connections we opened that closed before they were ever open (refused, a failed TLS
        /// handshake): the core hears of each once, as a transport error.
        var failedOpens: [SIPHop] = []
    }

    private struct ReuseKey: Hashable {
        var transport: SIPTransportKind
        var address: SocketAddress
    }

    init(udp: UDPSocket, tcpListener: TCPListener?, tlsListener: TCPListener?, serverTLS: TLSContext?,
         clientTLS: TLSContext?, limits: SIPLimits, logger: Logger) throws(SocketError) {
        self.udp = udp
        self.tcpListener = tcpListener
        self.tlsListener = tlsListener
        self.serverTLS = serverTLS
        self.clientTLS = clientTLS
        self.limits = limits
        self.logger = logger
        wake = try WakeEvent()
    }

    /// The local port messages on `transport` come from (Via's sent-by, Contact).
    func localPort(for transport: SIPTransportKind) -> UInt16 {
        switch transport {
        case .udp: udp.localAddress.port
        case .tcp: tcpListener?.localAddress.port ?? udp.localAddress.port
        case .tls: tlsListener?.localAddress.port ?? udp.localAddress.port
        }
    }

    /// Whether requests can go out on `transport` (TLS needs a client context).
    func canSend(on transport: SIPTransportKind) -> Bool { transport != .tls || clientTLS != nil }

    /// Connections refused by the limits (``SIPLimits/maximumConnections``, per source).
    var connectionsRefused: Int { state.withLock { $0.refused } }
    var connectionCount: Int { state.withLock { $0.connections.count } }

    /// Sends a message toward `hop`, never blocking: a datagram, or bytes queued on the hop's
    /// connection, an open one to its address, or a new one (requests only: a response whose
    /// connection is gone is dropped, as its client will retry). Returns false when it could not.
    @discardableResult
    func send(_ bytes: [UInt8], to hop: SIPHop, isResponse: Bool) -> Bool {
        guard hop.transport.isStream else { return udp.send(bytes, to: hop.address) == .sent }
        let sent = state.withLock { state -> Bool in
            let now = ContinuousClock.now
            if let connection = Self.connection(for: hop, in: &state) {
                connection.send(bytes, now: now)
                return !connection.isClosed
            }
            guard !isResponse else { return false }
            guard let connection = open(hop, in: &state, now: now) else {
                // Refused at once (or no TLS context): the core hears of it as of a connection
                // that failed later, from the network thread.
                state.failedOpens.append(hop.anyConnection)
                return false
            }
            connection.send(bytes, now: now)
            return true
        }
        wake.signal()  // the network thread now waits for the connection to be writable
        return sent
    }

    private static func connection(for hop: SIPHop, in state: inout State) -> StreamConnection? {
        if let id = hop.connection, let connection = state.connections[id], !connection.isClosed { return connection }
        guard let id = state.reusable[ReuseKey(transport: hop.transport, address: hop.address)],
              let connection = state.connections[id], !connection.isClosed
        else { return nil }
        return connection
    }

    private func open(_ hop: SIPHop, in state: inout State, now: ContinuousClock.Instant) -> StreamConnection? {
        guard state.connections.count < limits.maximumConnections else {
            state.refused += 1
            return nil
        }
        var session: TLSSession?
        if hop.transport == .tls {
            guard let clientTLS else { return nil }
            do { session = try clientTLS.makeSession(serverName: hop.serverName ?? hop.address.host) } catch {
                logger.warning("SIP: cannot start TLS toward \(hop.address): \(error)")
                return nil
            }
        }
        let socket: TCPSocket
        do { socket = try TCPSocket.connect(to: hop.address) } catch {
            logger.warning("SIP: cannot connect to \(hop): \(error)")
            return nil
        }
        return add(socket, transport: hop.transport, outgoing: true, tls: session, in: &state, now: now)
    }

    private func add(_ socket: TCPSocket, transport: SIPTransportKind, outgoing: Bool, tls: consuming TLSSession?,
                     in state: inout State, now: ContinuousClock.Instant) -> StreamConnection {
        let id = state.nextID
        state.nextID += 1
        let connection = StreamConnection(id: id, socket: socket, transport: transport, outgoing: outgoing, tls: tls, now: now)
        state.connections[id] = connection
        state.reusable[ReuseKey(transport: transport, address: socket.remoteAddress)] = id
        logger.debug("SIP: \(outgoing ? "opened" : "accepted") \(connection.hop)")
        return connection
    }

    /// Waits up to `timeoutMs` for any socket, then reads what arrived, accepts connections,
    /// writes what waits and closes idle ones; `deliver` gets each message (outside the lock).
    func service(timeoutMs: Int, scratch: UnsafeMutableRawBufferPointer,
                 deliver: (_ bytes: [UInt8], _ from: SIPHop, _ truncated: Bool) -> Void,
                 failed: (_ hop: SIPHop) -> Void) {
        var polls = PollSet()
        polls.entries.append(PollEntry(descriptor: wake.descriptor))
        polls.entries.append(PollEntry(descriptor: udp.descriptor))
        for listener in [tcpListener, tlsListener].compactMap({ $0 }) { polls.entries.append(PollEntry(descriptor: listener.descriptor)) }
        let open = state.withLock { Array($0.connections.values) }
        for connection in open {
            polls.entries.append(PollEntry(descriptor: connection.socket.descriptor, write: connection.wantsWrite))
        }
        polls.wait(timeoutMs: timeoutMs)
        if polls.entries[0].readable { wake.drain() }
        if polls.entries[1].readable { readDatagrams(scratch: scratch, deliver: deliver) }
        let now = ContinuousClock.now
        var index = 2
        for (listener, transport) in [(tcpListener, SIPTransportKind.tcp), (tlsListener, .tls)] {
            guard let listener else { continue }
            if polls.entries[index].readable { accept(from: listener, transport: transport, now: now) }
            index += 1
        }
        var arrived: [(StreamFramer.Unit, SIPHop)] = []
        let failures = state.withLock { state in
            for (offset, connection) in open.enumerated() {
                let entry = polls.entries[index + offset]
                if entry.writable || entry.failed { connection.writable(now: now) }
                if entry.readable || entry.failed {
                    for unit in connection.readable(into: scratch, now: now) { arrived.append((unit, connection.hop)) }
                }
            }
            closeIdle(&state, now: now)
            defer { state.failedOpens.removeAll() }
            return state.failedOpens
        }
        for hop in failures { failed(hop) }
        for (unit, hop) in arrived {
            switch unit {
            case .message(let bytes): deliver(bytes, hop, false)
            case .ping: send([.cr, .lf], to: hop, isResponse: true)  // RFC 5626 pong
            }
        }
    }

    private func readDatagrams(scratch: UnsafeMutableRawBufferPointer, deliver: ([UInt8], SIPHop, Bool) -> Void) {
        // A bounded batch per wake-up, so the streams get their turn during a flood.
        for _ in 0..<64 {
            guard case .datagram(let length, let source, let truncated) = udp.receiveNow(into: scratch) else { return }
            deliver(Array(UnsafeRawBufferPointer(rebasing: scratch[..<length])), SIPHop(.udp, source), truncated)
        }
    }

    private func accept(from listener: TCPListener, transport: SIPTransportKind, now: ContinuousClock.Instant) {
        for _ in 0..<16 {
            guard let socket = listener.accept() else { return }
            state.withLock { state in
                let fromSource = state.connections.values.count { $0.remoteAddress.sameHost(as: socket.remoteAddress) }
                guard state.connections.count < limits.maximumConnections, fromSource < limits.maximumConnectionsPerSource else {
                    state.refused += 1
                    logger.debug("SIP: refused a connection from \(socket.remoteAddress) (limits)")
                    return  // the socket closes as it goes
                }
                var session: TLSSession?
                if transport == .tls {
                    guard let serverTLS, let made = try? serverTLS.makeSession() else { return }
                    session = consume made
                }
                _ = add(socket, transport: transport, outgoing: false, tls: session, in: &state, now: now)
            }
        }
    }

    /// Closes connections idle past ``SIPLimits/connectionIdleSeconds``, and those still not
    /// open 10 s after they started (a peer that connects and says nothing holds no slot).
    private func closeIdle(_ state: inout State, now: ContinuousClock.Instant) {
        let idle = Duration.seconds(limits.connectionIdleSeconds)
        for (id, connection) in state.connections {
            if !connection.isClosed, connection.phase != .open, now - connection.opened > .seconds(10) {
                connection.close("not open after 10 s")
            }
            if !connection.isClosed, now - connection.lastActivity > idle { connection.close("idle") }
            // Ours stay open through NATs and proxies with a double-CRLF ping (RFC 5626 section
            // 4.4.1) after 90 s of silence; the pong, or any message, counts as activity.
            if !connection.isClosed, connection.outgoing, connection.phase == .open,
               now - connection.lastActivity > .seconds(90), now - connection.lastPing > .seconds(90) {
                connection.ping(now: now)
            }
            guard connection.isClosed else { continue }
            if connection.outgoing, !connection.wasOpen {
                logger.warning("SIP: could not reach \(connection.hop): \(connection.phase)")
                state.failedOpens.append(connection.hop)
            } else {
                logger.debug("SIP: closed \(connection.hop): \(connection.phase)")
            }
            state.connections[id] = nil
            let key = ReuseKey(transport: connection.transport, address: connection.remoteAddress)
            if state.reusable[key] == id { state.reusable[key] = nil }
        }
    }

    /// Closes every connection (the user agent is closing).
    func closeAll() {
        state.withLock { state in
            for connection in state.connections.values { connection.close("shut down") }
            state.connections.removeAll()
            state.reusable.removeAll()
        }
    }
}
