/// A SIP transport: how a message travels to a server.
///
/// `rawValue` is the form a Via header carries (`SIP/2.0/UDP`); ``uriParameter`` the form of
/// a URI's `transport` parameter (`;transport=tcp`).
///
/// Thread safety: a value type; safe to use from any thread.
public enum SIPTransportKind: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    case udp = "UDP"
    case tcp = "TCP"
    case tls = "TLS"

    /// From a URI's `transport` parameter, case-insensitively (`udp`, `tcp`, `tls`); nil for
    /// others (`sctp`, `ws`).
    public init?(uriParameter: String) {
        switch uriParameter.lowercased() {
        case "udp": self = .udp
        case "tcp": self = .tcp
        case "tls": self = .tls
        default: return nil
        }
    }

    /// The `transport` parameter's value: `udp`, `tcp`, `tls`.
    public var uriParameter: String { rawValue.lowercased() }

    /// Whether messages are encrypted (TLS): what a `sips:` URI requires.
    public var isSecure: Bool { self == .tls }

    /// Whether the transport is a stream (TCP, TLS over TCP) rather than datagrams.
    public var isStream: Bool { self != .udp }

    /// The port when none is given: 5060, or 5061 for TLS (RFC 3261 section 19.1.2).
    public var defaultPort: UInt16 { self == .tls ? 5061 : 5060 }

    /// The SRV service and protocol labels for a domain (RFC 3263 section 4.1): `_sip._udp`,
    /// `_sip._tcp`, `_sips._tcp`.
    public var serviceLabels: String {
        switch self {
        case .udp: "_sip._udp"
        case .tcp: "_sip._tcp"
        case .tls: "_sips._tcp"
        }
    }

    public var description: String { rawValue }
}
