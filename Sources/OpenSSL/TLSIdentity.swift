import COpenSSL
import Glibc

/// A certificate and its private key: generated at run time (a self-signed ECDSA P-256
/// certificate, as DTLS-SRTP endpoints use) or loaded from PEM.
///
/// Owns its `X509` and `EVP_PKEY` once and never changes them; a context that uses the identity
/// takes its own references, so the identity may go away first.
///
/// Thread safety: immutable after creation; safe to share between threads.
public final class TLSIdentity: @unchecked Sendable {
    let certificate: OpaquePointer
    let privateKey: OpaquePointer

    private init(certificate: OpaquePointer, privateKey: OpaquePointer) {
        self.certificate = certificate
        self.privateKey = privateKey
    }

    deinit {
        X509_free(certificate)
        EVP_PKEY_free(privateKey)
    }

    /// Generates a P-256 key and a self-signed certificate for it: version 3, a random 63-bit
    /// serial, valid from an hour ago (for clock skew) for `validityDays`, subject and issuer
    /// `CN=commonName`, and `commonName` plus `alternativeNames` as subject alternative names
    /// (IP addresses as `IP:`, the rest as `DNS:`) so host-name verification can match them.
    public static func generateSelfSigned(commonName: String, alternativeNames: [String] = [],
                                          validityDays: Int = 30) throws(TLSError) -> TLSIdentity {
        guard let key = callaudio_ec_p256_generate() else { throw TLSError.drain("EVP_EC_gen P-256") }
        guard let x509 = X509_new() else {
            EVP_PKEY_free(key)
            throw TLSError.drain("X509_new")
        }
        let identity = TLSIdentity(certificate: x509, privateKey: key)
        var serial: UInt64 = 0
        guard withUnsafeMutableBytes(of: &serial, { RAND_bytes($0.baseAddress, 8) }) == 1 else {
            throw TLSError.drain("RAND_bytes")
        }
        let name = X509_get_subject_name(x509)
        let subjectNames = ([commonName] + alternativeNames).map { isIPAddress($0) ? "IP:\($0)" : "DNS:\($0)" }
        guard X509_set_version(x509, 2) == 1,
              ASN1_INTEGER_set_uint64(X509_get_serialNumber(x509), serial >> 1) == 1,  // positive, nonzero in practice
              X509_gmtime_adj(X509_getm_notBefore(x509), -3600) != nil,
              X509_gmtime_adj(X509_getm_notAfter(x509), validityDays * 86400) != nil,
              X509_set_pubkey(x509, key) == 1,
              callaudio_x509_name_add_text(name, "CN", commonName) == 1,
              X509_set_issuer_name(x509, name) == 1,
              callaudio_x509_add_extension(x509, NID_subject_alt_name, subjectNames.joined(separator: ",")) == 1,
              X509_sign(x509, key, EVP_sha256()) > 0
        else { throw TLSError.drain("self-signed certificate for '\(commonName)'") }
        return identity
    }

    /// Loads a certificate (the first of the file) and its private key from PEM text.
    ///
    /// - Throws: ``TLSError/keyMismatch`` when the key is not the certificate's.
    public convenience init(certificatePEM: String, privateKeyPEM: String) throws(TLSError) {
        let certificate = try Self.readPEM(certificatePEM, what: "PEM_read_bio_X509") { PEM_read_bio_X509($0, nil, nil, nil) }
        let key: OpaquePointer
        do {
            key = try Self.readPEM(privateKeyPEM, what: "PEM_read_bio_PrivateKey") { PEM_read_bio_PrivateKey($0, nil, nil, nil) }
        } catch {
            X509_free(certificate)
            throw error
        }
        self.init(certificate: certificate, privateKey: key)
        guard X509_check_private_key(certificate, key) == 1 else { throw TLSError.drain("X509_check_private_key").asKeyMismatch() }
    }

    /// Loads a certificate and its private key from PEM files.
    public convenience init(certificateFile: String, privateKeyFile: String) throws(TLSError) {
        let certificate = try Self.readFile(certificateFile)
        let key = try Self.readFile(privateKeyFile)
        try self.init(certificatePEM: certificate, privateKeyPEM: key)
    }

    /// The certificate as PEM (`-----BEGIN CERTIFICATE-----`), e.g. for a peer's CA file.
    public var certificatePEM: String {
        Self.writePEM { PEM_write_bio_X509($0, certificate) }
    }

    /// The private key as unencrypted PKCS #8 PEM. Whoever writes it to disk protects the file.
    public var privateKeyPEM: String {
        Self.writePEM { PEM_write_bio_PrivateKey($0, privateKey, nil, nil, 0, nil, nil) }
    }

    /// The certificate's digest (DER encoding) under `algorithm`.
    public func fingerprint(_ algorithm: TLSFingerprintAlgorithm = .sha256) -> [UInt8] {
        TLSFingerprintAlgorithm.digest(certificate, algorithm)
    }

    /// The SHA-256 fingerprint as SDP's `a=fingerprint` writes it: `sha-256 AB:CD:...` without
    /// the algorithm, i.e. upper-case hex pairs joined by colons.
    public var sdpFingerprint: String { TLSFingerprintAlgorithm.format(fingerprint(.sha256)) }

    // MARK: - PEM

    private static func readFile(_ path: String) throws(TLSError) -> String {
        guard let file = fopen(path, "rb") else {
            throw TLSError.fileNotReadable.asked("'\(path)' (\(String(cString: strerror(errno))))")
        }
        defer { fclose(file) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        // A PEM identity is a few kilobytes: refuse anything past 1 MiB rather than read a device.
        while bytes.count <= 1 << 20 {
            let n = chunk.withUnsafeMutableBytes { fread($0.baseAddress, 1, 4096, file) }
            if n == 0 { break }
            bytes += chunk[0..<n]
        }
        guard bytes.count <= 1 << 20 else { throw TLSError.fileNotReadable.asked("'\(path)' is over 1 MiB") }
        return String(decoding: bytes, as: UTF8.self)
    }

    private static func readPEM(_ text: String, what: String,
                                _ read: (OpaquePointer) -> OpaquePointer?) throws(TLSError) -> OpaquePointer {
        var bytes = Array(text.utf8)
        let object: OpaquePointer? = bytes.withUnsafeMutableBytes { raw in
            guard let bio = BIO_new_mem_buf(raw.baseAddress, Int32(raw.count)) else { return nil }
            defer { BIO_free(bio) }
            return read(bio)
        }
        guard let object else { throw TLSError.drain(what) }
        return object
    }

    private static func writePEM(_ write: (OpaquePointer) -> Int32) -> String {
        guard let bio = BIO_new(BIO_s_mem()) else { return "" }
        defer { BIO_free(bio) }
        guard write(bio) == 1 else { ERR_clear_error(); return "" }
        var data: UnsafeMutablePointer<CChar>?
        let count = callaudio_bio_get_mem_data(bio, &data)
        guard let data, count > 0 else { return "" }
        return String(decoding: UnsafeRawBufferPointer(start: data, count: count), as: UTF8.self)
    }

    static func isIPAddress(_ text: String) -> Bool {
        var address = in6_addr()
        return inet_pton(AF_INET, text, &address) == 1 || inet_pton(AF_INET6, text, &address) == 1
    }
}

/// The digests a certificate fingerprint is taken with (RFC 8122 names them `sha-256`, ...).
///
/// Thread safety: a value type; safe to use from any thread.
public enum TLSFingerprintAlgorithm: String, Sendable, Hashable, CaseIterable {
    case sha256 = "sha-256"
    case sha384 = "sha-384"
    case sha512 = "sha-512"

    static func digest(_ certificate: OpaquePointer, _ algorithm: TLSFingerprintAlgorithm) -> [UInt8] {
        let md = switch algorithm {
        case .sha256: EVP_sha256()
        case .sha384: EVP_sha384()
        case .sha512: EVP_sha512()
        }
        var digest = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        guard X509_digest(certificate, md, &digest, &length) == 1 else { ERR_clear_error(); return [] }
        return Array(digest[0..<Int(length)])
    }

    /// Upper-case hex pairs joined by colons, as SDP's `a=fingerprint` writes a digest.
    public static func format(_ digest: [UInt8]) -> String {
        let hex = Array("0123456789ABCDEF")
        return digest.map { String([hex[Int($0 >> 4)], hex[Int($0 & 15)]]) }.joined(separator: ":")
    }
}

extension TLSError {
    /// The same failure under the wrapper's readable name for a key that is not the certificate's.
    func asKeyMismatch() -> TLSError {
        TLSError(code: TLSError.keyMismatch.code, queue: queue, verifyResult: verifyResult, message: message)
    }
}
