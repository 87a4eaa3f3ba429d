// Reading and writing the text form of a session description (RFC 4566 section 5).

extension SessionDescription {
    /// The type letters RFC 4566 defines; any other is an error.
    private static let knownTypes: Set<Character> = ["v", "o", "s", "i", "u", "e", "p", "c", "b", "t", "r", "z", "k", "a", "m"]

    /// Parses a description. Lines may end in CRLF or LF; `i=`, `u=`, `e=`, `p=`, `r=`,
    /// `z=` and `k=` are accepted and not kept.
    public static func parse(_ text: String) throws(SDPError) -> SessionDescription {
        var description: SessionDescription?
        var sawVersion = false
        var sessionName: String?
        var lineNumber = 0
        // "\r\n" is one Character in Swift: split on it as well as on a bare LF or CR.
        let lines = text.split(omittingEmptySubsequences: false) { $0 == "\n" || $0 == "\r\n" || $0 == "\r" }
        for line in lines {
            lineNumber += 1
            if line.isEmpty { continue }
            guard line.count >= 2, let type = line.first, knownTypes.contains(type),
                  line[line.index(after: line.startIndex)] == "=" else { throw .badLine(lineNumber) }
            let value = line.dropFirst(2)
            if !sawVersion {
                guard type == "v", value == "0" else { throw .missingVersion }
                sawVersion = true
                continue
            }
            if description == nil {
                guard type == "o" else { throw .missingOrigin }
                description = SessionDescription(origin: try origin(value))
            } else if type == "s" {
                sessionName = String(value)
            } else {
                try description!.add(type, value, line: lineNumber)
            }
        }
        guard sawVersion else { throw .missingVersion }
        guard var result = description else { throw .missingOrigin }
        guard let sessionName else { throw .missingSessionName }
        result.sessionName = sessionName
        return result
    }

    /// An `o=` value: six fields.
    private static func origin(_ value: Substring) throws(SDPError) -> Origin {
        let f = value.split(separator: " ", omittingEmptySubsequences: true)
        guard f.count == 6 else { throw .missingOrigin }
        return Origin(username: String(f[0]), sessionID: String(f[1]), sessionVersion: String(f[2]),
                      networkType: String(f[3]), addressType: String(f[4]), address: String(f[5]))
    }

    /// A line after `o=` (other than `s=`): it belongs to the last `m=` stream, or to the session before the first.
    private mutating func add(_ type: Character, _ value: Substring, line: Int) throws(SDPError) {
        let stream = media.isEmpty ? nil : media.count - 1
        switch type {
        case "c":
            let f = value.split(separator: " ", omittingEmptySubsequences: true)
            guard f.count == 3 else { throw .badConnection(line) }
            let c = Connection(networkType: String(f[0]), addressType: String(f[1]), address: String(f[2]))
            if let stream { media[stream].connection = c } else { connection = c }
        case "b":
            if let stream { media[stream].bandwidths.append(String(value)) } else { bandwidths.append(String(value)) }
        case "t":
            timing = String(value)
        case "a":
            let attribute = if let colon = value.firstIndex(of: ":") {
                Attribute(String(value[..<colon]), String(value[value.index(after: colon)...]))
            } else {
                Attribute(String(value))
            }
            if let stream { media[stream].attributes.append(attribute) } else { attributes.append(attribute) }
        case "m":
            media.append(try Self.media(value, line: line))
        default:
            break  // i, u, e, p, r, z, k: informational
        }
    }

    /// An `m=` value: media, port (with an optional `/count`), protocol, formats.
    private static func media(_ value: Substring, line: Int) throws(SDPError) -> Media {
        let f = value.split(separator: " ", omittingEmptySubsequences: true)
        guard f.count >= 4 else { throw .badMedia(line) }
        let portParts = f[1].split(separator: "/", omittingEmptySubsequences: false)
        guard portParts.count <= 2, let port = Int(portParts[0]), (0...65535).contains(port) else { throw .badMedia(line) }
        var count: Int?
        if portParts.count == 2 {
            guard let c = Int(portParts[1]), c > 0 else { throw .badMedia(line) }
            count = c
        }
        return Media(media: String(f[0]), port: port, portCount: count, proto: String(f[2]), formats: f[3...].map(String.init))
    }

    /// The description as text, lines ending in CRLF.
    public var text: String {
        var lines = ["v=0",
                     "o=\(origin.username) \(origin.sessionID) \(origin.sessionVersion) \(origin.networkType) \(origin.addressType) \(origin.address)",
                     "s=\(sessionName.isEmpty ? "-" : sessionName)"]
        func connectionLine(_ c: Connection) -> String { "c=\(c.networkType) \(c.addressType) \(c.address)" }
        func attributeLine(_ a: Attribute) -> String { a.value.map { "a=\(a.name):\($0)" } ?? "a=\(a.name)" }
        if let connection { lines.append(connectionLine(connection)) }
        lines += bandwidths.map { "b=\($0)" }
        lines.append("t=\(timing)")
        lines += attributes.map(attributeLine)
        for m in media {
            let port = m.portCount.map { "\(m.port)/\($0)" } ?? "\(m.port)"
            lines.append("m=\(m.media) \(port) \(m.proto) \(m.formats.joined(separator: " "))")
            if let c = m.connection { lines.append(connectionLine(c)) }
            lines += m.bandwidths.map { "b=\($0)" }
            lines += m.attributes.map(attributeLine)
        }
        return lines.joined(separator: "\r\n") + "\r\n"
    }
}

extension StringProtocol {
    /// Without leading and trailing spaces and tabs.
    package var trimmingSpaces: Substring {
        var s = Substring(self)
        while let c = s.first, c == " " || c == "\t" { s.removeFirst() }
        while let c = s.last, c == " " || c == "\t" { s.removeLast() }
        return s
    }
}
