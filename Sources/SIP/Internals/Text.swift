// Small text helpers for the SIP grammar (RFC 3261 section 25), on `Substring` and bytes.
// Parsing works on the UTF-8 view: SIP's syntax is ASCII, and the UTF-8 view is fast
// even in debug builds (the parser runs on every datagram and in a fuzz test).

extension UInt8 {
    static let cr: UInt8 = 0x0D
    static let lf: UInt8 = 0x0A
    static let space: UInt8 = 0x20
    static let tab: UInt8 = 0x09
    static let colon: UInt8 = 0x3A
    static let semicolon: UInt8 = 0x3B
    static let comma: UInt8 = 0x2C
    static let quote: UInt8 = 0x22
    static let backslash: UInt8 = 0x5C
    static let less: UInt8 = 0x3C
    static let greater: UInt8 = 0x3E
    static let equals: UInt8 = 0x3D
    static let at: UInt8 = 0x40
    static let question: UInt8 = 0x3F
    static let slash: UInt8 = 0x2F
    static let leftBracket: UInt8 = 0x5B
    static let rightBracket: UInt8 = 0x5D

    /// SP or HTAB.
    var isLWS: Bool { self == .space || self == .tab }

    var isDigit: Bool { self >= 0x30 && self <= 0x39 }

    /// RFC 3261 `token` characters: alphanumerics and `-.!%*_+`~'`.
    var isTokenCharacter: Bool {
        switch self {
        case 0x30...0x39, 0x41...0x5A, 0x61...0x7A: return true
        case 0x2D, 0x2E, 0x21, 0x25, 0x2A, 0x5F, 0x2B, 0x60, 0x27, 0x7E: return true
        default: return false
        }
    }
}

extension Substring {
    /// Without leading and trailing spaces, tabs, CR and LF.
    var trimmed: Substring {
        let u = utf8
        var start = u.startIndex, end = u.endIndex
        while start < end, u[start].isLWS || u[start] == .cr || u[start] == .lf { start = u.index(after: start) }
        while end > start {
            let before = u.index(before: end)
            guard u[before].isLWS || u[before] == .cr || u[before] == .lf else { break }
            end = before
        }
        return self[start..<end]
    }

    /// Whether every character is a `token` character (and there is at least one).
    var isToken: Bool {
        var any = false
        for c in utf8 {
            guard c.isTokenCharacter else { return false }
            any = true
        }
        return any
    }

    /// Splits at `separator` where it is outside quoted strings and angle brackets,
    /// trimming each part. Used for comma-separated header values and `;` parameters.
    ///
    /// - Throws: ``SIPParseError/badHeaderValue(_:)`` for an unterminated quote or `<`.
    func splitTopLevel(_ separator: UInt8, header: String) throws(SIPParseError) -> [Substring] {
        var parts: [Substring] = []
        var partStart = utf8.startIndex
        let balanced = forEachTopLevel(separator) { i in
            parts.append(self[partStart..<i].trimmed)
            partStart = utf8.index(after: i)
            return true
        }
        guard balanced else { throw .badHeaderValue(header) }
        parts.append(self[partStart..<utf8.endIndex].trimmed)
        return parts
    }

    /// How many parts ``splitTopLevel(_:header:)`` would return (without building them), or
    /// nil for an unterminated quote or `<`. Stops counting past `limit`.
    func countTopLevel(_ separator: UInt8, limit: Int = .max) -> Int? {
        var count = 1
        let balanced = forEachTopLevel(separator) { _ in
            count += 1
            return count <= limit
        }
        return balanced || count > limit ? count : nil
    }

    /// The first part before a top-level `separator` and the rest after it (nil when there is
    /// no separator), both trimmed; nil for an unterminated quote or `<` before the separator.
    func splitFirstTopLevel(_ separator: UInt8) -> (first: Substring, rest: Substring?)? {
        var cut: Index?
        let balanced = forEachTopLevel(separator) { i in
            cut = i
            return false
        }
        guard let cut else { return balanced ? (trimmed, nil) : nil }
        return (self[..<cut].trimmed, self[utf8.index(after: cut)...].trimmed)
    }

    /// Calls `body` with the index of each `separator` outside quoted strings and angle
    /// brackets, until it returns false. One pass: linear in the length.
    ///
    /// - Returns: false when the text ends inside a quote or `<` (the scan was not stopped).
    private func forEachTopLevel(_ separator: UInt8, _ body: (Index) -> Bool) -> Bool {
        let u = utf8
        var i = u.startIndex
        var inQuotes = false, inAngles = false
        while i < u.endIndex {
            let c = u[i]
            if inQuotes {
                if c == .backslash {
                    i = u.index(after: i)
                    if i == u.endIndex { break }
                } else if c == .quote {
                    inQuotes = false
                }
            } else if inAngles {
                if c == .greater { inAngles = false }
            } else if c == .quote {
                inQuotes = true
            } else if c == .less {
                inAngles = true
            } else if c == separator, !body(i) {
                return true
            }
            i = u.index(after: i)
        }
        return !inQuotes && !inAngles
    }

    /// The first index of `byte` (no quoting rules), or nil.
    func firstIndex(ofByte byte: UInt8) -> Index? { utf8.firstIndex(of: byte) }

    /// Compares ASCII case-insensitively.
    func equalsIgnoringCase(_ other: some StringProtocol) -> Bool {
        let a = utf8, b = other.utf8
        guard a.count == b.count else { return false }
        return zip(a, b).allSatisfy { $0.asciiLowercased == $1.asciiLowercased }
    }
}

extension String {
    /// Compares ASCII case-insensitively.
    func equalsIgnoringCase(_ other: some StringProtocol) -> Bool { self[...].equalsIgnoringCase(other) }

    /// ASCII-lowercased (header names, parameter names, schemes).
    var asciiLowercased: String {
        if !utf8.contains(where: { $0 >= 0x41 && $0 <= 0x5A }) { return self }
        return String(decoding: utf8.map(\.asciiLowercased), as: UTF8.self)
    }
}

extension UInt8 {
    var asciiLowercased: UInt8 { self >= 0x41 && self <= 0x5A ? self + 0x20 : self }
}

/// Quotes `text` as a SIP `quoted-string` (escaping `"` and `\`).
func quotedString(_ text: String) -> String {
    var out = "\""
    for c in text.unicodeScalars {
        if c == "\"" || c == "\\" { out.append("\\") }
        out.unicodeScalars.append(c)
    }
    out.append("\"")
    return out
}

/// The content of a `quoted-string` (with its quotes), unescaped; nil when it is not one.
func unquotedString(_ text: Substring) -> String? {
    let u = text.utf8
    guard u.count >= 2, u.first == .quote, u.last == .quote else { return nil }
    var bytes: [UInt8] = []
    bytes.reserveCapacity(u.count - 2)
    var escaped = false
    for c in u.dropFirst().dropLast() {
        if escaped {
            bytes.append(c)
            escaped = false
        } else if c == .backslash {
            escaped = true
        } else if c == .quote {
            return nil  // an unescaped quote inside
        } else {
            bytes.append(c)
        }
    }
    guard !escaped else { return nil }
    return String(decoding: bytes, as: UTF8.self)
}
