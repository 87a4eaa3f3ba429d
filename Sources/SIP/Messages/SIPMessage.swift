/// A SIP method. Methods are case-sensitive (RFC 3261 section 7.1); any token is valid.
///
/// Thread safety: a value type; safe to use from any thread.
public struct SIPMethod: RawRepresentable, Sendable, Hashable, CustomStringConvertible, ExpressibleByStringLiteral {
    public let rawValue: String

    public init(rawValue: String) { self.rawValue = rawValue }
    public init(_ rawValue: String) { self.rawValue = rawValue }
    public init(stringLiteral value: String) { rawValue = value }

    public var description: String { rawValue }

    public static let invite: SIPMethod = "INVITE"
    public static let ack: SIPMethod = "ACK"
    public static let bye: SIPMethod = "BYE"
    public static let cancel: SIPMethod = "CANCEL"
    public static let options: SIPMethod = "OPTIONS"
    public static let register: SIPMethod = "REGISTER"
    public static let prack: SIPMethod = "PRACK"
    public static let subscribe: SIPMethod = "SUBSCRIBE"
    public static let notify: SIPMethod = "NOTIFY"
    public static let publish: SIPMethod = "PUBLISH"
    public static let info: SIPMethod = "INFO"
    public static let refer: SIPMethod = "REFER"
    public static let message: SIPMethod = "MESSAGE"
    public static let update: SIPMethod = "UPDATE"
}

/// A message body with its content type (`application/sdp`). SIP treats it as opaque bytes.
///
/// Thread safety: a value type; safe to use from any thread.
public struct SIPBody: Sendable, Hashable, CustomStringConvertible {
    /// The media type without parameters, lowercased (`application/sdp`).
    public var contentType: String
    public var bytes: [UInt8]

    public init(contentType: String, bytes: [UInt8]) {
        self.contentType = contentType
        self.bytes = bytes
    }

    /// An `application/sdp` body.
    public static func sdp(_ text: String) -> SIPBody { SIPBody(contentType: "application/sdp", bytes: Array(text.utf8)) }

    /// The bytes as UTF-8 text.
    public var text: String { String(decoding: bytes, as: UTF8.self) }

    public var description: String { "\(contentType), \(bytes.count) bytes" }
}

/// A SIP request.
///
/// Thread safety: a value type; safe to use from any thread.
public struct SIPRequest: Sendable, Hashable, CustomStringConvertible {
    public var method: SIPMethod
    /// The Request-URI.
    public var uri: SIPURI
    public var headers: SIPHeaders
    public var body: [UInt8]

    public init(method: SIPMethod, uri: SIPURI, headers: SIPHeaders = SIPHeaders(), body: [UInt8] = []) {
        self.method = method
        self.uri = uri
        self.headers = headers
        self.body = body
    }

    /// The wire form. `Content-Length` is set to the body's size (in place when present, else last).
    public func serialized() -> [UInt8] { serialize(startLine: "\(method) \(uri) SIP/2.0", headers: headers, body: body) }

    /// The wire form as text (for logs and tests).
    public var description: String { String(decoding: serialized(), as: UTF8.self) }

    /// A request that belongs to this one's transaction: the CANCEL of an INVITE (section 9.1)
    /// or the ACK for its non-2xx final response (section 17.1.1.3). Both keep the Request-URI,
    /// the top `Via` (so the branch), `From`, `To`, `Call-ID`, `Route` and the CSeq number, and
    /// drop everything else; the ACK takes the response's `To` (with its tag), given as `to`.
    func derived(_ method: SIPMethod, to: String? = nil) -> SIPRequest {
        var derived = SIPHeaders()
        if let via = try? headers.values("Via").first { derived.add("Via", via) }
        derived.add("Max-Forwards", "70")
        for field in headers where ["From", "To", "Call-ID", "Route"].contains(field.name) {
            if field.name == "To", let to { derived.add("To", to) } else { derived.add(field) }
        }
        let sequence = (try? headers.cseq().sequence) ?? 1
        derived.add("CSeq", "\(sequence) \(method)")
        if let agent = headers["User-Agent"] { derived.add("User-Agent", agent) }
        return SIPRequest(method: method, uri: uri, headers: derived)
    }
}

/// A SIP response.
///
/// Thread safety: a value type; safe to use from any thread.
public struct SIPResponse: Sendable, Hashable, CustomStringConvertible {
    /// 100 ... 699.
    public var statusCode: Int
    public var reasonPhrase: String
    public var headers: SIPHeaders
    public var body: [UInt8]

    public init(statusCode: Int, reasonPhrase: String? = nil, headers: SIPHeaders = SIPHeaders(), body: [UInt8] = []) {
        self.statusCode = statusCode
        self.reasonPhrase = reasonPhrase ?? SIPResponse.defaultReasonPhrase(statusCode)
        self.headers = headers
        self.body = body
    }

    /// 1xx.
    public var isProvisional: Bool { statusCode < 200 }
    /// 2xx.
    public var isSuccess: Bool { (200..<300).contains(statusCode) }

    public func serialized() -> [UInt8] {
        serialize(startLine: "SIP/2.0 \(statusCode) \(reasonPhrase)", headers: headers, body: body)
    }

    public var description: String { String(decoding: serialized(), as: UTF8.self) }

    /// The RFC 3261 reason phrase for a status code ("Unknown" for codes it does not name).
    public static func defaultReasonPhrase(_ code: Int) -> String {
        switch code {
        case 100: "Trying"
        case 180: "Ringing"
        case 181: "Call Is Being Forwarded"
        case 182: "Queued"
        case 183: "Session Progress"
        case 200: "OK"
        case 202: "Accepted"
        case 300: "Multiple Choices"
        case 301: "Moved Permanently"
        case 302: "Moved Temporarily"
        case 400: "Bad Request"
        case 401: "Unauthorized"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 405: "Method Not Allowed"
        case 406: "Not Acceptable"
        case 407: "Proxy Authentication Required"
        case 408: "Request Timeout"
        case 410: "Gone"
        case 413: "Request Entity Too Large"
        case 415: "Unsupported Media Type"
        case 416: "Unsupported URI Scheme"
        case 420: "Bad Extension"
        case 421: "Extension Required"
        case 480: "Temporarily Unavailable"
        case 481: "Call/Transaction Does Not Exist"
        case 482: "Loop Detected"
        case 483: "Too Many Hops"
        case 484: "Address Incomplete"
        case 486: "Busy Here"
        case 487: "Request Terminated"
        case 488: "Not Acceptable Here"
        case 491: "Request Pending"
        case 500: "Server Internal Error"
        case 501: "Not Implemented"
        case 503: "Service Unavailable"
        case 504: "Server Time-out"
        case 505: "Version Not Supported"
        case 513: "Message Too Large"
        case 600: "Busy Everywhere"
        case 603: "Decline"
        case 604: "Does Not Exist Anywhere"
        case 606: "Not Acceptable"
        default: "Unknown"
        }
    }
}

/// A request or a response.
///
/// Thread safety: a value type; safe to use from any thread.
public enum SIPMessage: Sendable, Hashable, CustomStringConvertible {
    case request(SIPRequest)
    case response(SIPResponse)

    public var headers: SIPHeaders {
        switch self {
        case .request(let r): r.headers
        case .response(let r): r.headers
        }
    }

    public var body: [UInt8] {
        switch self {
        case .request(let r): r.body
        case .response(let r): r.body
        }
    }

    public func serialized() -> [UInt8] {
        switch self {
        case .request(let r): r.serialized()
        case .response(let r): r.serialized()
        }
    }

    public var description: String {
        switch self {
        case .request(let r): r.description
        case .response(let r): r.description
        }
    }
}

private func serialize(startLine: String, headers: SIPHeaders, body: [UInt8]) -> [UInt8] {
    var out: [UInt8] = []
    out.reserveCapacity(512 + body.count)
    out += startLine.utf8
    out += [.cr, .lf]
    var wroteLength = false
    for field in headers {
        let isLength = field.name == "Content-Length"
        if isLength && wroteLength { continue }  // one Content-Length, the true one
        out += field.name.utf8
        out += [.colon, .space]
        if isLength {
            wroteLength = true
            out += String(body.count).utf8
        } else {
            out += field.value.utf8
        }
        out += [.cr, .lf]
    }
    if !wroteLength {
        out += "Content-Length: \(body.count)\r\n".utf8
    }
    out += [.cr, .lf]
    out += body
    return out
}
