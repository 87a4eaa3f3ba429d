/// One header field as it appears in a message: `Name: value`.
///
/// Thread safety: a value type; safe to use from any thread.
public struct SIPHeaderField: Sendable, Hashable {
    /// The canonical long name for known headers (`Call-ID` for `i` or `call-id`); otherwise as written.
    public var name: String
    public var value: String

    public init(name: String, value: String) {
        self.name = SIPHeaders.canonicalName(name)
        self.value = value
    }
}

/// The header fields of a message, in order.
///
/// Names are case-insensitive and compact forms (`v i f t m l c k s e o r b u x`) are
/// expanded to their long names when a field is added or parsed, so `headers["i"]` and
/// `headers["call-id"]` both find `Call-ID`. Values are kept as written; the typed
/// accessors (``via()``, ``from()``, ``cseq()``...) parse them on demand.
///
/// Thread safety: a value type; safe to use from any thread.
public struct SIPHeaders: Sendable, Hashable, Sequence, ExpressibleByDictionaryLiteral {
    public private(set) var fields: [SIPHeaderField] = []

    public init() {}

    /// Headers in the given order (dictionary-literal syntax, but order and repeats are kept).
    public init(dictionaryLiteral elements: (String, String)...) {
        for (name, value) in elements { add(name, value) }
    }

    public var count: Int { fields.count }
    public func makeIterator() -> IndexingIterator<[SIPHeaderField]> { fields.makeIterator() }

    /// The value of the first field with this name.
    public subscript(name: String) -> String? {
        let matches = SIPHeaders.matcher(for: name)
        for field in fields where matches(field.name) { return field.value }
        return nil
    }

    /// Whether a field with this name is present.
    public func contains(_ name: String) -> Bool { self[name] != nil }

    /// Every value of a header, in order. For the headers whose grammar is a comma-separated
    /// list (`Via`, `Contact`, `Route`, `Record-Route`, `Allow`, `Supported`, `Require`...) each
    /// element is one value, whether they came in one field or several.
    ///
    /// - Throws: ``SIPParseError/badHeaderValue(_:)`` when a list has an unterminated quote or `<`.
    public func values(_ name: String) throws(SIPParseError) -> [String] {
        let name = SIPHeaders.canonicalName(name)
        let matches = SIPHeaders.matcher(for: name)
        var result: [String] = []
        let isList = SIPHeaders.listHeaders.contains(name.asciiLowercased)
        for field in fields where matches(field.name) {
            if isList {
                for part in try field.value[...].splitTopLevel(.comma, header: name) where !part.isEmpty {
                    result.append(String(part))
                }
            } else {
                result.append(field.value)
            }
        }
        return result
    }

    /// Appends a field.
    public mutating func add(_ name: String, _ value: String) {
        fields.append(SIPHeaderField(name: name, value: value))
    }

    /// Appends a field (as is).
    public mutating func add(_ field: SIPHeaderField) { fields.append(field) }

    /// Replaces every field with this name by one field, kept at the position of the first
    /// (appended when there was none).
    public mutating func set(_ name: String, _ value: String) {
        let matches = SIPHeaders.matcher(for: name)
        if let first = fields.firstIndex(where: { matches($0.name) }) {
            fields[first].value = value
            var i = fields.index(after: first)
            while i < fields.endIndex {
                if matches(fields[i].name) { fields.remove(at: i) } else { i += 1 }
            }
        } else {
            add(name, value)
        }
    }

    /// Inserts a field before all others (a new top `Via`).
    public mutating func prepend(_ name: String, _ value: String) {
        fields.insert(SIPHeaderField(name: name, value: value), at: 0)
    }

    /// Replaces the top `Via` value, leaving the rest of its list as written: linear in the
    /// fields' size, whatever the number of values (a response copies the list as it came).
    mutating func replaceTopVia(with value: String) {
        guard let i = fields.firstIndex(where: { $0.name == "Via" }) else { return }
        switch fields[i].value[...].splitFirstTopLevel(.comma) {
        case let (top, rest)? where !top.isEmpty:
            fields[i].value = rest.map { value + ", " + $0 } ?? value
        default:
            // An empty first element or an unterminated quote (rare): rebuild the list in one field.
            let others = ((try? values("Via")) ?? []).dropFirst()
            remove("Via")
            fields.insert(SIPHeaderField(name: "Via", value: ([value] + others).joined(separator: ", ")), at: Swift.min(i, fields.count))
        }
    }

    /// Removes every field with this name.
    public mutating func remove(_ name: String) {
        let matches = SIPHeaders.matcher(for: name)
        fields.removeAll { matches($0.name) }
    }

    // MARK: Names

    /// The long name for a compact form or a known header in any case; other names unchanged.
    public static func canonicalName(_ name: String) -> String {
        if let known = canonicalNames[name] { return known }  // the common case: already canonical
        return canonicalNames[name.asciiLowercased] ?? name
    }

    /// A test for field names equal to `name`. Known names are stored in canonical spelling, so
    /// they compare exactly (fast); other names compare case-insensitively.
    private static func matcher(for name: String) -> (String) -> Bool {
        if let known = canonicalNames[name] ?? canonicalNames[name.asciiLowercased] {
            return { $0 == known }
        }
        return { $0.equalsIgnoringCase(name) }
    }

    /// Compact forms (RFC 3261 section 7.3.3 and the extensions that define one).
    static let compactForms: [String: String] = [
        "v": "Via", "i": "Call-ID", "f": "From", "t": "To", "m": "Contact", "l": "Content-Length",
        "c": "Content-Type", "k": "Supported", "s": "Subject", "e": "Content-Encoding",
        "o": "Event", "r": "Refer-To", "b": "Referred-By", "u": "Allow-Events", "x": "Session-Expires",
    ]

    static let knownNames = [
        "Via", "Call-ID", "From", "To", "Contact", "Content-Length", "Content-Type", "Supported",
        "Subject", "Content-Encoding", "Event", "Refer-To", "Referred-By", "Allow-Events",
        "Session-Expires", "CSeq", "Max-Forwards", "Allow", "Accept", "Accept-Encoding",
        "Accept-Language", "User-Agent", "Server", "Reason", "Route", "Record-Route", "Require",
        "Proxy-Require", "Unsupported", "Expires", "Min-Expires", "Retry-After", "Timestamp",
        "Warning", "Date", "Organization", "Priority", "Call-Info", "Alert-Info", "Error-Info",
        "In-Reply-To", "Content-Disposition", "Content-Language", "MIME-Version", "Authorization",
        "WWW-Authenticate", "Proxy-Authenticate", "Proxy-Authorization", "RSeq", "RAck",
        "P-Asserted-Identity", "Min-SE", "Authentication-Info", "Proxy-Authentication-Info",
    ]

    private static let canonicalNames: [String: String] = {
        var table: [String: String] = [:]
        for name in knownNames {
            table[name] = name
            table[name.asciiLowercased] = name
        }
        for (short, long) in compactForms {
            table[short] = long
            table[short.uppercased()] = long
        }
        return table
    }()

    /// Lowercased names of the headers whose values are comma-separated lists.
    static let listHeaders: Set<String> = [
        "via", "contact", "route", "record-route", "allow", "supported", "require", "proxy-require",
        "unsupported", "accept", "accept-encoding", "accept-language", "content-encoding",
        "content-language", "allow-events", "in-reply-to", "warning", "call-info", "alert-info",
        "error-info", "reason",
    ]
}
