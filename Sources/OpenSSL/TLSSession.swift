import COpenSSL

/// The state of a ``TLSSession``.
///
/// Thread safety: a value type; safe to use from any thread.
public enum TLSSessionState: Sendable, Hashable {
    /// The handshake is under way: feed what arrives, call ``TLSSession/advance()``, send what
    /// ``TLSSession/takeOutgoing()`` returns.
    case handshaking
    /// Application data flows both ways.
    case established
    /// close_notify was sent or received: nothing more is read or written.
    case closed
    /// The handshake or a record failed (the error was thrown); an alert for the peer may
    /// still wait in ``TLSSession/takeOutgoing()``.
    case failed
}

/// One TLS or DTLS connection over memory (sans-IO): ciphertext from the network goes in
/// through ``receive(_:)``, ciphertext for the network comes out of ``takeOutgoing()``, and
/// the session never touches a socket, so the same code runs SIP over TCP and DTLS over UDP.
///
/// A round: feed what arrived, call ``advance()`` (or ``readAvailable()`` once established),
/// then send everything ``takeOutgoing()`` returns until it returns nil.
///
/// Memory is bounded: ciphertext not yet consumed by OpenSSL is capped at
/// ``TLSConfiguration/maximumBufferedBytes`` (``receive(_:)`` throws beyond it), outgoing
/// ciphertext likewise (``write(_:)`` throws until it is taken), OpenSSL holds one record
/// (16 KiB) and at most 64 KiB of certificates, and plaintext is decrypted only on ``read(into:)``.
///
/// Thread safety: not thread-safe; one thread at a time (it may be moved between threads).
public struct TLSSession: ~Copyable {
    let ssl: OpaquePointer
    let buffer: CiphertextBuffer
    let limit: Int
    /// Where the session is.
    public internal(set) var state: TLSSessionState = .handshaking
    /// Whether this is DTLS over datagrams.
    public let isDatagram: Bool

    init(context: TLSContext, serverName: String?) throws(TLSError) {
        let configuration = context.configuration
        ERR_clear_error()
        guard let ssl = SSL_new(context.handle) else { throw TLSError.drain("SSL_new") }
        let buffer = CiphertextBuffer(datagrams: configuration.transport == .datagram)
        do throws(TLSError) {
            try Self.configure(ssl, configuration, serverName: serverName)
            guard let bio = buffer.makeBIO() else { throw TLSError.drain("BIO_new (ciphertext)") }
            SSL_set_bio(ssl, bio, bio)  // one BIO both ways, owned by the SSL from here
        } catch {
            SSL_free(ssl)
            throw error
        }
        self.ssl = ssl
        self.buffer = buffer
        self.limit = configuration.maximumBufferedBytes
        self.isDatagram = buffer.datagrams
    }

    deinit { SSL_free(ssl) }

    private static func configure(_ ssl: OpaquePointer, _ configuration: TLSConfiguration, serverName: String?) throws(TLSError) {
        if configuration.transport == .datagram {
            // A memory BIO has no path MTU to query: the configuration says it.
            callaudio_ssl_set_no_query_mtu(ssl)
            // The whole datagram (UDP payload): OpenSSL subtracts the record header and the
            // cipher's expansion itself. It returns the MTU set, or 0.
            guard callaudio_ssl_set_mtu(ssl, configuration.maximumDatagramSize) > 0 else {
                throw TLSError.drain("SSL_set_mtu", fallback: .invalidConfiguration)
            }
            callaudio_dtls_set_fast_timer(ssl)
        }
        guard configuration.role == .client else {
            SSL_set_accept_state(ssl)
            return
        }
        SSL_set_connect_state(ssl)
        guard let name = serverName else { return }
        let isAddress = TLSIdentity.isIPAddress(name)
        // SNI carries host names only (RFC 6066, section 3).
        if !isAddress, callaudio_ssl_set_tlsext_host_name(ssl, name) != 1 {
            throw TLSError.drain("SSL_set_tlsext_host_name '\(name)'", fallback: .invalidConfiguration)
        }
        guard configuration.verifyPeer, configuration.trust != .none else { return }
        let parameters = SSL_get0_param(ssl)
        let ok = isAddress ? X509_VERIFY_PARAM_set1_ip_asc(parameters, name) : X509_VERIFY_PARAM_set1_host(parameters, name, 0)
        guard ok == 1 else { throw TLSError.drain("X509_VERIFY_PARAM_set1_host '\(name)'", fallback: .invalidConfiguration) }
    }

    // MARK: - Ciphertext in and out

    /// Takes ciphertext from the network: bytes of the stream, or exactly one datagram.
    ///
    /// - Throws: ``TLSError/bufferLimitExceeded`` (nothing taken) when the session already holds
    ///   ``TLSConfiguration/maximumBufferedBytes`` less than `ciphertext.count` unconsumed; call
    ///   ``advance()`` or ``readAvailable()`` to consume it. ``TLSError/closed`` after the end.
    public mutating func receive(_ ciphertext: some Collection<UInt8>) throws(TLSError) {
        guard state == .handshaking || state == .established else { throw TLSError.closed.asked("receive") }
        guard !ciphertext.isEmpty else { return }
        guard buffer.incomingBytes + ciphertext.count <= limit else {
            throw TLSError.bufferLimitExceeded.asked("receive \(ciphertext.count) bytes with \(buffer.incomingBytes) held (limit \(limit))")
        }
        buffer.append(Array(ciphertext))
    }

    /// The next ciphertext to send: everything pending for a stream, the next datagram for
    /// DTLS; nil when there is nothing. Call until nil after every other call.
    public mutating func takeOutgoing() -> [UInt8]? { buffer.takeOutgoing() }

    /// Ciphertext waiting in ``takeOutgoing()``, in bytes.
    public var outgoingByteCount: Int { buffer.outgoingBytes }

    // MARK: - Handshake and data

    /// Drives the handshake with what has been received and returns the state after. Once
    /// established it does nothing: ``readAvailable()`` also handles post-handshake messages.
    ///
    /// - Throws: the handshake's failure, e.g. ``TLSError/certificateVerifyFailed`` with
    ///   ``TLSError/verifyResult`` and its text ("certificate verify failed: hostname mismatch"),
    ///   ``TLSError/unsupportedProtocol``, ``TLSError/wrongVersionNumber`` for garbage. The
    ///   session is then ``TLSSessionState/failed``.
    @discardableResult
    public mutating func advance() throws(TLSError) -> TLSSessionState {
        guard state == .handshaking else { return state }
        ERR_clear_error()
        let result = SSL_do_handshake(ssl)
        if result == 1 {
            state = .established
            return state
        }
        try settle(result, "SSL_do_handshake")
        return state
    }

    /// Encrypts `plaintext` into outgoing ciphertext (as many records as it takes; over DTLS
    /// each record must fit a datagram, so keep each write below the datagram size).
    ///
    /// - Throws: ``TLSError/notEstablished`` during the handshake, ``TLSError/closed`` after the
    ///   end, ``TLSError/bufferLimitExceeded`` while more than the limit waits to be taken.
    public mutating func write(_ plaintext: some Collection<UInt8>) throws(TLSError) {
        guard state != .handshaking else { throw TLSError.notEstablished.asked("write") }
        guard state == .established else { throw TLSError.closed.asked("write") }
        guard buffer.outgoingBytes <= limit else {
            throw TLSError.bufferLimitExceeded.asked("write with \(buffer.outgoingBytes) bytes not yet taken (limit \(limit))")
        }
        let bytes = Array(plaintext)
        var offset = 0
        while offset < bytes.count {
            ERR_clear_error()
            let n = bytes.withUnsafeBytes { SSL_write(ssl, $0.baseAddress! + offset, Int32(bytes.count - offset)) }
            if n <= 0 {
                try settle(n, "SSL_write")
                throw TLSError.unknown.asked("SSL_write made no progress")  // our BIO never refuses a write
            }
            offset += Int(n)
        }
    }

    /// Decrypts what has been received into `target`: returns the bytes written, 0 when no
    /// complete record is waiting (or the peer closed: see ``state``).
    public mutating func read(into target: UnsafeMutableRawBufferPointer) throws(TLSError) -> Int {
        if state == .handshaking, try advance() != .established { return 0 }
        guard state == .established, target.count > 0 else { return 0 }
        ERR_clear_error()
        let n = SSL_read(ssl, target.baseAddress, Int32(min(target.count, Int(Int32.max))))
        if n > 0 { return Int(n) }
        try settle(n, "SSL_read")
        return 0
    }

    /// Decrypts everything received so far (allocates; at most what was received).
    public mutating func readAvailable() throws(TLSError) -> [UInt8] {
        var plaintext: [UInt8] = []
        let chunk = UnsafeMutableRawBufferPointer.allocate(byteCount: 16 * 1024, alignment: 1)
        defer { chunk.deallocate() }
        while true {
            let n = try read(into: chunk)
            if n == 0 { return plaintext }
            plaintext += UnsafeRawBufferPointer(rebasing: chunk[0..<n])
        }
    }

    /// Sends close_notify (take it from ``takeOutgoing()``); the session is closed after.
    public mutating func close() {
        if state == .established {
            ERR_clear_error()
            _ = SSL_shutdown(ssl)
            ERR_clear_error()
        }
        if state != .failed { state = .closed }
    }

    /// Maps a non-positive result of SSL_do_handshake/SSL_read/SSL_write to the state and,
    /// for a failure, the thrown error; returns when OpenSSL only waits for more input.
    private mutating func settle(_ result: Int32, _ what: String) throws(TLSError) {
        switch SSL_get_error(ssl, result) {
        case SSL_ERROR_WANT_READ, SSL_ERROR_WANT_WRITE:
            return
        case SSL_ERROR_ZERO_RETURN:
            // The peer's close_notify: answer it, as TLS asks, and stop.
            _ = SSL_shutdown(ssl)
            ERR_clear_error()
            state = .closed
        default:
            state = .failed
            let verify = Int(SSL_get_verify_result(ssl))
            throw TLSError.drain(what, verifyResult: verify == Int(X509_V_OK) ? nil : verify)
        }
    }
}

// A session may be handed to another thread: it is non-copyable, so one owner uses it at a time.
extension TLSSession: @unchecked Sendable {}
