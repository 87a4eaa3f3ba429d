import COpenSSL

/// What the handshake settled: the version, the cipher, the peer's certificate.
extension TLSSession {
    /// The negotiated protocol version ("TLSv1.3", "DTLSv1.2"); nil before the handshake ends.
    public var protocolVersion: String? {
        guard state == .established || state == .closed else { return nil }
        return SSL_get_version(ssl).map { String(cString: $0) }
    }

    /// The negotiated cipher suite as OpenSSL names it ("TLS_AES_256_GCM_SHA384",
    /// "ECDHE-ECDSA-AES128-GCM-SHA256"); nil before the handshake ends.
    public var cipher: String? {
        guard state == .established || state == .closed, SSL_get_current_cipher(ssl) != nil else { return nil }
        return callaudio_ssl_get_cipher_name(ssl).map { String(cString: $0) }
    }

    /// The digest of the certificate the peer presented (DER), to compare with the SDP's
    /// `a=fingerprint`; nil when it presented none.
    public func peerCertificateFingerprint(_ algorithm: TLSFingerprintAlgorithm = .sha256) -> [UInt8]? {
        guard let certificate = SSL_get1_peer_certificate(ssl) else { return nil }
        defer { X509_free(certificate) }
        return TLSFingerprintAlgorithm.digest(certificate, algorithm)
    }

    /// The X509 verification result's text for the peer's certificate ("ok", "self-signed
    /// certificate", "hostname mismatch"); meaningful once the peer's certificate has arrived.
    public var peerVerification: String {
        String(cString: X509_verify_cert_error_string(SSL_get_verify_result(ssl)))
    }
}

/// DTLS: the handshake's retransmission timer, the SRTP profile and the keying material.
extension TLSSession {
    /// When the handshake's current flight is due for retransmission if nothing arrives, on
    /// the continuous clock; nil when no timer runs (TLS, or no flight outstanding). Call
    /// ``handleTimeout()`` once it has passed. The wait starts at 100 ms and doubles up to 60 s
    /// at each retransmission.
    public var retransmissionDeadline: ContinuousClock.Instant? {
        guard isDatagram else { return nil }
        var microseconds: Int64 = 0
        guard callaudio_dtls_get_timeout(ssl, &microseconds) == 1 else { return nil }
        return .now + .microseconds(microseconds)
    }

    /// Retransmits the last flight when its timer has expired (take it from ``takeOutgoing()``).
    /// Returns whether anything was retransmitted.
    ///
    /// - Throws: when OpenSSL gives up (too many retransmissions); the session is then failed.
    @discardableResult
    public mutating func handleTimeout() throws(TLSError) -> Bool {
        guard isDatagram, state == .handshaking || state == .established else { return false }
        ERR_clear_error()
        let result = callaudio_dtls_handle_timeout(ssl)
        if result < 0 {
            state = .failed
            throw TLSError.drain("DTLSv1_handle_timeout")
        }
        return result > 0
    }

    /// The SRTP protection profile both sides chose ("SRTP_AES128_CM_SHA1_80"), nil when none
    /// was negotiated.
    public var selectedSRTPProfile: String? {
        guard let profile = SSL_get_selected_srtp_profile(ssl), let name = profile.pointee.name else { return nil }
        return String(cString: name)
    }

    /// Keying material exported from the session's master secret (RFC 5705), e.g. for
    /// DTLS-SRTP the label "EXTRACTOR-dtls_srtp" and twice the key and salt lengths (RFC 5764).
    ///
    /// - Throws: ``TLSError/notEstablished`` before the handshake ends.
    public func exportKeyingMaterial(label: String, length: Int, context: [UInt8]? = nil) throws(TLSError) -> [UInt8] {
        guard state == .established else { throw TLSError.notEstablished.asked("SSL_export_keying_material") }
        guard length > 0, length <= 4096 else {
            throw TLSError.invalidConfiguration.asked("SSL_export_keying_material length \(length) (1...4096)")
        }
        var material = [UInt8](repeating: 0, count: length)
        let labelBytes = Array(label.utf8)
        ERR_clear_error()
        let ok = material.withUnsafeMutableBufferPointer { out in
            labelBytes.withUnsafeBufferPointer { labelPointer in
                (context ?? []).withUnsafeBufferPointer { contextPointer in
                    labelPointer.withMemoryRebound(to: CChar.self) { labelChars in
                        SSL_export_keying_material(ssl, out.baseAddress, length, labelChars.baseAddress, labelBytes.count,
                                                   contextPointer.baseAddress, contextPointer.count, context == nil ? 0 : 1)
                    }
                }
            }
        }
        guard ok == 1 else { throw TLSError.drain("SSL_export_keying_material '\(label)'") }
        return material
    }
}
