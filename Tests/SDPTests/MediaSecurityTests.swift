import MediaNegotiation
import Platform
import SDP
import SRTP
import Testing

/// SDES and DTLS-SRTP negotiation: the attributes, the matrix of offers against policies, and
/// what a re-offer may change.
@Suite("Media encryption negotiation")
struct MediaSecurityTests {
    static let address = try! SocketAddress(host: "127.0.0.1", port: 4000)
    static let fingerprint = SDPFingerprint(hashFunction: "sha-256", digest: Array(0..<32))
    static let otherFingerprint = SDPFingerprint(hashFunction: "sha-256", digest: Array(repeating: 7, count: 32))

    static func policy(_ encryption: MediaEncryption, _ requirement: SRTPRequirement = .optional) -> MediaSecurityPolicy {
        MediaSecurityPolicy(encryption: encryption, requirement: requirement)
    }

    /// An Opus offer as `policy` would make it, parsed back from its text.
    static func offer(_ policy: MediaSecurityPolicy, fingerprint: SDPFingerprint? = fingerprint) -> (SessionDescription, SecurityOffer) {
        let security = policy.makeOffer(fingerprint: fingerprint)
        let text = AudioSDP.offer(address: address, sessionID: 1, security: security).text
        return (try! SessionDescription.parse(text), security)
    }

    static func media(_ d: SessionDescription) -> SessionDescription.Media { AudioSDP.streamMedia(in: d)! }

    @Test("a=crypto parses and writes back; its description never shows the key")
    func cryptoAttribute() throws {
        let key = SRTPMasterKey.random(profile: .aesCM128HMACSHA1_80)
        let line = try #require(SDPCrypto("1 AES_CM_128_HMAC_SHA1_80 \(key.sdesKeyParameters)"))
        #expect(line.tag == 1 && line.suite == "AES_CM_128_HMAC_SHA1_80" && line.keyParameters == key.sdesKeyParameters)
        #expect(SDPCrypto(line.value) == line)
        let base64 = String(key.sdesKeyParameters.dropFirst("inline:".count))
        #expect(!line.description.contains(base64) && !"\(key)".contains(base64))
        for bad in ["0 AES_CM_128_HMAC_SHA1_80 inline:x", "1000000000 AES inline:x", "x AES inline:x", "1 AES", "1 A-B inline:x"] {
            #expect(SDPCrypto(bad) == nil, "\(bad)")
        }
    }

    @Test("a=fingerprint parses upper or lower hex pairs and refuses anything else")
    func fingerprintAttribute() {
        #expect(SDPFingerprint(Self.fingerprint.value) == Self.fingerprint)
        #expect(SDPFingerprint(Self.fingerprint.value.lowercased()) == Self.fingerprint)
        #expect(SDPFingerprint("SHA-256 " + Self.fingerprint.value.split(separator: " ")[1]) == Self.fingerprint)
        for bad in ["sha-256", "sha-256 AB:CD", "sha-256 " + String(repeating: "AB:", count: 65) + "AB", "sha-256 G0" + String(repeating: ":00", count: 31)] {
            #expect(SDPFingerprint(bad) == nil, "\(bad)")
        }
    }

    enum Outcome: Equatable { case clear, sdes, dtls, declined }

    static func outcome(offering offerer: MediaSecurityPolicy, to answerer: MediaSecurityPolicy, secure: Bool = true) -> Outcome {
        let (offer, _) = Self.offer(offerer)
        guard let (_, _, negotiated) = try? answerer.answer(offer, media: media(offer), fingerprint: fingerprint,
                                                            overSecureSignalling: secure) else { return .declined }
        switch negotiated {
        case .clear: return .clear
        case .sdes: return .sdes
        case .dtls: return .dtls
        }
    }

    @Test("Each offer against each policy", arguments: [
        // (offerer, answerer, expected)
        (policy(.off), policy(.off), Outcome.clear),
        (policy(.off), policy(.sdes), .clear),
        (policy(.off), policy(.sdes, .mandatory), .declined),
        (policy(.off), policy(.dtls, .mandatory), .declined),
        (policy(.sdes), policy(.off), .clear),            // RTP/AVP with a=crypto: best effort
        (policy(.sdes), policy(.sdes), .sdes),
        (policy(.sdes), policy(.sdes, .mandatory), .sdes),
        (policy(.sdes), policy(.dtls), .clear),
        (policy(.sdes, .mandatory), policy(.off), .declined),  // RTP/SAVP
        (policy(.sdes, .mandatory), policy(.sdes), .sdes),
        (policy(.sdes, .mandatory), policy(.dtls), .declined),
        (policy(.dtls), policy(.off), .declined),          // UDP/TLS/RTP/SAVP
        (policy(.dtls), policy(.sdes), .declined),
        (policy(.dtls), policy(.dtls), .dtls),
        (policy(.dtls), policy(.dtls, .mandatory), .dtls),
    ])
    func matrix(_ offerer: MediaSecurityPolicy, _ answerer: MediaSecurityPolicy, _ expected: Outcome) {
        #expect(Self.outcome(offering: offerer, to: answerer) == expected)
    }

    @Test("SDES keys go over TLS signalling only, unless clear keys are allowed")
    func keysOnlyOverTLS() {
        #expect(Self.outcome(offering: Self.policy(.sdes, .mandatory), to: Self.policy(.sdes), secure: false) == .declined)
        #expect(Self.outcome(offering: Self.policy(.sdes), to: Self.policy(.sdes), secure: false) == .clear)
        let (bestEffort, _) = Self.offer(Self.policy(.sdes))
        #expect(throws: MediaSecurityError.keysInClearSignalling) {
            try Self.policy(.sdes, .mandatory).answer(bestEffort, media: Self.media(bestEffort), fingerprint: nil,
                                                      overSecureSignalling: false)
        }
        var allowing = Self.policy(.sdes)
        allowing.allowsClearKeys = true
        #expect(Self.outcome(offering: Self.policy(.sdes, .mandatory), to: allowing, secure: false) == .sdes)
        #expect(throws: MediaSecurityError.keysInClearSignalling) { try Self.policy(.sdes).checkOffer(overSecureSignalling: false) }
        #expect(throws: Never.self) { try allowing.checkOffer(overSecureSignalling: false) }
        #expect(throws: Never.self) { try Self.policy(.dtls).checkOffer(overSecureSignalling: false) }
        #expect(MediaSecurityError.keysInClearSignalling.description.contains("--allow-clear-keys"))
    }

    @Test("SDES: each side sends with its own key and receives with the other's")
    func sdesKeysCross() throws {
        let policy = Self.policy(.sdes, .mandatory)
        let (offer, offered) = Self.offer(policy)
        #expect(Self.media(offer).proto == "RTP/SAVP" && offered.keys.count == 3)
        let (proto, attributes, answered) = try policy.answer(offer, media: Self.media(offer), fingerprint: nil, overSecureSignalling: true)
        guard case let .sdes(answererKeys) = answered else { Issue.record("not SDES"); return }
        #expect(answererKeys.profile == .aesCM128HMACSHA1_80 && answererKeys.tag == 1)
        let answer = try AudioSDP.answer(offer, address: Self.address, sessionID: 2, parameters: .init(), security: (proto, attributes)).answer
        let answerMedia = Self.media(try SessionDescription.parse(answer.text))
        #expect(answerMedia.proto == "RTP/SAVP" && answerMedia.cryptos.count == 1)
        guard case let .sdes(offererKeys) = try policy.acceptAnswer(answer, media: answerMedia, offered: offered) else {
            Issue.record("not SDES"); return
        }
        #expect(offererKeys.local == answererKeys.remote && offererKeys.remote == answererKeys.local)
        #expect(offererKeys.local != offererKeys.remote)
    }

    @Test("The answerer takes the first offered suite it supports; unknown suites and session parameters are skipped")
    func suiteChoice() throws {
        let key32 = SRTPMasterKey.random(profile: .aesCM128HMACSHA1_32).sdesKeyParameters
        let key80 = SRTPMasterKey.random(profile: .aesCM128HMACSHA1_80).sdesKeyParameters
        var (offer, _) = Self.offer(Self.policy(.off))
        offer.media[0].proto = "RTP/SAVP"
        offer.media[0].attributes += [.init("crypto", "1 F8_128_HMAC_SHA1_80 \(key80)"),
                                      .init("crypto", "2 AES_CM_128_HMAC_SHA1_80 \(key80) UNENCRYPTED_SRTP"),
                                      .init("crypto", "3 AES_CM_128_HMAC_SHA1_32 \(key32)"),
                                      .init("crypto", "4 AES_CM_128_HMAC_SHA1_80 \(key80)")]
        let (_, attributes, negotiated) = try Self.policy(.sdes).answer(offer, media: Self.media(offer), fingerprint: nil, overSecureSignalling: true)
        guard case let .sdes(keys) = negotiated else { Issue.record("not SDES"); return }
        #expect(keys.tag == 3 && keys.profile == .aesCM128HMACSHA1_32)
        #expect(attributes.count == 1 && attributes[0].value?.hasPrefix("3 AES_CM_128_HMAC_SHA1_32 inline:") == true)
        offer.media[0].attributes.removeAll { $0.name == "crypto" }
        offer.media[0].attributes.append(.init("crypto", "1 AES_CM_128_HMAC_SHA1_80 inline:dG9vIHNob3J0"))
        #expect(throws: MediaSecurityError.badKey) {
            try Self.policy(.sdes).answer(offer, media: Self.media(offer), fingerprint: nil, overSecureSignalling: true)
        }
    }

    @Test("An answer that names a line we did not offer, or none under mandatory, is refused")
    func badAnswers() throws {
        let policy = Self.policy(.sdes, .mandatory)
        let (offer, offered) = Self.offer(policy)
        var answer = offer
        answer.media[0].attributes.removeAll { $0.name == "crypto" }
        #expect(throws: MediaSecurityError.encryptionRequired) { try policy.acceptAnswer(answer, media: Self.media(answer), offered: offered) }
        let key = SRTPMasterKey.random(profile: .aesCM128HMACSHA1_80).sdesKeyParameters
        answer.media[0].attributes.append(.init("crypto", "9 AES_CM_128_HMAC_SHA1_80 \(key)"))
        #expect(throws: MediaSecurityError.noCommonSuite) { try policy.acceptAnswer(answer, media: Self.media(answer), offered: offered) }
        // Optional: an answer in clear (RTP/AVP, no crypto) is a call in clear.
        let optional = Self.policy(.sdes)
        let (offer2, offered2) = Self.offer(optional)
        var clear = offer2
        clear.media[0].attributes.removeAll { $0.name == "crypto" }
        #expect(try optional.acceptAnswer(clear, media: Self.media(clear), offered: offered2) == .clear)
    }

    @Test("DTLS roles: the answerer to actpass is active (the client); the offerer reads the answer's role")
    func dtlsRoles() throws {
        let policy = Self.policy(.dtls, .mandatory)
        let (offer, offered) = Self.offer(policy)
        #expect(Self.media(offer).proto == "UDP/TLS/RTP/SAVP" && offer.setup(of: Self.media(offer)) == .actpass)
        let (proto, attributes, answered) = try policy.answer(offer, media: Self.media(offer), fingerprint: Self.otherFingerprint,
                                                              overSecureSignalling: false)
        #expect(answered == .dtls(DTLSMediaParameters(isClient: true, remoteFingerprints: [Self.fingerprint])))
        let answer = try AudioSDP.answer(offer, address: Self.address, sessionID: 2, parameters: .init(), security: (proto, attributes)).answer
        let accepted = try policy.acceptAnswer(answer, media: Self.media(answer), offered: offered)
        #expect(accepted == .dtls(DTLSMediaParameters(isClient: false, remoteFingerprints: [Self.otherFingerprint])))
        var noFingerprint = offer
        noFingerprint.media[0].attributes.removeAll { $0.name == "fingerprint" }
        #expect(throws: MediaSecurityError.missingFingerprint) {
            try policy.answer(noFingerprint, media: Self.media(noFingerprint), fingerprint: Self.fingerprint, overSecureSignalling: false)
        }
    }

    @Test("A re-offer keeps the mechanism, suite and fingerprint; it may change the peer's SDES key")
    func reoffers() throws {
        let policy = Self.policy(.sdes, .mandatory)
        let (offer, _) = Self.offer(policy)
        let (_, _, negotiated) = try policy.answer(offer, media: Self.media(offer), fingerprint: nil, overSecureSignalling: true)
        guard case let .sdes(keys) = negotiated else { Issue.record("not SDES"); return }
        // The same offer again: nothing changes.
        #expect(try negotiated.following(offer, media: Self.media(offer)) == negotiated)
        // A new key under the same tag: followed.
        var rekeyed = offer
        let newKey = SRTPMasterKey.random(profile: .aesCM128HMACSHA1_80)
        rekeyed.media[0].attributes = rekeyed.media[0].attributes.map {
            $0.name == "crypto" && $0.value!.hasPrefix("1 ") ? .init("crypto", "1 AES_CM_128_HMAC_SHA1_80 \(newKey.sdesKeyParameters)") : $0
        }
        guard case let .sdes(after) = try negotiated.following(rekeyed, media: Self.media(rekeyed)) else { Issue.record("not SDES"); return }
        #expect(after.remote == newKey && after.local == keys.local)
        // Dropping to RTP/AVP without keys: declined.
        var dropped = offer
        dropped.media[0].proto = "RTP/AVP"
        dropped.media[0].attributes.removeAll { $0.name == "crypto" }
        #expect(throws: MediaSecurityError.self) { try negotiated.following(dropped, media: Self.media(dropped)) }
        // A call in clear does not become encrypted by a re-offer of RTP/SAVP.
        #expect(throws: MediaSecurityError.self) { try NegotiatedMediaSecurity.clear.following(offer, media: Self.media(offer)) }
        // DTLS: a changed fingerprint is declined.
        let dtls = NegotiatedMediaSecurity.dtls(DTLSMediaParameters(isClient: true, remoteFingerprints: [Self.fingerprint]))
        let (dtlsOffer, _) = Self.offer(Self.policy(.dtls))
        #expect(try dtls.following(dtlsOffer, media: Self.media(dtlsOffer)) == dtls)
        let (changed, _) = Self.offer(Self.policy(.dtls), fingerprint: Self.otherFingerprint)
        #expect(throws: MediaSecurityError.changed("the DTLS fingerprint")) { try dtls.following(changed, media: Self.media(changed)) }
    }
}
