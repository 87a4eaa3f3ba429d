import CSRTP

/// An SRTP protection profile: the cipher, the authentication and their key sizes, named as
/// SDES (RFC 4568, RFC 7714) and DTLS-SRTP (RFC 5764, RFC 7714) name it.
///
/// Thread safety: a value type; safe to use from any thread.
public enum SRTPProfile: String, Sendable, Hashable, CaseIterable {
    /// AES-128 in counter mode with an 80-bit HMAC-SHA1 tag: the default every endpoint supports.
    case aesCM128HMACSHA1_80 = "AES_CM_128_HMAC_SHA1_80"
    /// AES-128 in counter mode with a 32-bit HMAC-SHA1 tag on RTP (SRTCP keeps 80 bits).
    case aesCM128HMACSHA1_32 = "AES_CM_128_HMAC_SHA1_32"
    /// AES-128 in Galois/counter mode with a 128-bit tag (RFC 7714).
    case aeadAES128GCM = "AEAD_AES_128_GCM"

    /// The profile with this SDES crypto-suite name (`AES_CM_128_HMAC_SHA1_80`), in any letter
    /// case (SDP's grammar does not distinguish case); nil for a suite we do not support.
    ///
    /// Thread safety: a value type; safe to use from any thread.
    public init?(sdesName: String) {
        guard let profile = Self.allCases.first(where: { $0.rawValue == sdesName.uppercased() }) else { return nil }
        self = profile
    }

    /// The SDES crypto-suite name, as `a=crypto` carries it.
    ///
    /// Thread safety: a value type; safe to use from any thread.
    public var sdesName: String { rawValue }

    /// Bytes of master key (AES-128: 16).
    ///
    /// Thread safety: a value type; safe to use from any thread.
    public var keyLength: Int { 16 }

    /// Bytes of master salt: 14 for AES-CM (RFC 3711), 12 for GCM (RFC 7714).
    ///
    /// Thread safety: a value type; safe to use from any thread.
    public var saltLength: Int {
        switch self {
        case .aesCM128HMACSHA1_80, .aesCM128HMACSHA1_32: 14
        case .aeadAES128GCM: 12
        }
    }

    /// Bytes of key and salt together: what one direction's master key holds.
    ///
    /// Thread safety: a value type; safe to use from any thread.
    public var masterLength: Int { keyLength + saltLength }

    /// The profile with this DTLS-SRTP protection profile id (RFC 5764 section 4.1.2, RFC 7714
    /// section 14.2); nil for one we do not support.
    ///
    /// Thread safety: a value type; safe to use from any thread.
    public init?(dtlsProtectionProfile: UInt16) {
        guard let profile = Self.allCases.first(where: { $0.dtlsProtectionProfile == dtlsProtectionProfile }) else { return nil }
        self = profile
    }

    /// The DTLS-SRTP protection profile id: 0x0001, 0x0002, 0x0007.
    ///
    /// Thread safety: a value type; safe to use from any thread.
    public var dtlsProtectionProfile: UInt16 {
        switch self {
        case .aesCM128HMACSHA1_80: 0x0001
        case .aesCM128HMACSHA1_32: 0x0002
        case .aeadAES128GCM: 0x0007
        }
    }

    /// OpenSSL's name for the profile, as `SSL_CTX_set_tlsext_use_srtp` takes it.
    ///
    /// Thread safety: a value type; safe to use from any thread.
    public var opensslName: String {
        switch self {
        case .aesCM128HMACSHA1_80: "SRTP_AES128_CM_SHA1_80"
        case .aesCM128HMACSHA1_32: "SRTP_AES128_CM_SHA1_32"
        case .aeadAES128GCM: "SRTP_AEAD_AES_128_GCM"
        }
    }

    /// Bytes that protecting adds to an RTP packet: the authentication tag (no MKI is sent).
    ///
    /// Thread safety: a value type; safe to use from any thread.
    public var rtpTrailerLength: Int {
        switch self {
        case .aesCM128HMACSHA1_80: 10
        case .aesCM128HMACSHA1_32: 4
        case .aeadAES128GCM: 16
        }
    }

    /// Bytes that protecting adds to an RTCP packet: the E flag and SRTCP index (4) and the tag,
    /// which is 80 bits for both AES-CM profiles (RFC 4568 section 6.2.1). AES-CM puts the index
    /// first; GCM puts the tag first (RFC 7714 section 9.2).
    ///
    /// Thread safety: a value type; safe to use from any thread.
    public var rtcpTrailerLength: Int {
        switch self {
        case .aesCM128HMACSHA1_80, .aesCM128HMACSHA1_32: 4 + 10
        case .aeadAES128GCM: 4 + 16
        }
    }

    /// Room that always suffices after a packet for any profile, RTP or RTCP: libsrtp2's
    /// `SRTP_MAX_TRAILER_LEN` (a tag and the largest MKI), more than any profile here needs.
    ///
    /// Thread safety: a value type; safe to use from any thread.
    public static var maximumTrailerLength: Int { Int(SRTP_MAX_TRAILER_LEN) }

    /// libsrtp2's profile, from which it sets the RTP and RTCP crypto policies.
    var libraryProfile: srtp_profile_t {
        switch self {
        case .aesCM128HMACSHA1_80: srtp_profile_aes128_cm_sha1_80
        case .aesCM128HMACSHA1_32: srtp_profile_aes128_cm_sha1_32
        case .aeadAES128GCM: srtp_profile_aead_aes_128_gcm
        }
    }
}
