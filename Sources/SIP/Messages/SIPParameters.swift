/// Ordered `;name[=value]` parameters of a URI or a header value (`branch`, `tag`, `lr`, `transport`...).
///
/// Names compare case-insensitively (RFC 3261 section 7.3.1); values are kept as written,
/// including the quotes of a quoted value. A flag parameter (`;lr`, `;rport`) has a nil value.
///
/// Thread safety: a value type; safe to use from any thread.
public struct SIPParameters: Sendable, Hashable, Sequence, CustomStringConvertible, ExpressibleByDictionaryLiteral {
    public struct Parameter: Sendable, Hashable {
        public var name: String
        public var value: String?

        public init(name: String, value: String? = nil) {
            self.name = name
            self.value = value
        }
    }

    public private(set) var parameters: [Parameter] = []

    /// More parameters than this make a URI or header value malformed (work and memory per value stay small).
    public static let maximumCount = 64

    public init() {}

    public init(dictionaryLiteral elements: (String, String?)...) {
        for (name, value) in elements { self[name] = value }
    }

    public var isEmpty: Bool { parameters.isEmpty }
    public var count: Int { parameters.count }

    public func makeIterator() -> IndexingIterator<[Parameter]> { parameters.makeIterator() }

    /// Whether a parameter with this name is present (with or without a value).
    public func contains(_ name: String) -> Bool { index(of: name) != nil }

    /// The value of a parameter; nil when it is absent or a flag. Setting nil makes it a flag;
    /// use ``remove(_:)`` to take it away.
    public subscript(name: String) -> String? {
        get { index(of: name).flatMap { parameters[$0].value } }
        set {
            if let i = index(of: name) {
                parameters[i].value = newValue
            } else {
                parameters.append(Parameter(name: name, value: newValue))
            }
        }
    }

    public mutating func remove(_ name: String) {
        parameters.removeAll { $0.name.equalsIgnoringCase(name) }
    }

    /// `;name=value;flag` as written in a message (empty when there are none).
    public var description: String {
        var out = ""
        for p in parameters {
            out += ";" + p.name
            if let value = p.value { out += "=" + value }
        }
        return out
    }

    private func index(of name: String) -> Int? { parameters.firstIndex { $0.name.equalsIgnoringCase(name) } }

    /// Parses `;a=b;c` (the text after the part the parameters belong to; it may be empty).
    ///
    /// - Throws: ``SIPParseError/badHeaderValue(_:)`` naming `header` for an empty or
    ///   non-token name, or text before the first `;`.
    static func parse(_ text: Substring, header: String) throws(SIPParseError) -> SIPParameters {
        var result = SIPParameters()
        let text = text.trimmed
        if text.isEmpty { return result }
        guard text.utf8.first == .semicolon else { throw .badHeaderValue(header) }
        // Counted before split: real URIs and headers carry a handful.
        guard let count = text.dropFirst().countTopLevel(.semicolon, limit: maximumCount), count <= maximumCount else {
            throw .badHeaderValue(header)
        }
        let parts = try text.dropFirst().splitTopLevel(.semicolon, header: header)
        for part in parts {
            let name: Substring, value: Substring?
            if let eq = part.firstIndex(ofByte: .equals) {
                name = part[..<eq].trimmed
                value = part[part.utf8.index(after: eq)...].trimmed
            } else {
                name = part
                value = nil
            }
            guard name.isToken else { throw .badHeaderValue(header) }
            if let value {
                guard !value.isEmpty, value.utf8.allSatisfy({ !$0.isLWS }) || value.utf8.first == .quote else {
                    throw .badHeaderValue(header)
                }
            }
            result.parameters.append(Parameter(name: String(name), value: value.map(String.init)))
        }
        return result
    }
}
