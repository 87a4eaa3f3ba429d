/// A user name and password for digest authentication (RFC 3261 section 22).
///
/// A digest response lets whoever challenged try passwords offline, so credentials answer
/// only the challenges of the realm they are for:
/// - with a ``realm``, challenges for that realm (from any next hop: a peer that knows the
///   realm's name can still ask, so name the realm of a PBX, not a guessable one);
/// - without one (the default), the realm of the registrar: learned from the first challenge
///   to our REGISTER that comes from the registrar's address, and answered only when it comes
///   from that address (for REGISTER, and for INVITE, BYE... sent through it). Without a
///   registration, no challenge is answered.
///
/// Each request is sent again once with credentials, and once more when the server says the
/// nonce was `stale`; any further challenge is its final response.
///
/// Thread safety: a value type; safe to use from any thread.
public struct SIPCredentials: Sendable, Hashable {
    /// The authentication user name (often, but not always, the user part of our URI).
    public var username: String
    public var password: String
    /// The realm they are for; nil: the registrar's (see above).
    public var realm: String?

    public init(username: String, password: String, realm: String? = nil) {
        self.username = username
        self.password = password
        self.realm = realm
    }
}

extension SIPCredentials {
    /// The `Authorization` value answering one `WWW-Authenticate` or `Proxy-Authenticate`
    /// value, whatever its realm (the user agent decides which realms it answers, see above),
    /// and whether `authenticationInfo` (a 2xx's `Authentication-Info`) proves the server
    /// knows the password; nil when the challenge is not a Digest one we can answer. For tools
    /// and the fuzz targets (Docs/fuzzing.md): the user agent answers challenges itself.
    public func answer(challenge: String, method: SIPMethod, uri: String, body: [UInt8] = [], cnonce: String,
                       authenticationInfo: String? = nil) -> (authorization: String, verified: Bool)? {
        guard let parsed = DigestChallenge.parse(challenge) else { return nil }
        let answer = parsed.answer(credentials: self, method: method.rawValue, uri: uri, body: body, cnonce: cnonce)
        return (answer.header, authenticationInfo.map { answer.verifies($0, responseBody: body) } ?? true)
    }
}

/// A `WWW-Authenticate` or `Proxy-Authenticate` challenge of the Digest scheme
/// (RFC 3261 section 22.4, RFC 7616 section 3.3, RFC 8760 for the SHA-256 algorithms).
struct DigestChallenge: Sendable, Equatable {
    enum Algorithm: String, Sendable, CaseIterable {
        case md5 = "MD5", md5Session = "MD5-sess", sha256 = "SHA-256", sha256Session = "SHA-256-sess"

        /// Stronger algorithms are preferred when a server offers several (RFC 8760 section 2.4).
        var strength: Int { self == .sha256 || self == .sha256Session ? 2 : 1 }
        var isSession: Bool { self == .md5Session || self == .sha256Session }

        /// The digest of `bytes` in lowercase hex, as the `response` computation takes it.
        func digest(_ bytes: [UInt8]) -> String {
            MessageDigest.hex(self == .md5 || self == .md5Session ? MessageDigest.md5(bytes) : MessageDigest.sha256(bytes))
        }
    }

    var realm: String
    var nonce: String
    var opaque: String?
    var algorithm: Algorithm
    /// The quality-of-protection values offered (`auth`, `auth-int`); empty for RFC 2069 digests.
    var qop: [String]
    /// The nonce was stale: the credentials were right, retry with the new nonce.
    var stale: Bool

    /// Parses one challenge; nil for another scheme, an algorithm we do not know, or a
    /// challenge without a realm or nonce.
    static func parse(_ value: String) -> DigestChallenge? {
        let text = value[...].trimmed
        guard let space = text.firstIndex(where: { $0 == " " || $0 == "\t" }),
              text[..<space].equalsIgnoringCase("Digest"), let fields = digestParameters(text[space...])
        else { return nil }
        guard let realm = fields["realm"], let nonce = fields["nonce"] else { return nil }
        var algorithm = Algorithm.md5
        if let name = fields["algorithm"] {
            guard let known = Algorithm.allCases.first(where: { $0.rawValue.equalsIgnoringCase(name) }) else { return nil }
            algorithm = known
        }
        let qop = (fields["qop"] ?? "").split(separator: ",").map { String($0[...].trimmed).asciiLowercased }
        return DigestChallenge(realm: realm, nonce: nonce, opaque: fields["opaque"], algorithm: algorithm,
                               qop: qop.filter { !$0.isEmpty }, stale: fields["stale"].map { $0.equalsIgnoringCase("true") } ?? false)
    }

    /// The `Authorization` / `Proxy-Authorization` value answering this challenge for a request.
    ///
    /// - Parameters:
    ///   - uri: the request's Request-URI, as sent (the `uri` parameter).
    ///   - body: the request's body (hashed only for `qop=auth-int`).
    ///   - cnonce: our client nonce (used with qop and the -sess algorithms).
    ///   - nonceCount: how many requests this nonce has answered, this one included.
    func authorization(credentials: SIPCredentials, method: String, uri: String, body: [UInt8] = [],
                       cnonce: String, nonceCount: UInt32 = 1) -> String {
        answer(credentials: credentials, method: method, uri: uri, body: body, cnonce: cnonce, nonceCount: nonceCount).header
    }

    /// The answer to this challenge (see ``authorization(credentials:method:uri:body:cnonce:nonceCount:)``),
    /// with what checking the server's `rspauth` needs.
    func answer(credentials: SIPCredentials, method: String, uri: String, body: [UInt8] = [],
                cnonce: String, nonceCount: UInt32 = 1) -> DigestAnswer {
        let h = { (text: String) in algorithm.digest(Array(text.utf8)) }
        var ha1 = h("\(credentials.username):\(realm):\(credentials.password)")
        if algorithm.isSession { ha1 = h("\(ha1):\(nonce):\(cnonce)") }
        // `auth` when offered (what every server accepts), `auth-int` only when it is all there is.
        let chosenQop: String? = qop.contains("auth") ? "auth" : qop.contains("auth-int") ? "auth-int" : nil
        let ha2 = chosenQop == "auth-int" ? h("\(method):\(uri):\(algorithm.digest(body))") : h("\(method):\(uri)")
        let nc = String(nonceCount, radix: 16).leftPadded(to: 8)
        let response = chosenQop.map { h("\(ha1):\(nonce):\(nc):\(cnonce):\($0):\(ha2)") } ?? h("\(ha1):\(nonce):\(ha2)")

        var fields = ["username=\(quotedString(credentials.username))", "realm=\(quotedString(realm))",
                      "nonce=\(quotedString(nonce))", "uri=\(quotedString(uri))", "response=\(quotedString(response))",
                      "algorithm=\(algorithm.rawValue)"]
        if let chosenQop { fields += ["qop=\(chosenQop)", "nc=\(nc)", "cnonce=\(quotedString(cnonce))"] }
        else if algorithm.isSession { fields.append("cnonce=\(quotedString(cnonce))") }
        if let opaque { fields.append("opaque=\(quotedString(opaque))") }
        return DigestAnswer(challenge: self, ha1: ha1, qop: chosenQop, cnonce: cnonce, nc: nc, uri: uri,
                            header: "Digest " + fields.joined(separator: ", "))
    }
}

/// Our answer to one challenge: the header value, and what checking the server's proof that
/// it knows the password too (`rspauth`, RFC 2617 section 3.2.3, RFC 7616 section 3.5) needs.
struct DigestAnswer: Sendable {
    let challenge: DigestChallenge
    /// H(A1): a hash of the password, kept only for the transaction's life.
    let ha1: String
    let qop: String?
    let cnonce: String
    let nc: String
    let uri: String
    let header: String

    /// Whether `info` (an `Authentication-Info` value) proves the server knows the password:
    /// its `rspauth` is the response digest with an empty method (and for `auth-int`, the
    /// response's body). True when it carries no `rspauth` (it is optional).
    func verifies(_ info: String, responseBody: [UInt8]) -> Bool {
        guard let fields = digestParameters(info[...]) else { return false }
        guard let rspauth = fields["rspauth"] else { return true }
        let h = { (text: String) in challenge.algorithm.digest(Array(text.utf8)) }
        let ha2 = qop == "auth-int" ? h(":\(uri):\(challenge.algorithm.digest(responseBody))") : h(":\(uri)")
        let expected = qop.map { h("\(ha1):\(challenge.nonce):\(nc):\(cnonce):\($0):\(ha2)") }
            ?? h("\(ha1):\(challenge.nonce):\(ha2)")
        return rspauth.asciiLowercased == expected
    }
}

/// The `name=value` list of a digest header (after the scheme, or all of an
/// `Authentication-Info`), names lowercased, quoted values unquoted; nil when malformed.
func digestParameters(_ text: Substring) -> [String: String]? {
    guard let parts = try? text.splitTopLevel(.comma, header: "WWW-Authenticate") else { return nil }
    var fields: [String: String] = [:]
    for part in parts where !part.isEmpty {
        guard let eq = part.firstIndex(ofByte: .equals) else { return nil }
        let name = String(part[..<eq].trimmed).asciiLowercased
        let raw = part[part.utf8.index(after: eq)...].trimmed
        guard let value = raw.utf8.first == .quote ? unquotedString(raw) : String(raw),
              !value.utf8.contains(where: { $0 == .cr || $0 == .lf })  // we copy values into a header
        else { return nil }
        fields[name] = value
    }
    return fields
}

extension SIPHeaders {
    /// The Digest challenges of a 401 (`WWW-Authenticate`) or 407 (`Proxy-Authenticate`)
    /// that we can answer: per realm, the strongest algorithm offered.
    func digestChallenges(proxy: Bool) -> [DigestChallenge] {
        var best: [String: DigestChallenge] = [:]
        var order: [String] = []
        let fields = (try? values(proxy ? "Proxy-Authenticate" : "WWW-Authenticate")) ?? []
        for challenge in fields.compactMap(DigestChallenge.parse) {
            if let current = best[challenge.realm] {
                if challenge.algorithm.strength > current.algorithm.strength { best[challenge.realm] = challenge }
            } else {
                best[challenge.realm] = challenge
                order.append(challenge.realm)
            }
        }
        return order.compactMap { best[$0] }
    }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
