public import SDP
public import SRTP

/// The transport profiles of an `m=` line, as far as encryption goes.
enum SecureProfile {
    /// `RTP/AVP`, `RTP/AVPF`: clear, or SDES as best effort when `a=crypto` lines come with it.
    case plain
    /// `RTP/SAVP`, `RTP/SAVPF`: SRTP keyed by SDES.
    case sdes
    /// `UDP/TLS/RTP/SAVP`, `UDP/TLS/RTP/SAVPF`: SRTP keyed by DTLS.
    case dtls
    case unknown

    init(_ proto: String) {
        switch proto.uppercased() {
        case "RTP/AVP", "RTP/AVPF": self = .plain
        case "RTP/SAVP", "RTP/SAVPF": self = .sdes
        case "UDP/TLS/RTP/SAVP", "UDP/TLS/RTP/SAVPF": self = .dtls
        default: self = .unknown
        }
    }
}

/// What an offer of ours carried for encryption: its profile, its attributes and our key behind
/// each `a=crypto` tag, to read the answer with.
///
/// Thread safety: a value type; safe to use from any thread. Its description shows no key.
public struct SecurityOffer: Sendable, Equatable, CustomStringConvertible {
    public var proto: String
    public var attributes: [SessionDescription.Attribute]
    /// Our key for each offered `a=crypto` tag.
    public var keys: [Int: SRTPMasterKey]

    public var description: String { "\(proto) with \(keys.count) SDES suites" }
}

extension MediaSecurityPolicy {
    /// The profile and attributes of an offer, with fresh SDES keys (one per suite).
    ///
    /// - Parameter fingerprint: our certificate's fingerprint, for DTLS-SRTP.
    public func makeOffer(fingerprint: SDPFingerprint?) -> SecurityOffer {
        switch encryption {
        case .off:
            return SecurityOffer(proto: "RTP/AVP", attributes: [], keys: [:])
        case .sdes:
            var attributes: [SessionDescription.Attribute] = [], keys: [Int: SRTPMasterKey] = [:]
            for (index, profile) in profiles.enumerated() {
                let key = SRTPMasterKey.random(profile: profile)
                keys[index + 1] = key
                let line = SDPCrypto(tag: index + 1, suite: profile.sdesName, keyParameters: key.sdesKeyParameters)
                attributes.append(.init("crypto", line.value))
            }
            return SecurityOffer(proto: requirement == .mandatory ? "RTP/SAVP" : "RTP/AVP", attributes: attributes, keys: keys)
        case .dtls:
            var attributes: [SessionDescription.Attribute] = [.init("setup", SDPSetup.actpass.rawValue)]
            if let fingerprint { attributes.insert(.init("fingerprint", fingerprint.value), at: 0) }
            return SecurityOffer(proto: "UDP/TLS/RTP/SAVP", attributes: attributes, keys: [:])
        }
    }

    /// Reads the peer's answer (`media`, its accepted audio stream, in `answer`) to our `offered`.
    ///
    /// - Throws: ``MediaSecurityError`` when the answer leaves the media in clear under
    ///   `mandatory`, names a line we did not offer, or carries a malformed key or fingerprint.
    public func acceptAnswer(_ answer: SessionDescription, media: SessionDescription.Media,
                             offered: SecurityOffer) throws(MediaSecurityError) -> NegotiatedMediaSecurity {
        let profile = SecureProfile(media.proto)
        switch encryption {
        case .off:
            return .clear
        case .sdes:
            if let line = media.cryptos.first {
                guard let ours = offered.keys[line.tag], ours.profile.sdesName == line.suite else { throw .noCommonSuite }
                guard let theirs = try? SRTPMasterKey(profile: ours.profile, sdesKeyParameters: line.keyParameters) else {
                    throw .badKey
                }
                return .sdes(SDESKeys(profile: ours.profile, tag: line.tag, local: ours, remote: theirs))
            }
        case .dtls:
            if profile == .dtls {
                let fingerprints = answer.fingerprints(of: media)
                guard !fingerprints.isEmpty, let setup = answer.setup(of: media), setup == .active || setup == .passive else {
                    throw .missingFingerprint
                }
                return .dtls(DTLSMediaParameters(isClient: setup == .passive, remoteFingerprints: fingerprints))
            }
        }
        guard requirement == .optional, profile == .plain else { throw .encryptionRequired }
        return .clear
    }

    /// The encryption of our answer to the peer's stream `media` in `offer`: the profile to
    /// answer with (the offer's), the attributes, and what is agreed.
    ///
    /// - Parameters:
    ///   - offer: the peer's offer.
    ///   - media: its audio stream we accept (``AudioSDP/streamMedia(in:codecs:)``).
    ///   - fingerprint: our certificate's fingerprint, for DTLS-SRTP.
    ///   - secure: the offer came over TLS (SDES keys may be answered over it).
    /// - Throws: ``MediaSecurityError``: the caller declines with 488.
    public func answer(_ offer: SessionDescription, media: SessionDescription.Media, fingerprint: SDPFingerprint?,
                       overSecureSignalling secure: Bool) throws(MediaSecurityError)
        -> (proto: String, attributes: [SessionDescription.Attribute], negotiated: NegotiatedMediaSecurity) {
        switch SecureProfile(media.proto) {
        case .plain:
            if encryption == .sdes, !media.cryptos.isEmpty, permitsKeys(overSecureSignalling: secure),
               let (line, keys) = try? chooseSuite(media.cryptos) {
                return (media.proto, [.init("crypto", line.value)], .sdes(keys))
            }
            guard requirement == .optional || encryption == .off else {
                // Keys were offered, but answering them would put ours on clear signalling.
                let keysRefused = encryption == .sdes && !media.cryptos.isEmpty && !permitsKeys(overSecureSignalling: secure)
                throw keysRefused ? .keysInClearSignalling : .encryptionRequired
            }
            return (media.proto, [], .clear)
        case .sdes:
            guard encryption == .sdes else { throw .encryptionRefused("\(media.proto) (SDES) offered") }
            guard permitsKeys(overSecureSignalling: secure) else { throw .keysInClearSignalling }
            let (line, keys) = try chooseSuite(media.cryptos)
            return (media.proto, [.init("crypto", line.value)], .sdes(keys))
        case .dtls:
            guard encryption == .dtls, let fingerprint else { throw .encryptionRefused("\(media.proto) (DTLS-SRTP) offered") }
            let fingerprints = offer.fingerprints(of: media)
            // RFC 4145 section 4: an offer without a=setup means active.
            guard !fingerprints.isEmpty, let ours = (offer.setup(of: media) ?? .active).answer else { throw .missingFingerprint }
            let attributes: [SessionDescription.Attribute] = [.init("fingerprint", fingerprint.value), .init("setup", ours.rawValue)]
            return (media.proto, attributes, .dtls(DTLSMediaParameters(isClient: ours == .active, remoteFingerprints: fingerprints)))
        case .unknown:
            throw .encryptionRefused("\(media.proto) offered")
        }
    }

    /// The first of the offer's lines (in the offer's order, RFC 4568 section 7.1.1) whose suite
    /// we support, with a key that parses and no session parameters we would have to honour;
    /// our answer line carries a fresh key under the same tag.
    func chooseSuite(_ lines: [SDPCrypto]) throws(MediaSecurityError) -> (SDPCrypto, SDESKeys) {
        var sawBadKey = false
        for line in lines {
            guard let profile = SRTPProfile(sdesName: line.suite), profiles.contains(profile),
                  line.sessionParameters.isEmpty else { continue }
            guard let theirs = try? SRTPMasterKey(profile: profile, sdesKeyParameters: line.keyParameters) else {
                sawBadKey = true
                continue
            }
            let ours = SRTPMasterKey.random(profile: profile)
            let answer = SDPCrypto(tag: line.tag, suite: line.suite, keyParameters: ours.sdesKeyParameters)
            return (answer, SDESKeys(profile: profile, tag: line.tag, local: ours, remote: theirs))
        }
        throw sawBadKey ? .badKey : .noCommonSuite
    }
}
