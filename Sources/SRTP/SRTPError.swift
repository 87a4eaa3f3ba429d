import CSRTP

/// An error from libsrtp2 (its `srtp_err_status_t`) or from the wrapper's own checks, as a value
/// over the code, the way swift-system's `Errno` is.
///
/// Carrying only the code keeps throwing free of allocation: a flood of forged packets costs an
/// `Int32` per rejection, never a string. ``description`` names the code for people.
///
/// Thread safety: a value type; safe to use from any thread.
public struct SRTPError: Error, Sendable, Hashable, RawRepresentable, CustomStringConvertible {
    /// libsrtp2's `srtp_err_status_t` value, or one of the wrapper's codes (1000 and up).
    ///
    /// Thread safety: a value type; safe to use from any thread.
    public let rawValue: Int32

    /// The error with this code.
    ///
    /// Thread safety: a value type; safe to use from any thread.
    public init(rawValue: Int32) { self.rawValue = rawValue }

    init(_ status: srtp_err_status_t) { self.rawValue = Int32(bitPattern: status.rawValue) }

    // libsrtp2's codes that a caller can meet.
    /// An unspecified failure (`srtp_err_status_fail`).
    public static let failed = SRTPError(srtp_err_status_fail)
    /// A parameter libsrtp or the wrapper refuses: a packet too short or too long, a buffer without
    /// room for the trailer, a replay window out of range, a call for the other direction
    /// (`srtp_err_status_bad_param`).
    public static let badParameter = SRTPError(srtp_err_status_bad_param)
    /// Memory could not be allocated (`srtp_err_status_alloc_fail`).
    public static let allocationFailed = SRTPError(srtp_err_status_alloc_fail)
    /// libsrtp2 could not initialise (`srtp_err_status_init_fail`): its crypto self-tests failed.
    public static let initializationFailed = SRTPError(srtp_err_status_init_fail)
    /// The packet's authentication tag does not verify: forged, corrupted, or a different key
    /// (`srtp_err_status_auth_fail`).
    public static let authenticationFailed = SRTPError(srtp_err_status_auth_fail)
    /// The cipher failed (`srtp_err_status_cipher_fail`).
    public static let cipherFailed = SRTPError(srtp_err_status_cipher_fail)
    /// The packet's index was already received (`srtp_err_status_replay_fail`).
    public static let replayed = SRTPError(srtp_err_status_replay_fail)
    /// The packet's index is older than the replay window (`srtp_err_status_replay_old`).
    public static let tooOld = SRTPError(srtp_err_status_replay_old)
    /// No stream for the packet's SSRC and no template to make one (`srtp_err_status_no_ctx`).
    public static let noContext = SRTPError(srtp_err_status_no_ctx)
    /// The key has protected as many packets as it may (`srtp_err_status_key_expired`).
    public static let keyExpired = SRTPError(srtp_err_status_key_expired)

    // The wrapper's own codes, above libsrtp2's range.
    /// A packet from a new SSRC when the inbound context already holds
    /// ``SRTPContext/maximumStreams`` streams; libsrtp never saw the packet.
    public static let tooManyStreams = SRTPError(rawValue: 1000)
    /// Key material that is not a key for the profile: the wrong length, bad base64, an MKI,
    /// a malformed lifetime.
    public static let badKey = SRTPError(rawValue: 1001)

    /// Whether the packet was refused by replay protection (``replayed`` or ``tooOld``): a
    /// duplicate or a late packet, which a receiver drops quietly rather than as an attack.
    ///
    /// Thread safety: a value type; safe to use from any thread.
    public var isReplay: Bool { self == .replayed || self == .tooOld }

    /// `SRTP error 7 (authentication failed)`.
    ///
    /// Thread safety: a value type; safe to use from any thread.
    public var description: String { "SRTP error \(rawValue) (\(name))" }

    private var name: String {
        switch self {
        case .failed: "failed"
        case .badParameter: "bad parameter"
        case .allocationFailed: "allocation failed"
        case .initializationFailed: "initialization failed"
        case .authenticationFailed: "authentication failed"
        case .cipherFailed: "cipher failed"
        case .replayed: "replayed"
        case .tooOld: "too old for the replay window"
        case .noContext: "no stream for the SSRC"
        case .keyExpired: "key expired"
        case .tooManyStreams: "too many streams"
        case .badKey: "bad key"
        default: "libsrtp2 status \(rawValue)"
        }
    }

    /// Throws unless `status` is `srtp_err_status_ok`.
    @inline(__always)
    static func check(_ status: srtp_err_status_t) throws(SRTPError) {
        if status != srtp_err_status_ok { throw SRTPError(status) }
    }
}
