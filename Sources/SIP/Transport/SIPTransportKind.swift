/// A SIP transport (RFC 3261 section 18): how a message travels to the next hop.
///
/// Thread safety: a value type; safe to use from any thread.
public enum SIPTransportKind: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    case udp = "UDP"
    case tcp = "TCP"
    case tls = "TLS"

    /// The form of a URI's `transport` parameter (`udp`, `tcp`, `tls`).
    public var uriParameter: String { rawValue.lowercased() }

    /// From a URI's `transport` parameter or a Via's transport, in any case.
    public init?(parameter: String) {
        self.init(rawValue: parameter.uppercased())
    }

    /// Whether messages travel on a connection (framed by Content-Length) rather than as datagrams.
    public var isStream: Bool { self != .udp }

    public var description: String { uriParameter }
}
