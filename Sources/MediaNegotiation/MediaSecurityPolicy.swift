public import SDP
public import SRTP

/// How media is encrypted.
///
/// Thread safety: a value type; safe to use from any thread.
public enum MediaEncryption: String, Sendable, Hashable, CaseIterable {
    /// RTP and RTCP in clear.
    case off
    /// SRTP keyed by SDES (`a=crypto`, RFC 4568): the keys travel in the SDP.
    case sdes
    /// SRTP keyed by a DTLS handshake on the media port (RFC 5763, 5764).
    case dtls
}

/// Whether a call may go on in clear when the peer cannot encrypt.
///
/// Thread safety: a value type; safe to use from any thread.
public enum SRTPRequirement: String, Sendable, Hashable, CaseIterable {
    /// Encrypt when the peer can; a peer that cannot gets a call in clear.
    case optional
    /// Encrypt or fail: offers are `RTP/SAVP` or `UDP/TLS/RTP/SAVP`, a clear offer is declined
    /// (488) and a clear answer ends the call.
    case mandatory
}

/// What an endpoint accepts and offers for media encryption.
///
/// Offers (see `Docs/sip.md`, "Encrypted media"):
/// - `off`: `RTP/AVP`, no keys.
/// - `sdes` + `optional`: `RTP/AVP` with `a=crypto` lines (best effort, as baresip's `srtp` and
///   liblinphone's optional SRTP offer): a peer that answers a crypto line gets SRTP, one that
///   answers none gets clear RTP.
/// - `sdes` + `mandatory`: `RTP/SAVP` with `a=crypto` lines.
/// - `dtls`: `UDP/TLS/RTP/SAVP` with `a=fingerprint` and `a=setup:actpass`.
///
/// Answers take the configured mechanism only: an SDES offer to a `dtls` endpoint (or the
/// reverse) is answered in clear when its profile allows (`RTP/AVP`) and the requirement is
/// `optional`, and declined otherwise.
///
/// Thread safety: a value type; safe to use from any thread.
public struct MediaSecurityPolicy: Sendable, Equatable {
    public var encryption: MediaEncryption
    public var requirement: SRTPRequirement
    /// SDES suites offered, most preferred first; an answer takes the first of the offer's
    /// lines that is in this list.
    public var profiles: [SRTPProfile]
    /// SDES keys may travel over signalling that is not TLS (UDP, TCP). Off by default: anyone
    /// on the signalling path could then read the keys.
    public var allowsClearKeys: Bool

    public init(encryption: MediaEncryption = .off, requirement: SRTPRequirement = .optional,
                profiles: [SRTPProfile] = [.aesCM128HMACSHA1_80, .aeadAES128GCM, .aesCM128HMACSHA1_32],
                allowsClearKeys: Bool = false) {
        self.encryption = encryption
        self.requirement = requirement
        self.profiles = profiles
        self.allowsClearKeys = allowsClearKeys
    }

    /// Whether SDES keys may go out over signalling that is (`secure`) or is not TLS.
    public func permitsKeys(overSecureSignalling secure: Bool) -> Bool { secure || allowsClearKeys }

    /// Checks that an SDES call may be placed over signalling that is (`secure`) or is not TLS.
    ///
    /// - Throws: ``MediaSecurityError/keysInClearSignalling`` when SDES keys would cross a
    ///   network in clear.
    public func checkOffer(overSecureSignalling secure: Bool) throws(MediaSecurityError) {
        if encryption == .sdes, !permitsKeys(overSecureSignalling: secure) { throw .keysInClearSignalling }
    }
}

/// Why media encryption could not be agreed.
///
/// Thread safety: a value type; safe to use from any thread.
public enum MediaSecurityError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Encryption is mandatory and the peer offered or answered none.
    case encryptionRequired
    /// The peer requires encryption (a secure profile) we do not do, or do not do that way.
    case encryptionRefused(String)
    /// The peer's SDES lines name no suite we support, or its answer names no line we offered.
    case noCommonSuite
    /// A key in the peer's `a=crypto` does not parse or has the wrong length.
    case badKey
    /// A DTLS-SRTP description without a usable `a=fingerprint` or `a=setup`.
    case missingFingerprint
    /// SDES would send keys over signalling that is not TLS.
    case keysInClearSignalling
    /// A re-offer changes the encryption (drops it, switches mechanism or suite, or changes
    /// the DTLS fingerprint) mid-call.
    case changed(String)

    public var description: String {
        switch self {
        case .encryptionRequired: "the peer does not encrypt its media and SRTP is mandatory"
        case let .encryptionRefused(why): "the peer requires media encryption this endpoint does not do: \(why)"
        case .noCommonSuite: "no SRTP crypto suite in common with the peer"
        case .badKey: "the peer's SDES key is malformed"
        case .missingFingerprint: "the peer's DTLS-SRTP description has no usable fingerprint or setup"
        case .keysInClearSignalling:
            "SDES would send the media keys over signalling that is not TLS: call over TLS (--transport tls), "
                + "use DTLS-SRTP (--media-encryption dtls), or allow keys in clear signalling (--allow-clear-keys)"
        case let .changed(what): "the peer changed the media encryption mid-call (\(what))"
        }
    }
}

/// The SRTP keys SDES agreed: ours (what we send with) and the peer's.
///
/// Thread safety: a value type; safe to use from any thread. Its description shows the
/// profile, never a key.
public struct SDESKeys: Sendable, Equatable, CustomStringConvertible {
    public var profile: SRTPProfile
    /// The tag of the agreed `a=crypto` line.
    public var tag: Int
    public var local: SRTPMasterKey
    public var remote: SRTPMasterKey

    public init(profile: SRTPProfile, tag: Int, local: SRTPMasterKey, remote: SRTPMasterKey) {
        self.profile = profile
        self.tag = tag
        self.local = local
        self.remote = remote
    }

    public var description: String { "SDES \(profile.sdesName) (tag \(tag))" }
}

/// What DTLS-SRTP agreed before the handshake: our role and the certificate the peer must present.
///
/// Thread safety: a value type; safe to use from any thread.
public struct DTLSMediaParameters: Sendable, Equatable {
    /// We start the handshake (`a=setup:active` on our side).
    public var isClient: Bool
    /// The peer's `a=fingerprint` lines: its certificate must match one.
    public var remoteFingerprints: [SDPFingerprint]

    public init(isClient: Bool, remoteFingerprints: [SDPFingerprint]) {
        self.isClient = isClient
        self.remoteFingerprints = remoteFingerprints
    }
}

/// The media encryption an offer and its answer agreed.
///
/// Thread safety: a value type; safe to use from any thread.
public enum NegotiatedMediaSecurity: Sendable, Equatable, CustomStringConvertible {
    case clear
    case sdes(SDESKeys)
    case dtls(DTLSMediaParameters)

    /// `off`, `sdes` or `dtls`.
    public var encryption: MediaEncryption {
        switch self {
        case .clear: .off
        case .sdes: .sdes
        case .dtls: .dtls
        }
    }

    public var description: String {
        switch self {
        case .clear: "clear"
        case let .sdes(keys): keys.description
        case let .dtls(p): "DTLS-SRTP (\(p.isClient ? "client" : "server"))"
        }
    }
}
