import COpenSSL
import Glibc

/// An OpenSSL `SSL_CTX` made from a ``TLSConfiguration``: the protocol, the trust store, our
/// certificate and key. Every check happens here, so a bad configuration fails once, when the
/// context is made, rather than at each connection.
///
/// Thread safety: the `SSL_CTX` is configured completely in `init` and never changed after,
/// so one context may be shared by any number of threads making sessions at once.
public final class TLSContext: @unchecked Sendable {
    let handle: OpaquePointer
    /// The configuration the context was made from.
    public let configuration: TLSConfiguration

    /// Makes the context.
    ///
    /// - Throws: ``TLSError/fileNotReadable`` for a certificate, key or CA file that cannot be
    ///   read, ``TLSError/keyMismatch`` for a key that is not the certificate's,
    ///   ``TLSError/invalidConfiguration`` for a server without a certificate, SRTP profiles
    ///   over a stream, TLS 1.3 over datagrams or a datagram size below 256 bytes, and OpenSSL's
    ///   own reason for a file it cannot parse.
    public init(_ configuration: TLSConfiguration) throws(TLSError) {
        ERR_clear_error()  // a stale entry from elsewhere on this thread would be blamed on us
        let datagram = configuration.transport == .datagram
        guard let handle = SSL_CTX_new(datagram ? DTLS_method() : TLS_method()) else { throw TLSError.drain("SSL_CTX_new") }
        self.handle = handle
        self.configuration = configuration
        try Self.check(configuration)
        try setProtocol(configuration)
        try setTrust(configuration)
        try setIdentity(configuration)
        if let profiles = configuration.srtpProfiles, SSL_CTX_set_tlsext_use_srtp(handle, profiles) != 0 {
            // Unusually, 0 is success here.
            throw TLSError.drain("SSL_CTX_set_tlsext_use_srtp '\(profiles)'", fallback: .invalidConfiguration)
        }
    }

    deinit { SSL_CTX_free(handle) }

    /// A new connection. `serverName` (a client's only) overrides the configuration's.
    public func makeSession(serverName: String? = nil) throws(TLSError) -> TLSSession {
        try TLSSession(context: self, serverName: serverName ?? configuration.serverName)
    }

    private static func check(_ configuration: TLSConfiguration) throws(TLSError) {
        let datagram = configuration.transport == .datagram
        if configuration.role == .server, configuration.identity == nil, configuration.certificateChainFile == nil {
            throw TLSError.invalidConfiguration.asked("a server needs a certificate and key (identity or certificateChainFile)")
        }
        if (configuration.certificateChainFile == nil) != (configuration.privateKeyFile == nil), configuration.identity == nil {
            throw TLSError.invalidConfiguration.asked("certificateChainFile and privateKeyFile go together")
        }
        if configuration.srtpProfiles != nil, !datagram {
            throw TLSError.invalidConfiguration.asked("SRTP profiles need the datagram transport (DTLS)")
        }
        if datagram, configuration.minimumVersion == .v1_3 {
            throw TLSError.invalidConfiguration.asked("OpenSSL 3.0 has no DTLS 1.3")
        }
        if datagram, configuration.maximumDatagramSize < 256 {
            throw TLSError.invalidConfiguration.asked("maximumDatagramSize \(configuration.maximumDatagramSize) is below 256")
        }
        if configuration.maximumBufferedBytes < 32 * 1024 {
            // A full record (16 KiB and its overhead) must fit, or a legitimate peer could stall.
            throw TLSError.invalidConfiguration.asked("maximumBufferedBytes \(configuration.maximumBufferedBytes) is below 32 KiB")
        }
    }

    private func setProtocol(_ configuration: TLSConfiguration) throws(TLSError) {
        let minimum = switch (configuration.transport, configuration.minimumVersion) {
        case (.datagram, _): DTLS1_2_VERSION
        case (.stream, .v1_2): TLS1_2_VERSION
        case (.stream, .v1_3): TLS1_3_VERSION
        }
        guard callaudio_ssl_ctx_set_min_proto_version(handle, minimum) == 1 else {
            throw TLSError.drain("SSL_CTX_set_min_proto_version")
        }
        // Renegotiation is an attack surface a call never needs; certificate lists are capped
        // (OpenSSL's default is 100 KiB) so a peer's handshake costs bounded memory.
        callaudio_ssl_ctx_disable_renegotiation(handle)
        callaudio_ssl_ctx_set_max_cert_list(handle, 64 * 1024)
        // No TLS 1.3 session tickets: sessions are not resumed, so they would be bytes for nothing.
        _ = SSL_CTX_set_num_tickets(handle, 0)
    }

    private func setTrust(_ configuration: TLSConfiguration) throws(TLSError) {
        switch configuration.trust {
        case .system:
            guard SSL_CTX_set_default_verify_paths(handle) == 1 else { throw TLSError.drain("SSL_CTX_set_default_verify_paths") }
        case .caFile(let path):
            try Self.checkReadable(path, "CA file")
            guard SSL_CTX_load_verify_locations(handle, path, nil) == 1 else {
                throw TLSError.drain("SSL_CTX_load_verify_locations '\(path)'")
            }
        case .none:
            break
        }
        var mode = SSL_VERIFY_NONE
        if configuration.verifyPeer {
            mode = SSL_VERIFY_PEER | (configuration.role == .server ? SSL_VERIFY_FAIL_IF_NO_PEER_CERT : 0)
        }
        if configuration.trust == .none, configuration.verifyPeer {
            // The peer must present a certificate, but any will do: its fingerprint is checked
            // by the caller (DTLS-SRTP's a=fingerprint).
            SSL_CTX_set_verify(handle, mode) { _, _ in 1 }
        } else {
            SSL_CTX_set_verify(handle, mode, nil)
        }
    }

    private func setIdentity(_ configuration: TLSConfiguration) throws(TLSError) {
        if let identity = configuration.identity {
            guard SSL_CTX_use_certificate(handle, identity.certificate) == 1 else { throw TLSError.drain("SSL_CTX_use_certificate") }
            guard SSL_CTX_use_PrivateKey(handle, identity.privateKey) == 1 else {
                throw TLSError.drain("SSL_CTX_use_PrivateKey").asKeyMismatch()
            }
        } else if let chain = configuration.certificateChainFile, let key = configuration.privateKeyFile {
            try Self.checkReadable(chain, "certificate chain")
            try Self.checkReadable(key, "private key")
            guard SSL_CTX_use_certificate_chain_file(handle, chain) == 1 else {
                throw TLSError.drain("SSL_CTX_use_certificate_chain_file '\(chain)'")
            }
            guard SSL_CTX_use_PrivateKey_file(handle, key, SSL_FILETYPE_PEM) == 1 else {
                let error = TLSError.drain("SSL_CTX_use_PrivateKey_file '\(key)'")
                // OpenSSL checks the key against the certificate as it loads it.
                throw error.queue.contains { callaudio_err_get_reason($0) == X509_R_KEY_VALUES_MISMATCH } ? error.asKeyMismatch() : error
            }
        } else {
            return
        }
        guard SSL_CTX_check_private_key(handle) == 1 else {
            throw TLSError.drain("SSL_CTX_check_private_key").asKeyMismatch()
        }
    }

    /// OpenSSL reports a missing file as a chain of system and BIO errors; saying it plainly
    /// (with errno's text) serves the person who mistyped a path better.
    private static func checkReadable(_ path: String, _ what: String) throws(TLSError) {
        guard access(path, R_OK) == 0 else {
            throw TLSError.fileNotReadable.asked("\(what) '\(path)' (\(String(cString: strerror(errno))))")
        }
    }
}
