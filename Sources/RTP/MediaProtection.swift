public import OpenSSL
public import Platform
public import SRTP
import Synchronization

/// How an ``RTPSession`` protects its packets.
///
/// Thread safety: a value type; safe to use from any thread. Its description names the
/// mechanism, never a key.
public enum MediaProtection: Sendable, CustomStringConvertible {
    /// RTP and RTCP in clear.
    case clear
    /// SRTP and SRTCP with keys known at setup (SDES): `local` protects what we send, `remote`
    /// unprotects what the peer sends.
    case srtp(local: SRTPMasterKey, remote: SRTPMasterKey)
    /// SRTP and SRTCP keyed by a DTLS handshake on the RTP port (RFC 5764): nothing is sent or
    /// accepted before it completes.
    case dtls(DTLSMediaSetup)

    /// Whether packets are encrypted (or wait for keys to be).
    public var isEncrypted: Bool {
        if case .clear = self { false } else { true }
    }

    public var description: String {
        switch self {
        case .clear: "clear"
        case let .srtp(local, _): "SRTP \(local.profile.sdesName)"
        case let .dtls(setup): "DTLS-SRTP (\(setup.isClient ? "client" : "server"))"
        }
    }
}

/// A certificate digest the DTLS peer must present (from its `a=fingerprint`).
///
/// Thread safety: a value type; safe to use from any thread.
public struct DTLSFingerprint: Sendable, Equatable {
    public var algorithm: TLSFingerprintAlgorithm
    public var digest: [UInt8]

    public init(algorithm: TLSFingerprintAlgorithm, digest: [UInt8]) {
        self.algorithm = algorithm
        self.digest = digest
    }
}

/// The DTLS-SRTP side of a session: our role, our certificate, and what the peer's must match.
///
/// Thread safety: a value type; safe to use from any thread.
public struct DTLSMediaSetup: Sendable {
    /// We send the ClientHello (`a=setup:active`).
    public var isClient: Bool
    /// Our certificate and key (its fingerprint is in our SDP).
    public var identity: TLSIdentity
    /// The peer's certificate must match one of these.
    public var remoteFingerprints: [DTLSFingerprint]
    /// The SRTP profiles offered in the handshake (`use_srtp`), most preferred first.
    public var profiles: [SRTPProfile]
    /// How long the handshake may take before the session gives up on it.
    public var timeout: Duration

    public init(isClient: Bool, identity: TLSIdentity, remoteFingerprints: [DTLSFingerprint],
                profiles: [SRTPProfile] = [.aesCM128HMACSHA1_80, .aeadAES128GCM, .aesCM128HMACSHA1_32],
                timeout: Duration = .seconds(10)) {
        self.isClient = isClient
        self.identity = identity
        self.remoteFingerprints = remoteFingerprints
        self.profiles = profiles
        self.timeout = timeout
    }
}

/// Why an ``RTPSession`` could not be made.
///
/// Thread safety: a value type; safe to use from any thread.
public enum RTPSessionError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A socket could not be bound.
    case socket(SocketError)
    /// libsrtp refused the keys.
    case srtp(SRTPError)
    /// The DTLS context could not be made (the identity or the profiles).
    case dtls(TLSError)

    public var description: String {
        switch self {
        case let .socket(error): "RTP socket: \(error)"
        case let .srtp(error): "SRTP: \(error)"
        case let .dtls(error): "DTLS-SRTP: \(error)"
        }
    }
}

/// One direction's SRTP context, used by the network thread.
final class SRTPStream: @unchecked Sendable {
    // @unchecked: made on the control or network thread, then touched by the network thread only.
    private var context: SRTPContext

    init(key: SRTPMasterKey, direction: SRTPDirection, ssrc: UInt32? = nil) throws(SRTPError) {
        context = try SRTPContext(key: key, direction: direction, ssrc: ssrc)
    }

    func protectRTP(_ buffer: UnsafeMutableRawBufferPointer, length: Int) throws(SRTPError) -> Int {
        try context.protectRTP(buffer, length: length)
    }

    func unprotectRTP(_ buffer: UnsafeMutableRawBufferPointer, length: Int) throws(SRTPError) -> Int {
        try context.unprotectRTP(buffer, length: length)
    }

    func protectRTCP(_ buffer: UnsafeMutableRawBufferPointer, length: Int) throws(SRTPError) -> Int {
        try context.protectRTCP(buffer, length: length)
    }

    func unprotectRTCP(_ buffer: UnsafeMutableRawBufferPointer, length: Int) throws(SRTPError) -> Int {
        try context.unprotectRTCP(buffer, length: length)
    }
}

/// The peer's new keys for the network thread (an SDES re-INVITE that changes them).
///
/// Thread safety: safe from any thread; a leaf lock, never taken on the I/O thread.
final class InboundKeyMailbox: Sendable {
    private let pending = Mutex<SRTPStream?>(nil)

    func post(_ stream: SRTPStream) { pending.withLock { $0 = stream } }

    func take() -> SRTPStream? { pending.withLock { value in defer { value = nil }; return value } }
}
