/// Why a datagram is not a valid SIP message.
///
/// Thread safety: a value type; safe to use from any thread.
public enum SIPParseError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Nothing but line breaks (a keep-alive), or no bytes at all.
    case empty
    /// Neither `METHOD URI SIP/2.0` nor `SIP/2.0 CODE REASON`.
    case badStartLine
    /// A version other than `SIP/2.0`.
    case unsupportedVersion
    /// A status code that is not three digits in 100 ... 699.
    case badStatusCode
    /// A header line without a colon or with a name that is not a token.
    case badHeaderLine
    /// More header fields than ``SIPParser/maximumHeaderFields``.
    case tooManyHeaders
    /// More `Via` values than ``SIPParser/maximumViaValues`` (never answered: a response
    /// would copy them all).
    case tooManyVias
    /// A header field (the header's name) longer than ``SIPParser/maximumFieldLength``, folded lines included.
    case headerTooLong(String)
    /// The header section does not end with an empty line.
    case missingBlankLine
    /// A mandatory header (`Via`, `From`, `To`, `Call-ID`, `CSeq`) is missing.
    case missingHeader(String)
    /// A header value that does not follow its grammar (the header's name).
    case badHeaderValue(String)
    case badContentLength
    /// `Content-Length` is larger than the bytes after the headers (RFC 3261 section 18.3).
    case contentLengthBeyondDatagram
    /// The `CSeq` method differs from the request's method.
    case cseqMethodMismatch
    /// The Request-URI (or a URI in a header) does not parse.
    case badURI
    /// A URI scheme other than `sip`/`sips` (answered 416 in a Request-URI).
    case unsupportedURIScheme(String)
    /// A start line or header line that is not UTF-8 (RFC 3261 section 7.3.1; never answered:
    /// decoded with replacement characters it would grow threefold in a response).
    case invalidUTF8

    public var description: String {
        switch self {
        case .empty: "empty message"
        case .badStartLine: "bad start line"
        case .unsupportedVersion: "unsupported SIP version"
        case .badStatusCode: "bad status code"
        case .badHeaderLine: "bad header line"
        case .tooManyHeaders: "too many header fields"
        case .tooManyVias: "too many Via values"
        case .headerTooLong(let name): "\(name) too long"
        case .missingBlankLine: "header section does not end with an empty line"
        case .missingHeader(let name): "missing \(name)"
        case .badHeaderValue(let name): "malformed \(name)"
        case .badContentLength: "malformed Content-Length"
        case .contentLengthBeyondDatagram: "Content-Length beyond the datagram"
        case .cseqMethodMismatch: "CSeq method does not match the request method"
        case .badURI: "malformed URI"
        case .unsupportedURIScheme(let scheme): "unsupported URI scheme '\(scheme)'"
        case .invalidUTF8: "a line that is not UTF-8"
        }
    }
}

extension SIPMessage {
    /// Parses one datagram (RFC 3261 section 7 with the UDP framing of section 18.3) and checks
    /// the headers every message needs: `Via`, `From`, `To`, `Call-ID`, `CSeq` (and for a
    /// request, that the `CSeq` method is the request's method).
    ///
    /// Leading line breaks are skipped; header folding is accepted; without `Content-Length`
    /// the body is the rest of the datagram, and bytes beyond `Content-Length` are ignored.
    ///
    /// - Throws: ``SIPParseError``; never traps, whatever the input.
    public init(parsing bytes: [UInt8]) throws(SIPParseError) {
        switch SIPParser.classify(bytes) {
        case .message(let message): self = message
        case .keepAlive: throw .empty
        case .badRequest(let error, _), .malformed(let error): throw error
        }
    }

    /// Parses a message written as text.
    public init(parsing text: String) throws(SIPParseError) {
        try self.init(parsing: Array(text.utf8))
    }
}

/// The SIP message parser.
///
/// Thread safety: stateless; safe from any thread.
public enum SIPParser {
    /// Header fields beyond this make the message malformed (a defence against memory abuse;
    /// real messages carry 10 to 30).
    public static let maximumHeaderFields = 256
    /// `Via` values beyond this make the message malformed and dropped unanswered: one per
    /// hop, and 70 is the usual `Max-Forwards`.
    public static let maximumViaValues = 70
    /// A header field's value longer than this (in bytes, folded lines joined) is an error: real
    /// fields are under 1 KB, and the limit keeps what a response copies, and the work a
    /// field costs, small.
    public static let maximumFieldLength = 8192

    /// What a received datagram is, for the transport layer.
    enum Outcome {
        /// CR/LF only (RFC 5626 keep-alives): ignored.
        case keepAlive
        case message(SIPMessage)
        /// A request that is malformed but carries what a response needs (its `Via`, `From`,
        /// `To`, `Call-ID`, `CSeq` as written): answer it (400, 416 or 505).
        case badRequest(SIPParseError, SIPHeaders)
        /// Anything else wrong: drop it and count it.
        case malformed(SIPParseError)
    }

    private enum StartLine {
        case request(SIPMethod, Result<SIPURI, SIPParseError>, versionError: SIPParseError?)
        case response(Int, String)
    }

    static func classify(_ bytes: [UInt8]) -> Outcome {
        bytes.withUnsafeBufferPointer { classify($0) }
    }

    private static func classify(_ bytes: UnsafeBufferPointer<UInt8>) -> Outcome {
        var i = 0
        let n = bytes.count
        while i < n, bytes[i] == .cr || bytes[i] == .lf { i += 1 }
        if i == n { return .keepAlive }

        // Lines end with LF; a CR before it is dropped (bare LF is tolerated). A line that is not
        // UTF-8 makes the message malformed: sizes are checked on bytes, and nothing decoded
        // may grow (a replacement character is 3 bytes for 1).
        var invalidUTF8 = false
        func nextLine() -> (String, isEmpty: Bool)? {
            var lf = i
            while lf < n, bytes[lf] != .lf { lf += 1 }
            guard lf < n else { return nil }
            let end = lf > i && bytes[lf - 1] == .cr ? lf - 1 : lf
            let raw = UnsafeBufferPointer(rebasing: bytes[i..<end])
            let line: String
            if let valid = String(validating: raw, as: UTF8.self) {
                line = valid
            } else {
                invalidUTF8 = true
                line = ""
            }
            let empty = end == i
            i = lf + 1
            return (line, empty)
        }

        guard let (firstLine, _) = nextLine(), !invalidUTF8 else { return .malformed(invalidUTF8 ? .invalidUTF8 : .badStartLine) }
        let startLine: StartLine
        switch parseStartLine(firstLine) {
        case .success(let s): startLine = s
        case .failure(let error): return .malformed(error)
        }

        // Header fields; the first error is remembered, and collection goes on so that a
        // 400 can still copy the headers it needs.
        var reader = HeaderReader()
        var sawBlankLine = false
        while let (line, isEmpty) = nextLine() {
            if invalidUTF8 { return .malformed(.invalidUTF8) }
            if isEmpty {
                sawBlankLine = true
                break
            }
            reader.read(line)
        }
        var (headers, firstError) = reader.finish()
        if !sawBlankLine, firstError == nil { firstError = .missingBlankLine }
        if let error = checkVias(headers) { return .malformed(error) }

        let body = sawBlankLine ? Self.body(bytes, from: i, headers: headers, firstError: &firstError) : []
        return outcome(startLine, headers: headers, body: body, firstError: firstError)
    }

    /// The body after the blank line at `start` (RFC 3261 section 18.3): Content-Length bytes of
    /// it, or all of it without one. A length beyond the datagram is the first error, if none is.
    private static func body(_ bytes: UnsafeBufferPointer<UInt8>, from start: Int, headers: SIPHeaders,
                             firstError: inout SIPParseError?) -> [UInt8] {
        let available = bytes.count - start
        do {
            guard let length = try headers.contentLength() else { return Array(UnsafeBufferPointer(rebasing: bytes[start...])) }
            guard length <= available else {
                if firstError == nil { firstError = .contentLengthBeyondDatagram }
                return []
            }
            return Array(UnsafeBufferPointer(rebasing: bytes[start..<(start + length)]))
        } catch {
            if firstError == nil { firstError = error }
            return []
        }
    }

    /// The message, or why it is answered (a request with what a response needs) or dropped.
    private static func outcome(_ startLine: StartLine, headers: SIPHeaders, body: [UInt8],
                                firstError: SIPParseError?) -> Outcome {
        switch startLine {
        case .request(let method, let uriResult, let versionError):
            var error = firstError ?? versionError
            var uri: SIPURI?
            switch uriResult {
            case .success(let u): uri = u
            case .failure(let e): if error == nil { error = e }
            }
            if error == nil { error = validate(headers, method: method) }
            if let error {
                return method != .ack && canAnswer(headers, error) ? .badRequest(error, headers) : .malformed(error)
            }
            return .message(.request(SIPRequest(method: method, uri: uri!, headers: headers, body: body)))
        case .response(let code, let reason):
            if let error = firstError ?? validate(headers, method: nil) { return .malformed(error) }
            return .message(.response(SIPResponse(statusCode: code, reasonPhrase: reason, headers: headers, body: body)))
        }
    }

    private static func parseStartLine(_ line: String) -> Result<StartLine, SIPParseError> {
        // On the UTF-8 view: a Character split of a 64 KB line costs milliseconds.
        let parts = line.utf8.split(separator: .space, maxSplits: 2, omittingEmptySubsequences: false).map(Substring.init)
        if line.utf8.starts(with: "SIP/".utf8) {
            guard parts.count >= 2 else { return .failure(.badStartLine) }
            guard parts[0].equalsIgnoringCase("SIP/2.0") else { return .failure(.unsupportedVersion) }
            guard parts[1].utf8.count == 3, parts[1].utf8.allSatisfy(\.isDigit), let code = Int(parts[1]),
                  (100...699).contains(code)
            else { return .failure(.badStatusCode) }
            return .success(.response(code, parts.count == 3 ? String(parts[2]) : ""))
        }
        guard parts.count == 3, parts[0].isToken, !parts[1].isEmpty, parts[2].utf8.starts(with: "SIP/".utf8)
                || parts[2].utf8.starts(with: "sip/".utf8)
        else { return .failure(.badStartLine) }
        let versionError: SIPParseError? = parts[2].equalsIgnoringCase("SIP/2.0") ? nil : .unsupportedVersion
        let uri: Result<SIPURI, SIPParseError>
        do { uri = .success(try SIPURI.parse(parts[1])) } catch { uri = .failure(error) }
        return .success(.request(SIPMethod(String(parts[0])), uri, versionError: versionError))
    }

    /// The mandatory headers of RFC 3261 section 8.1.1 (`Max-Forwards` is checked when present).
    private static func validate(_ headers: SIPHeaders, method: SIPMethod?) -> SIPParseError? {
        do {
            _ = try headers.topVia()
            _ = try headers.from()
            _ = try headers.to()
            _ = try headers.callID()
            let cseq = try headers.cseq()
            if let method {
                _ = try headers.maxForwards()
                if cseq.method != method { return .cseqMethodMismatch }
            }
            return nil
        } catch {
            return error
        }
    }

    /// Whether a response can be built for these headers: a top `Via` to send it along and
    /// the fields the client matches it with, none of them over the length limit (a response
    /// copies them) and not too many `Via` values.
    private static func canAnswer(_ headers: SIPHeaders, _ error: SIPParseError) -> Bool {
        switch error {
        case .tooManyVias: return false
        case .headerTooLong(let name) where copiedFields.contains(name): return false
        default: break
        }
        guard (try? headers.topVia()) != nil else { return false }
        return copiedFields.allSatisfy { headers.contains($0) }
    }

    /// What every response copies from its request (RFC 3261 section 8.2.6.2).
    private static let copiedFields: Set<String> = ["Via", "From", "To", "Call-ID", "CSeq"]

    /// More `Via` values than ``maximumViaValues`` (or a list with an unterminated quote,
    /// which `topVia` reports later): counted in one pass, without splitting.
    private static func checkVias(_ headers: SIPHeaders) -> SIPParseError? {
        var count = 0
        for field in headers where field.name == "Via" {
            count += field.value[...].countTopLevel(.comma, limit: maximumViaValues + 1) ?? 1
            if count > maximumViaValues { return .tooManyVias }
        }
        return nil
    }
}

/// Collects header fields line by line: folding, the field count and the length limits.
/// A folded field grows in place, so reading is linear in the message's size.
private struct HeaderReader {
    private var headers = SIPHeaders()
    private var firstError: SIPParseError?
    /// The field being read (folded lines continue it); nil before the first or after one skipped.
    private var name: String?
    private var value = ""
    /// The last field was dropped (past the count limit): its folded lines go with it.
    private var skipping = false

    mutating func read(_ line: String) {
        // A CR inside a line is no line end here, but is one to other parsers: a value carrying
        // it (a challenge's `opaque`) would be copied into our requests as a header line of the
        // peer's choosing. Found by Fuzz/fuzz-digest.
        if line.utf8.contains(.cr) { return fail(.badHeaderLine, skip: true) }
        if let c = line.utf8.first, c.isLWS {
            // Folding (RFC 3261 section 7.3.1): continues the previous value, LWS as one space.
            if skipping { return }
            guard name != nil else { return fail(.badHeaderLine) }
            let more = line[...].trimmed
            guard !more.isEmpty else { return }
            guard value.utf8.count + 1 + more.utf8.count <= SIPParser.maximumFieldLength else {
                return fail(.headerTooLong(name!), skip: true)
            }
            // No separator after an empty value: written out, a leading space would not parse back.
            if !value.isEmpty { value += " " }
            value += more
            return
        }
        commit()
        guard headers.count < SIPParser.maximumHeaderFields else { return fail(.tooManyHeaders, skip: true) }
        guard let colon = line.utf8.firstIndex(of: .colon) else { return fail(.badHeaderLine, skip: true) }
        let fieldName = line[..<colon].trimmed
        guard fieldName.isToken, fieldName.utf8.count <= 256 else { return fail(.badHeaderLine, skip: true) }
        let canonical = SIPHeaders.canonicalName(String(fieldName))
        let fieldValue = line[line.utf8.index(after: colon)...].trimmed
        guard fieldValue.utf8.count <= SIPParser.maximumFieldLength else {
            return fail(.headerTooLong(canonical), skip: true)
        }
        name = canonical
        value = String(fieldValue)
    }

    /// The fields read, and the first error met.
    mutating func finish() -> (SIPHeaders, SIPParseError?) {
        commit()
        return (headers, firstError)
    }

    private mutating func commit() {
        if let name { headers.add(name, value) }
        name = nil
        value = ""
        skipping = false
    }

    private mutating func fail(_ error: SIPParseError, skip: Bool = false) {
        if firstError == nil { firstError = error }
        if skip {
            name = nil
            value = ""
            skipping = true
        }
    }
}
