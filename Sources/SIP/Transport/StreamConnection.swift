import OpenSSL
import Platform

// One TCP or TLS connection of a user agent: the socket, the TLS session over it, the framer
// of what arrives, and the bytes waiting to be written. Everything here is non-blocking: a slow
// or stalled peer fills its own queue, up to a cap that closes it, and never holds up others.

/// A stream connection, owned by ``SIPTransports`` and used under its lock.
final class StreamConnection {
    enum Phase: Equatable {
        /// A connect in progress (ours): wait until writable.
        case connecting
        /// TLS handshake in progress.
        case handshaking
        case open
        case closed(String)
    }

    let id: ConnectionID
    let socket: TCPSocket
    let transport: SIPTransportKind
    /// Whether we opened it (a client), or accepted it.
    let outgoing: Bool
    private(set) var phase: Phase {
        didSet { if phase == .open { wasOpen = true } }
    }
    /// Whether it was ever open (one that never was failed to connect or to shake hands).
    private(set) var wasOpen = false
    private var tls: TLSSession?
    private var framer = StreamFramer()
    /// Bytes for the socket (TLS records on TLS), oldest first.
    private var queue: [UInt8] = []
    /// Plaintext written before the TLS handshake finished.
    private var pendingPlaintext: [UInt8] = []
    /// The monotonic time of the last byte in or out, and of the start (for the handshake limit).
    private(set) var lastActivity: ContinuousClock.Instant
    let opened: ContinuousClock.Instant
    /// When we last sent a keep-alive ping.
    private(set) var lastPing: ContinuousClock.Instant

    /// The most bytes waiting to be written before the peer is taken as stalled and closed.
    static let maximumQueuedBytes = 256 * 1024

    init(id: ConnectionID, socket: TCPSocket, transport: SIPTransportKind, outgoing: Bool, tls: consuming TLSSession?,
         now: ContinuousClock.Instant) {
        self.id = id
        self.socket = socket
        self.transport = transport
        self.outgoing = outgoing
        self.tls = tls
        phase = outgoing ? .connecting : (transport == .tls ? .handshaking : .open)
        wasOpen = phase == .open
        lastActivity = now
        opened = now
        lastPing = now
    }

    var remoteAddress: SocketAddress { socket.remoteAddress }
    var isClosed: Bool { if case .closed = phase { true } else { false } }
    /// Whether the network thread should wait for the socket to be writable.
    var wantsWrite: Bool { phase == .connecting || !queue.isEmpty }
    var hop: SIPHop { SIPHop(transport, remoteAddress, connection: id) }

    /// Queues a message (or a keep-alive) and writes what the socket takes now.
    func send(_ bytes: [UInt8], now: ContinuousClock.Instant) {
        guard !isClosed else { return }
        if transport == .tls {
            guard phase == .open else {
                pendingPlaintext.append(contentsOf: bytes)
                return checkQueueLimit()
            }
            do { try tls!.write(bytes) } catch { return close("TLS write: \(error)") }
            takeTLSOutput()
        } else {
            queue.append(contentsOf: bytes)
        }
        checkQueueLimit()
        flush(now: now)
    }

    /// The socket is writable: finishes a connect, writes what is queued.
    func writable(now: ContinuousClock.Instant) {
        if phase == .connecting {
            if let error = socket.finishConnect() { return close("connect: \(error)") }
            phase = transport == .tls ? .handshaking : .open
            if transport == .tls { advanceHandshake() }
        }
        flush(now: now)
    }

    /// The socket is readable: reads, decrypts and frames. Returns the units that arrived.
    func readable(into scratch: UnsafeMutableRawBufferPointer, now: ContinuousClock.Instant) -> [StreamFramer.Unit] {
        var units: [StreamFramer.Unit] = []
        // A bounded number of reads per wake-up, so one busy connection cannot starve the rest.
        for _ in 0..<4 where !isClosed {
            switch socket.receive(into: scratch) {
            case .transferred(let count):
                lastActivity = now
                units += consume(UnsafeRawBufferPointer(rebasing: scratch[..<count]))
            case .wouldBlock:
                return units
            case .closed:
                close("closed by the peer")
            case .failed(let code):
                close("read failed: errno \(code)")
            }
        }
        flush(now: now)
        return units
    }

    /// Sends an RFC 5626 keep-alive (CRLF CRLF); it does not count as activity itself.
    func ping(now: ContinuousClock.Instant) {
        lastPing = now
        let last = lastActivity
        send([.cr, .lf, .cr, .lf], now: now)
        lastActivity = last
    }

    func close(_ reason: String) {
        guard !isClosed else { return }
        if tls != nil, phase == .open {
            tls!.close()
            takeTLSOutput()
            if !queue.isEmpty { _ = queue.withUnsafeBytes { socket.send($0) } }  // close_notify, best effort
        }
        phase = .closed(reason)
        queue.removeAll()
        pendingPlaintext.removeAll()
    }

    private func consume(_ bytes: UnsafeRawBufferPointer) -> [StreamFramer.Unit] {
        var plaintext: [UInt8]
        if transport == .tls {
            do {
                try tls!.receive(bytes)
                if phase == .handshaking { advanceHandshake() }
                guard phase == .open else { return [] }
                plaintext = try tls!.readAvailable()
            } catch {
                close("TLS: \(error)")
                return []
            }
            takeTLSOutput()
        } else {
            plaintext = Array(bytes)
        }
        do {
            return try framer.append(plaintext)
        } catch {
            close("framing: \(error)")
            return []
        }
    }

    private func advanceHandshake() {
        do {
            if try tls!.advance() == .established {
                phase = .open
                if !pendingPlaintext.isEmpty {
                    try tls!.write(pendingPlaintext)
                    pendingPlaintext.removeAll()
                }
            }
        } catch {
            close("TLS handshake: \(error)")
        }
        takeTLSOutput()
    }

    private func takeTLSOutput() {
        while let records = tls?.takeOutgoing() { queue.append(contentsOf: records) }
    }

    private func flush(now: ContinuousClock.Instant) {
        guard !queue.isEmpty, phase != .connecting, !isClosed else { return }
        switch queue.withUnsafeBytes({ socket.send($0) }) {
        case .transferred(let count):
            queue.removeFirst(count)
            lastActivity = now
        case .wouldBlock:
            break
        case .closed:
            close("closed by the peer")
        case .failed(let code):
            close("write failed: errno \(code)")
        }
    }

    private func checkQueueLimit() {
        if queue.count + pendingPlaintext.count > Self.maximumQueuedBytes { close("the peer does not read (stalled)") }
    }
}
