/// `a=crypto` (RFC 4568 section 9.1): one SDES crypto suite with its key parameters.
///
/// The key travels in ``keyParameters`` (`inline:<base64>`): ``description`` leaves it out, so
/// a description that is logged or printed shows the suite and never the key.
///
/// Thread safety: a value type; safe to use from any thread.
public struct SDPCrypto: Sendable, Equatable, CustomStringConvertible {
    /// 1 to 999999999: the answer names the offered line it accepts by its tag.
    public var tag: Int
    /// The crypto suite (`AES_CM_128_HMAC_SHA1_80`).
    public var suite: String
    /// The key parameters: one or more `inline:...` separated by `;` (RFC 4568 section 9.2).
    public var keyParameters: String
    /// Session parameters (`UNENCRYPTED_SRTP`, `KDR=...`), as written.
    public var sessionParameters: [String]

    public init(tag: Int, suite: String, keyParameters: String, sessionParameters: [String] = []) {
        self.tag = tag
        self.suite = suite
        self.keyParameters = keyParameters
        self.sessionParameters = sessionParameters
    }

    /// Parses an attribute value (`1 AES_CM_128_HMAC_SHA1_80 inline:...`); nil when it is not one.
    public init?(_ value: String) {
        let fields = value.split(separator: " ", omittingEmptySubsequences: true)
        guard fields.count >= 3, fields[0].count <= 10, let tag = Int(fields[0]), (1...999_999_999).contains(tag),
              fields[1].allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_") }) else { return nil }
        self.init(tag: tag, suite: String(fields[1]), keyParameters: String(fields[2]),
                  sessionParameters: fields.dropFirst(3).map(String.init))
    }

    /// The attribute value.
    public var value: String {
        ([String(tag), suite, keyParameters] + sessionParameters).joined(separator: " ")
    }

    /// The tag and suite, never the key.
    public var description: String { "crypto \(tag) \(suite) (key not shown)" }
}

/// `a=fingerprint` (RFC 8122 section 5): the hash of the certificate a DTLS peer will present.
///
/// Thread safety: a value type; safe to use from any thread.
public struct SDPFingerprint: Sendable, Equatable, CustomStringConvertible {
    /// The hash function, lowercased (`sha-256`).
    public var hashFunction: String
    /// The digest's bytes.
    public var digest: [UInt8]

    public init(hashFunction: String, digest: [UInt8]) {
        self.hashFunction = hashFunction.lowercased()
        self.digest = digest
    }

    /// Parses `sha-256 AB:CD:...`; nil when it is not one (at most 64 bytes of digest).
    public init?(_ value: String) {
        let fields = value.split(separator: " ", omittingEmptySubsequences: true)
        guard fields.count == 2, fields[0].count <= 16 else { return nil }
        let hexes = fields[1].split(separator: ":", omittingEmptySubsequences: false)
        guard (16...64).contains(hexes.count) else { return nil }
        var digest: [UInt8] = []
        for hex in hexes {
            guard hex.count == 2, let byte = UInt8(hex, radix: 16) else { return nil }
            digest.append(byte)
        }
        self.init(hashFunction: String(fields[0]), digest: digest)
    }

    /// The attribute value: upper-case hex pairs joined by colons.
    public var value: String {
        hashFunction + " " + digest.map { byte in
            let hex = String(byte, radix: 16, uppercase: true)
            return hex.count == 1 ? "0" + hex : hex
        }.joined(separator: ":")
    }

    public var description: String { value }
}

/// `a=setup` (RFC 4145 section 4): which side opens the DTLS association.
///
/// Thread safety: a value type; safe to use from any thread.
public enum SDPSetup: String, Sendable, Hashable, CaseIterable {
    /// The offerer's usual choice: either role, the answerer decides.
    case actpass
    /// This side starts the handshake (DTLS client).
    case active
    /// This side waits for the other's handshake (DTLS server).
    case passive
    /// Neither, for now.
    case holdconn

    /// The role an answer takes to an offer of `self` (RFC 5763 section 5: an answerer to
    /// `actpass` takes `active`); nil when the offer leaves no role (`holdconn`).
    public var answer: SDPSetup? {
        switch self {
        case .actpass, .passive: .active
        case .active: .passive
        case .holdconn: nil
        }
    }
}

extension SessionDescription.Media {
    /// The stream's `a=crypto` lines that parse, in order.
    public var cryptos: [SDPCrypto] {
        attributes.compactMap { $0.name == "crypto" ? $0.value.flatMap(SDPCrypto.init) : nil }
    }
}

extension SessionDescription {
    /// The `a=fingerprint` lines of `media`, or the session's when it has none (RFC 8122 section 5).
    public func fingerprints(of media: Media) -> [SDPFingerprint] {
        let own = media.attributes.compactMap { $0.name == "fingerprint" ? $0.value.flatMap(SDPFingerprint.init) : nil }
        if !own.isEmpty { return own }
        return attributes.compactMap { $0.name == "fingerprint" ? $0.value.flatMap(SDPFingerprint.init) : nil }
    }

    /// The `a=setup` of `media`, else the session's; nil when neither says (or says something unknown).
    public func setup(of media: Media) -> SDPSetup? {
        if let value = media.attribute("setup") { return SDPSetup(rawValue: value.trimmingSpaces.lowercased()) }
        return attributes.first { $0.name == "setup" }?.value.flatMap { SDPSetup(rawValue: $0.trimmingSpaces.lowercased()) }
    }
}
