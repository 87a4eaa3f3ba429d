/// A failed DNS lookup: what went wrong (``code``), the response code or resolver status behind
/// it, and a message that says what was asked (`SRV _sip._udp.example.test`).
///
/// Equality compares ``code`` only, so `error == .noSuchName` holds whatever the detail.
///
/// Thread safety: a value type; safe to use from any thread.
public struct DNSError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Why a lookup failed.
    public enum Code: Sendable, Equatable {
        /// The name does not exist (NXDOMAIN, or getaddrinfo's `EAI_NONAME`).
        case noSuchName
        /// The name exists but has no record of the type asked (NOERROR with an empty answer).
        case noData
        /// The server failed (SERVFAIL, FORMERR, NOTIMP; getaddrinfo's `EAI_FAIL`).
        case serverFailure
        /// The server refused to answer (REFUSED: a zone it does not serve and will not recurse for).
        case refused
        /// No server answered within the configuration's tries (or a server's port was closed).
        case timeout
        /// An answer arrived that does not parse, or none of its records could be used.
        case malformedAnswer
        /// The name asked for is not a host name (empty, too long, characters outside `A-Za-z0-9-_.`).
        case invalidName
        /// The configuration cannot be used (a server that is not a numeric address, more than 3).
        case invalidConfiguration
        /// The resolver could not be set up or failed in the system (no memory, getaddrinfo's `EAI_SYSTEM`).
        case system
    }

    public let code: Code
    /// The DNS response code (RCODE) of the answer that caused the error, when a server answered.
    public let responseCode: Int?
    /// The resolver's status (`h_errno`: `HOST_NOT_FOUND` 1, `TRY_AGAIN` 2, `NO_RECOVERY` 3,
    /// `NO_DATA` 4), or getaddrinfo's `EAI_...` value for ``DNSResolver/Configuration/system`` address lookups.
    public let status: Int?
    /// What was asked and what went wrong.
    public let message: String

    public init(code: Code, responseCode: Int? = nil, status: Int? = nil, message: String) {
        self.code = code
        self.responseCode = responseCode
        self.status = status
        self.message = message
    }

    public var description: String { "DNS error \(code) (\(message))" }

    public static func == (a: DNSError, b: DNSError) -> Bool { a.code == b.code }

    public static let noSuchName = DNSError(code: .noSuchName, message: "no such name")
    public static let noData = DNSError(code: .noData, message: "no record of that type")
    public static let serverFailure = DNSError(code: .serverFailure, message: "server failure")
    public static let refused = DNSError(code: .refused, message: "refused")
    public static let timeout = DNSError(code: .timeout, message: "no answer in time")
    public static let malformedAnswer = DNSError(code: .malformedAnswer, message: "malformed answer")
    public static let invalidName = DNSError(code: .invalidName, message: "not a host name")
    public static let invalidConfiguration = DNSError(code: .invalidConfiguration, message: "invalid configuration")
    public static let system = DNSError(code: .system, message: "resolver failure")

    /// This error with what was asked prepended.
    func asked(_ what: String) -> DNSError {
        DNSError(code: code, responseCode: responseCode, status: status, message: "\(what): \(message)")
    }
}
