/// What a ``TLSContext`` is made from: the role, the transport (TLS over a stream, DTLS over
/// datagrams), whom to trust, whether to verify the peer, and our own certificate.
///
/// The minimum protocol version is TLS 1.2 (DTLS 1.2 over datagrams) and cannot be lowered.
/// Nothing is checked here: an invalid configuration (a missing file, a key that does not
/// match its certificate, a server without a certificate) throws when the context is made.
///
/// Thread safety: a value type; safe to use from any thread.
public struct TLSConfiguration: Sendable {
    /// Which side of the handshake.
    public enum Role: Sendable, Hashable {
        case client, server
    }

    /// What carries the records.
    public enum Transport: Sendable, Hashable {
        /// TLS over a byte stream (TCP: SIP over TLS).
        case stream
        /// DTLS 1.2 over datagrams (UDP: DTLS-SRTP); each ``TLSSession/receive(_:)`` is one
        /// datagram and each ``TLSSession/takeOutgoing()`` returns one.
        case datagram
    }

    /// The certificates a peer's chain must lead to.
    public enum Trust: Sendable, Hashable {
        /// OpenSSL's default verify paths (the system's CA store).
        case system
        /// The certificates of a PEM file.
        case caFile(String)
        /// No chain verification: any certificate is accepted. Only for DTLS-SRTP, where the
        /// certificate's fingerprint is checked against the SDP's `a=fingerprint` instead, and
        /// for tests.
        case none
    }

    /// The lowest version a session accepts.
    public enum MinimumVersion: Sendable, Hashable {
        /// TLS 1.2 or DTLS 1.2.
        case v1_2
        /// TLS 1.3 (streams only: OpenSSL 3.0 has no DTLS 1.3).
        case v1_3
    }

    public var role: Role
    public var transport: Transport
    public var minimumVersion: MinimumVersion = .v1_2
    /// Whom to trust when verifying the peer's chain.
    public var trust: Trust = .system
    /// Whether the peer must present a certificate that verifies against ``trust`` (and, for a
    /// client, matches the server name). With ``Trust/none`` the peer must still present one
    /// (its fingerprint is then the caller's to check). A client defaults to `true`; a server
    /// to `false` (it does not ask for client certificates unless this is set).
    public var verifyPeer: Bool
    /// Our certificate chain as a PEM file (leaf first), with ``privateKeyFile``.
    public var certificateChainFile: String?
    /// Our private key as a PEM file.
    public var privateKeyFile: String?
    /// Our certificate and key in memory; used instead of the files when set.
    public var identity: TLSIdentity?
    /// For a client: the server's host name or IP address, sent as SNI (host names only) and
    /// required in the server's certificate when ``verifyPeer`` is set. A session can override it.
    public var serverName: String?
    /// For DTLS: the SRTP protection profiles to offer or accept, most preferred first, as
    /// OpenSSL names them (`"SRTP_AES128_CM_SHA1_80:SRTP_AEAD_AES_128_GCM"`).
    public var srtpProfiles: String?
    /// For DTLS: the largest datagram a session sends (the path MTU less IP and UDP headers).
    public var maximumDatagramSize: Int = 1200
    /// The most ciphertext a session holds that OpenSSL has not consumed yet, and the most it
    /// lets pile up for sending: ``TLSSession/receive(_:)`` and ``TLSSession/write(_:)`` throw
    /// ``TLSError/bufferLimitExceeded`` beyond it, so a hostile peer costs bounded memory.
    public var maximumBufferedBytes: Int = 256 * 1024

    /// A configuration for `role` over `transport`: trust the system's CAs, verify the peer when
    /// a client.
    public init(role: Role, transport: Transport = .stream) {
        self.role = role
        self.transport = transport
        self.verifyPeer = role == .client
    }

    /// A TLS or DTLS client that verifies the server against `trust` and `serverName`.
    public static func client(serverName: String?, trust: Trust = .system, transport: Transport = .stream) -> TLSConfiguration {
        var configuration = TLSConfiguration(role: .client, transport: transport)
        configuration.serverName = serverName
        configuration.trust = trust
        return configuration
    }

    /// A TLS or DTLS server presenting the certificate chain and key of two PEM files.
    public static func server(certificateChainFile: String, privateKeyFile: String,
                              transport: Transport = .stream) -> TLSConfiguration {
        var configuration = TLSConfiguration(role: .server, transport: transport)
        configuration.certificateChainFile = certificateChainFile
        configuration.privateKeyFile = privateKeyFile
        return configuration
    }

    /// A TLS or DTLS server presenting an identity held in memory.
    public static func server(identity: TLSIdentity, transport: Transport = .stream) -> TLSConfiguration {
        var configuration = TLSConfiguration(role: .server, transport: transport)
        configuration.identity = identity
        return configuration
    }
}
