import COpenSSL

/// An error from OpenSSL or from the wrapper's own checks: the codes drained from OpenSSL's
/// error queue, the X509 verification result when a certificate was refused, and a message
/// that says what was asked (`SSL_CTX_use_PrivateKey_file 'key.pem'`).
///
/// ``code`` is the root cause: the first code OpenSSL queued (the innermost failure), reduced
/// to its library and reason, or one of the wrapper's codes (library `ERR_LIB_USER`) for what
/// OpenSSL does not report itself. Equality compares ``code`` only, so
/// `error == .certificateVerifyFailed` holds whatever the detail.
///
/// Thread safety: a value type; safe to use from any thread.
public struct TLSError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The root cause as a packed OpenSSL code (library and reason; no function or flags).
    public let code: UInt
    /// Every code drained from OpenSSL's error queue, earliest (innermost) first; empty for
    /// the wrapper's own errors.
    public let queue: [UInt]
    /// The X509 verification result (`X509_V_ERR_...`) when the peer's certificate was refused.
    public let verifyResult: Int?
    /// What was asked and what went wrong.
    public let message: String

    public init(code: UInt, queue: [UInt] = [], verifyResult: Int? = nil, message: String) {
        self.code = code
        self.queue = queue
        self.verifyResult = verifyResult
        self.message = message
    }

    public var description: String { "TLS error \(Self.hex(code)) (\(message))" }

    public static func == (a: TLSError, b: TLSError) -> Bool { a.code == b.code }

    // OpenSSL's own reasons that callers tell apart.
    /// The peer's certificate chain or name did not verify (``verifyResult`` says why).
    public static let certificateVerifyFailed = ssl(SSL_R_CERTIFICATE_VERIFY_FAILED, "certificate verify failed")
    /// The peer offered only protocol versions below the minimum.
    public static let unsupportedProtocol = ssl(SSL_R_UNSUPPORTED_PROTOCOL, "unsupported protocol")
    /// What arrived is not a TLS record of an acceptable version (garbage, or another protocol).
    public static let wrongVersionNumber = ssl(SSL_R_WRONG_VERSION_NUMBER, "wrong version number")
    /// The private key does not belong to the certificate.
    public static let keyMismatch = TLSError(code: callaudio_err_pack(ERR_LIB_X509, X509_R_KEY_VALUES_MISMATCH),
                                             message: "key values mismatch")

    // The wrapper's own reasons (library ERR_LIB_USER).
    /// A configuration that cannot work (no certificate for a server, an option for the wrong transport).
    public static let invalidConfiguration = wrapper(1, "invalid configuration")
    /// A certificate, key or CA file that cannot be read.
    public static let fileNotReadable = wrapper(2, "file not readable")
    /// More ciphertext than the session buffers (``TLSConfiguration/maximumBufferedBytes``).
    public static let bufferLimitExceeded = wrapper(3, "buffer limit exceeded")
    /// The session is closed (close_notify sent or received) or failed earlier.
    public static let closed = wrapper(4, "session closed")
    /// The call needs an established session (application data before the handshake ends).
    public static let notEstablished = wrapper(5, "handshake not complete")
    /// OpenSSL failed without saying why (an empty error queue).
    public static let unknown = wrapper(6, "unknown OpenSSL failure")

    static func ssl(_ reason: Int32, _ text: String) -> TLSError {
        TLSError(code: callaudio_err_pack(ERR_LIB_SSL, reason), message: text)
    }

    static func wrapper(_ reason: Int32, _ text: String) -> TLSError {
        TLSError(code: callaudio_err_pack(ERR_LIB_USER, reason), message: text)
    }

    /// This wrapper-level error with what was asked prepended.
    func asked(_ what: String) -> TLSError {
        TLSError(code: code, queue: queue, verifyResult: verifyResult, message: "\(what): \(message)")
    }

    /// Drains OpenSSL's error queue (of this thread) into an error about `what`; when the queue
    /// is empty the error is `fallback`.
    static func drain(_ what: String, fallback: TLSError = .unknown, verifyResult: Int? = nil) -> TLSError {
        var codes: [UInt] = []
        var texts: [String] = []
        while true {
            var data: UnsafePointer<CChar>?
            var flags: Int32 = 0
            let packed = ERR_get_error_all(nil, nil, nil, &data, &flags)
            if packed == 0 { break }
            codes.append(packed)
            var text = ERR_reason_error_string(packed).map { String(cString: $0) } ?? "reason \(callaudio_err_get_reason(packed))"
            if flags & ERR_TXT_STRING != 0, let data, data.pointee != 0 { text += " (\(String(cString: data)))" }
            if !texts.contains(text) { texts.append(text) }
        }
        var message = texts.isEmpty ? fallback.message : texts.joined(separator: "; ")
        // The verify result is the reason only when verification is what failed.
        let verifyFailed = codes.contains {
            callaudio_err_get_lib($0) == ERR_LIB_SSL && callaudio_err_get_reason($0) == SSL_R_CERTIFICATE_VERIFY_FAILED
        }
        let verifyResult = verifyFailed ? verifyResult : nil
        if let verifyResult, verifyResult != Int(X509_V_OK) {
            let reason = String(cString: X509_verify_cert_error_string(verifyResult))
            message = message.replacing("certificate verify failed", with: "certificate verify failed: \(reason)", maxReplacements: 1)
            if !message.contains(reason) { message += ": \(reason)" }
        }
        guard let first = codes.first else {
            return TLSError(code: fallback.code, verifyResult: verifyResult, message: "\(what): \(message)")
        }
        let root = callaudio_err_pack(callaudio_err_get_lib(first), callaudio_err_get_reason(first))
        return TLSError(code: root, queue: codes, verifyResult: verifyResult, message: "\(what): \(message)")
    }

    static func hex(_ value: UInt) -> String {
        let digits = String(value, radix: 16, uppercase: true)
        return "0x" + String(repeating: "0", count: max(0, 8 - digits.count)) + digits
    }
}
