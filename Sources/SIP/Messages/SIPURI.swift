/// A `sip:` or `sips:` URI (RFC 3261 section 19.1): `sip:user:password@host:port;params?headers`.
///
/// The host is kept without brackets (an IPv6 literal is written back in brackets); the user,
/// parameters and headers are kept as written (escapes are not decoded). Comparison is
/// structural, not the full RFC 3261 section 19.1.4 rules.
///
/// Thread safety: a value type; safe to use from any thread.
public struct SIPURI: Sendable, Hashable, CustomStringConvertible, LosslessStringConvertible {
    /// `sip` or `sips` (lowercase).
    public var scheme: String
    public var user: String?
    public var password: String?
    /// A host name, an IPv4 literal, or an IPv6 literal without its brackets.
    public var host: String
    public var port: UInt16?
    public var parameters: SIPParameters
    /// The `?h=v&...` part without the `?`, as written.
    public var headers: String?

    public init(scheme: String = "sip", user: String? = nil, host: String, port: UInt16? = nil,
                parameters: SIPParameters = SIPParameters()) {
        self.scheme = scheme
        self.user = user
        self.host = host
        self.port = port
        self.parameters = parameters
    }

    /// Parses a URI; nil when it is not a valid `sip:`/`sips:` URI.
    public init?(_ description: String) {
        guard let uri = try? SIPURI.parse(description[...]) else { return nil }
        self = uri
    }

    /// Parses a URI.
    ///
    /// - Throws: ``SIPParseError/unsupportedURIScheme(_:)`` for another scheme (`tel:`),
    ///   ``SIPParseError/badURI`` for anything else that does not parse.
    public init(parsing text: String) throws(SIPParseError) {
        self = try SIPURI.parse(text[...])
    }

    /// The port to send to: the URI's port, or 5060 (5061 for `sips`).
    public var effectivePort: UInt16 { port ?? (scheme == "sips" ? 5061 : 5060) }

    /// The `transport` parameter, lowercased (nil when absent: UDP for `sip:`).
    public var transport: String? { parameters["transport"]?.asciiLowercased }

    /// `host` as written in a URI or Via: IPv6 literals in brackets.
    public var hostForURI: String { host.utf8.contains(.colon) ? "[\(host)]" : host }

    public var description: String {
        var out = scheme + ":"
        if let user {
            out += user
            if let password { out += ":" + password }
            out += "@"
        }
        out += hostForURI
        if let port { out += ":\(port)" }
        out += parameters.description
        if let headers { out += "?" + headers }
        return out
    }

    static func parse(_ text: Substring) throws(SIPParseError) -> SIPURI {
        let text = text.trimmed
        guard let colon = text.firstIndex(ofByte: .colon) else { throw .badURI }
        let scheme = String(text[..<colon]).asciiLowercased
        guard scheme == "sip" || scheme == "sips" else {
            throw Substring(scheme).isToken ? .unsupportedURIScheme(scheme) : .badURI
        }
        var rest = text[text.utf8.index(after: colon)...]

        var user: String?, password: String?
        if let at = rest.firstIndex(ofByte: .at) {
            let userinfo = rest[..<at]
            rest = rest[rest.utf8.index(after: at)...]
            if let c = userinfo.firstIndex(ofByte: .colon) {
                user = String(userinfo[..<c])
                password = String(userinfo[userinfo.utf8.index(after: c)...])
            } else {
                user = String(userinfo)
            }
            // What a name-addr would not hold inside its angle brackets cannot be written back.
            guard let u = user, !u.isEmpty, u.utf8.allSatisfy(isWritableInAngles),
                  password?.utf8.allSatisfy(isWritableInAngles) ?? true
            else { throw .badURI }
        }

        var headers: String?
        if let q = rest.firstIndex(ofByte: .question) {
            headers = String(rest[rest.utf8.index(after: q)...])
            rest = rest[..<q]
            guard headers!.utf8.allSatisfy(isWritableInAngles) else { throw .badURI }
        }

        let (host, port, afterHost) = try parseHostPort(rest)
        let parameters: SIPParameters
        do { parameters = try SIPParameters.parse(afterHost, header: "URI") } catch { throw .badURI }
        guard parameters.parameters.allSatisfy({ $0.value?.utf8.allSatisfy(isWritableInAngles) ?? true }) else { throw .badURI }
        var uri = SIPURI(scheme: scheme, user: user, host: host, port: port, parameters: parameters)
        uri.password = password
        uri.headers = headers
        return uri
    }

    /// Parses `host[:port]` at the start of `text`; returns what follows.
    /// Shared with the Via `sent-by`.
    static func parseHostPort(_ text: Substring) throws(SIPParseError) -> (String, UInt16?, Substring) {
        let u = text.utf8
        var i = u.startIndex
        let host: Substring
        if u.first == .leftBracket {
            guard let close = u.firstIndex(of: .rightBracket) else { throw .badURI }
            host = text[u.index(after: i)..<close]
            guard !host.isEmpty, host.utf8.allSatisfy({ $0 == .colon || $0 == 0x2E || isHexDigit($0) }) else { throw .badURI }
            i = u.index(after: close)
        } else {
            while i < u.endIndex, u[i] != .colon, u[i] != .semicolon, !u[i].isLWS { i = u.index(after: i) }
            host = text[u.startIndex..<i]
            guard !host.isEmpty, host.utf8.allSatisfy(isHostCharacter) else { throw .badURI }
        }
        var port: UInt16?
        if i < u.endIndex, u[i] == .colon {
            i = u.index(after: i)
            let start = i
            while i < u.endIndex, u[i].isDigit { i = u.index(after: i) }
            guard i > start, u.distance(from: start, to: i) <= 5, let p = UInt16(text[start..<i]) else { throw .badURI }
            port = p
        }
        return (String(host), port, text[i...])
    }
}

/// A byte a URI's user, password or headers may hold and still be written between `<` and `>`:
/// no space or control, no angle bracket, no quote.
private func isWritableInAngles(_ c: UInt8) -> Bool {
    c > .space && c != 0x7F && c != .less && c != .greater && c != .quote
}

/// Host names and IPv4 literals: letters, digits, `-`, `.` (and `_`, seen in the wild).
private func isHostCharacter(_ c: UInt8) -> Bool {
    switch c {
    case 0x30...0x39, 0x41...0x5A, 0x61...0x7A, 0x2D, 0x2E, 0x5F: return true
    default: return false
    }
}

private func isHexDigit(_ c: UInt8) -> Bool {
    c.isDigit || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66)
}
