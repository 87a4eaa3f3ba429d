/// The `branch` prefix of RFC 3261 transactions (section 8.1.1.7).
public let sipMagicCookie = "z9hG4bK"

/// One `Via` value: `SIP/2.0/UDP host:port;branch=z9hG4bK...;rport`.
///
/// Thread safety: a value type; safe to use from any thread.
public struct SIPVia: Sendable, Hashable, CustomStringConvertible {
    /// `UDP`, `TCP`, `TLS`... (as written, usually uppercase).
    public var transport: String
    /// The `sent-by` host (IPv6 without brackets).
    public var host: String
    public var port: UInt16?
    public var parameters: SIPParameters

    public init(transport: String = "UDP", host: String, port: UInt16?, parameters: SIPParameters = SIPParameters()) {
        self.transport = transport
        self.host = host
        self.port = port
        self.parameters = parameters
    }

    public var branch: String? {
        get { parameters["branch"] }
        set { if let newValue { parameters["branch"] = newValue } else { parameters.remove("branch") } }
    }

    /// The `received` parameter: the source address the next hop saw (RFC 3261 section 18.2.1).
    public var received: String? { parameters["received"] }

    /// The `rport` parameter (RFC 3581): nil when absent, 0 when present without a value.
    public var rport: UInt16? {
        guard parameters.contains("rport") else { return nil }
        return parameters["rport"].flatMap { UInt16($0) } ?? 0
    }

    /// `host:port` as written in the Via (the transaction-matching `sent-by`).
    public var sentBy: String {
        let h = host.utf8.contains(.colon) ? "[\(host)]" : host
        return port.map { "\(h):\($0)" } ?? h
    }

    public var description: String { "SIP/2.0/\(transport) \(sentBy)\(parameters)" }

    /// Parses one Via value (not a comma-separated list).
    ///
    /// - Throws: ``SIPParseError/badHeaderValue(_:)`` with `Via`.
    public init(parsing text: String) throws(SIPParseError) {
        self = try SIPVia.parse(text[...])
    }

    static func parse(_ text: Substring) throws(SIPParseError) -> SIPVia {
        // sent-protocol = "SIP" SLASH "2.0" SLASH transport (LWS allowed around the slashes)
        var rest = text.trimmed
        var protocolParts: [Substring] = []
        for _ in 0..<3 {
            let u = rest.utf8
            var end = u.startIndex
            while end < u.endIndex, u[end].isTokenCharacter { end = u.index(after: end) }
            protocolParts.append(rest[..<end])
            rest = rest[end...].trimmed
            if protocolParts.count < 3 {
                guard rest.utf8.first == .slash else { throw .badHeaderValue("Via") }
                rest = rest.dropFirst().trimmed
            }
        }
        guard protocolParts[0].equalsIgnoringCase("SIP"), protocolParts[1] == "2.0", protocolParts[2].isToken else {
            throw .badHeaderValue("Via")
        }
        let host: String, port: UInt16?, after: Substring
        do {
            (host, port, after) = try SIPURI.parseHostPort(rest)
        } catch {
            throw .badHeaderValue("Via")
        }
        let parameters = try SIPParameters.parse(after, header: "Via")
        return SIPVia(transport: String(protocolParts[2]), host: host, port: port, parameters: parameters)
    }
}

/// A `name-addr` or `addr-spec` with header parameters: the value of `From`, `To`,
/// `Contact`, `Route` and `Record-Route` (`"Alice" <sip:alice@10.0.0.1>;tag=1928301774`).
///
/// Thread safety: a value type; safe to use from any thread.
public struct SIPNameAddress: Sendable, Hashable, CustomStringConvertible {
    public var displayName: String?
    public var uri: SIPURI
    /// Header parameters (after the `>`), such as `tag` or `expires`.
    public var parameters: SIPParameters

    public init(displayName: String? = nil, uri: SIPURI, parameters: SIPParameters = SIPParameters()) {
        self.displayName = displayName
        self.uri = uri
        self.parameters = parameters
    }

    public var tag: String? {
        get { parameters["tag"] }
        set { if let newValue { parameters["tag"] = newValue } else { parameters.remove("tag") } }
    }

    /// Always the `name-addr` form (angle brackets), which is valid for every URI.
    public var description: String {
        var out = ""
        if let displayName, !displayName.isEmpty { out = quotedString(displayName) + " " }
        return out + "<\(uri)>" + parameters.description
    }

    /// Parses one value (not a comma-separated list).
    ///
    /// - Throws: ``SIPParseError/badHeaderValue(_:)`` naming `header`.
    public init(parsing text: String, header: String = "From") throws(SIPParseError) {
        self = try SIPNameAddress.parse(text[...], header: header)
    }

    static func parse(_ text: Substring, header: String) throws(SIPParseError) -> SIPNameAddress {
        let text = text.trimmed
        var displayName: String?
        let uriText: Substring, after: Substring
        if text.utf8.first == .quote {
            // quoted display name, then <URI>
            guard let close = closingQuote(text) else { throw .badHeaderValue(header) }
            displayName = unquotedString(text[...close])
            let rest = text[text.utf8.index(after: close)...].trimmed
            guard rest.utf8.first == .less, let gt = rest.firstIndex(ofByte: .greater) else { throw .badHeaderValue(header) }
            uriText = rest[rest.utf8.index(after: rest.startIndex)..<gt]
            after = rest[rest.utf8.index(after: gt)...]
        } else if let lt = text.firstIndex(ofByte: .less) {
            guard let gt = text[lt...].firstIndex(ofByte: .greater) else { throw .badHeaderValue(header) }
            let name = text[..<lt].trimmed
            if !name.isEmpty {
                // token *(LWS token); UTF-8 letters tolerated (seen in the wild)
                guard name.utf8.allSatisfy({ $0.isTokenCharacter || $0.isLWS || $0 >= 0x80 }) else {
                    throw .badHeaderValue(header)
                }
                displayName = String(name)
            }
            uriText = text[text.utf8.index(after: lt)..<gt]
            after = text[text.utf8.index(after: gt)...]
        } else {
            // addr-spec: parameters after the URI belong to the header (RFC 3261 section 20.10)
            let semicolon = text.firstIndex(ofByte: .semicolon) ?? text.endIndex
            uriText = text[..<semicolon]
            after = text[semicolon...]
            guard !uriText.utf8.contains(where: \.isLWS), !uriText.utf8.contains(.question) else {
                throw .badHeaderValue(header)
            }
        }
        let uri: SIPURI
        do { uri = try SIPURI.parse(uriText) } catch { throw .badHeaderValue(header) }
        return SIPNameAddress(displayName: displayName, uri: uri,
                              parameters: try SIPParameters.parse(after, header: header))
    }

    private static func closingQuote(_ text: Substring) -> Substring.Index? {
        let u = text.utf8
        var i = u.index(after: u.startIndex)
        while i < u.endIndex {
            if u[i] == .backslash {
                i = u.index(after: i)
                if i == u.endIndex { return nil }
            } else if u[i] == .quote {
                return i
            }
            i = u.index(after: i)
        }
        return nil
    }
}

/// The `CSeq` value: a sequence number and a method (`CSeq: 314159 INVITE`).
///
/// Thread safety: a value type; safe to use from any thread.
public struct SIPCSeq: Sendable, Hashable, CustomStringConvertible {
    public var sequence: UInt32
    public var method: SIPMethod

    public init(_ sequence: UInt32, _ method: SIPMethod) {
        self.sequence = sequence
        self.method = method
    }

    public var description: String { "\(sequence) \(method)" }

    /// - Throws: ``SIPParseError/badHeaderValue(_:)`` with `CSeq`.
    public init(parsing text: String) throws(SIPParseError) {
        let parts = text.split(whereSeparator: { $0 == " " || $0 == "\t" })
        guard parts.count == 2, parts[0].utf8.count <= 10, parts[0].utf8.allSatisfy(\.isDigit),
              let number = UInt32(parts[0]), parts[1].isToken
        else { throw .badHeaderValue("CSeq") }
        self.init(number, SIPMethod(String(parts[1])))
    }
}

/// One `Reason` value (RFC 3326): why a request (BYE, CANCEL) was sent, as a SIP status or a
/// Q.850 cause (`Reason: Q.850;cause=16;text="Normal call clearing"`).
///
/// Thread safety: a value type; safe to use from any thread.
public struct SIPReason: Sendable, Hashable, CustomStringConvertible {
    /// `SIP` or `Q.850` (as written).
    public var protocolName: String
    /// The `cause` parameter: a SIP status code or a Q.850 cause value.
    public var cause: Int?
    /// The `text` parameter without its quotes.
    public var text: String?

    public init(protocolName: String = "SIP", cause: Int?, text: String? = nil) {
        self.protocolName = protocolName
        self.cause = cause
        self.text = text
    }

    public var description: String {
        var out = protocolName
        if let cause { out += ";cause=\(cause)" }
        if let text { out += ";text=" + quotedString(text) }
        return out
    }

    /// - Throws: ``SIPParseError/badHeaderValue(_:)`` with `Reason`.
    public init(parsing text: String) throws(SIPParseError) {
        let value = text[...].trimmed
        let end = value.firstIndex(ofByte: .semicolon) ?? value.endIndex
        let name = value[..<end].trimmed
        guard name.isToken else { throw .badHeaderValue("Reason") }
        let parameters = try SIPParameters.parse(value[end...], header: "Reason")
        var cause: Int?
        if let c = parameters["cause"] {
            guard c.utf8.count <= 6, let n = Int(c) else { throw .badHeaderValue("Reason") }
            cause = n
        }
        self.init(protocolName: String(name), cause: cause, text: parameters["text"].map { unquotedString($0[...]) ?? $0 })
    }
}

// MARK: - Typed accessors

extension SIPHeaders {
    /// Every `Via` value, top first.
    ///
    /// - Throws: ``SIPParseError/missingHeader(_:)`` when there is none,
    ///   ``SIPParseError/badHeaderValue(_:)`` when one does not parse.
    public func via() throws(SIPParseError) -> [SIPVia] {
        var result: [SIPVia] = []
        for value in try values("Via") { result.append(try SIPVia.parse(value[...])) }
        guard !result.isEmpty else { throw .missingHeader("Via") }
        return result
    }

    /// The top `Via` (the one this element's transaction layer matches on).
    public func topVia() throws(SIPParseError) -> SIPVia {
        // The first value of the first field, without splitting the rest of the list.
        guard let field = self["Via"] else { throw .missingHeader("Via") }
        guard let (top, _) = field[...].splitFirstTopLevel(.comma) else { throw .badHeaderValue("Via") }
        if top.isEmpty {  // an empty element: the next one is the top
            guard let first = try values("Via").first else { throw .missingHeader("Via") }
            return try SIPVia.parse(first[...])
        }
        return try SIPVia.parse(top)
    }

    public func from() throws(SIPParseError) -> SIPNameAddress { try nameAddress("From") }
    public func to() throws(SIPParseError) -> SIPNameAddress { try nameAddress("To") }

    /// The `Call-ID` (one word, `local@host` or a token).
    public func callID() throws(SIPParseError) -> String {
        guard let value = self["Call-ID"] else { throw .missingHeader("Call-ID") }
        let id = value[...].trimmed
        guard !id.isEmpty, !id.utf8.contains(where: { $0.isLWS || $0 < .space }) else { throw .badHeaderValue("Call-ID") }
        return String(id)
    }

    public func cseq() throws(SIPParseError) -> SIPCSeq {
        guard let value = self["CSeq"] else { throw .missingHeader("CSeq") }
        return try SIPCSeq(parsing: value)
    }

    /// `Contact` values (empty when absent; `*` is not a name-addr and is an error here).
    public func contacts() throws(SIPParseError) -> [SIPNameAddress] { try nameAddresses("Contact") }

    /// The first `Contact` value (nil when absent or malformed), without parsing the rest of a list.
    var firstContact: SIPNameAddress? {
        guard let field = self["Contact"], let (first, _) = field[...].splitFirstTopLevel(.comma) else { return nil }
        return try? SIPNameAddress.parse(first, header: "Contact")
    }

    /// How many values a list header has (counted, not parsed), stopping past `limit`.
    func valueCount(_ name: String, limit: Int) -> Int {
        var count = 0
        for field in fields where field.name == SIPHeaders.canonicalName(name) {
            count += field.value[...].countTopLevel(.comma, limit: limit) ?? 1
            if count > limit { break }
        }
        return count
    }

    /// `Record-Route` values, in message order.
    public func recordRoutes() throws(SIPParseError) -> [SIPNameAddress] { try nameAddresses("Record-Route") }

    /// `Route` values, in message order.
    public func routes() throws(SIPParseError) -> [SIPNameAddress] { try nameAddresses("Route") }

    /// `Reason` values (RFC 3326), empty when absent.
    public func reasons() throws(SIPParseError) -> [SIPReason] {
        var result: [SIPReason] = []
        for value in try values("Reason") { result.append(try SIPReason(parsing: value)) }
        return result
    }

    /// `Max-Forwards` (0 ... 255), nil when absent.
    public func maxForwards() throws(SIPParseError) -> Int? {
        guard let value = self["Max-Forwards"] else { return nil }
        let text = value[...].trimmed
        guard !text.isEmpty, text.utf8.count <= 3, text.utf8.allSatisfy(\.isDigit), let n = Int(text), n <= 255 else {
            throw .badHeaderValue("Max-Forwards")
        }
        return n
    }

    /// `Content-Length`, nil when absent.
    public func contentLength() throws(SIPParseError) -> Int? {
        guard let value = self["Content-Length"] else { return nil }
        let text = value[...].trimmed
        guard !text.isEmpty, text.utf8.count <= 9, text.utf8.allSatisfy(\.isDigit), let n = Int(text) else {
            throw .badContentLength
        }
        return n
    }

    /// `Content-Type` without parameters, lowercased (`application/sdp`); nil when absent.
    public var contentType: String? {
        guard let value = self["Content-Type"] else { return nil }
        let type = value[...].split(separator: ";", maxSplits: 1).first.map { $0.trimmed } ?? ""
        return String(type).asciiLowercased
    }

    /// The option tags of `Supported`, `Require`, `Unsupported` or the methods of `Allow`.
    public func tokens(_ name: String) -> [String] {
        ((try? values(name)) ?? []).filter { !$0.isEmpty }
    }

    private func nameAddress(_ name: String) throws(SIPParseError) -> SIPNameAddress {
        guard let value = self[name] else { throw .missingHeader(name) }
        return try SIPNameAddress.parse(value[...], header: name)
    }

    private func nameAddresses(_ name: String) throws(SIPParseError) -> [SIPNameAddress] {
        var result: [SIPNameAddress] = []
        for value in try values(name) { result.append(try SIPNameAddress.parse(value[...], header: name)) }
        return result
    }
}
