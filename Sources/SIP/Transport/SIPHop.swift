package import Platform

/// Identifies one TCP or TLS connection of a user agent for its life.
package typealias ConnectionID = UInt64

/// The next hop of a message, or where one came from: a transport, an address and, on a
/// stream transport, the connection (responses go back on the connection their request came
/// on, RFC 3261 section 18.2.2). Two hops are the same source when their transport and address
/// are, and, for streams, their connection.
package struct SIPHop: Sendable, Hashable, CustomStringConvertible {
    package var transport: SIPTransportKind
    package var address: SocketAddress
    /// The connection a message came on or should go on; nil: any to `address`, or a new one.
    package var connection: ConnectionID?
    /// For a new TLS connection: the name its certificate must carry (RFC 5922); nil for an
    /// address, whose certificate must carry that address.
    var serverName: String?

    package init(_ transport: SIPTransportKind = .udp, _ address: SocketAddress, connection: ConnectionID? = nil,
         serverName: String? = nil) {
        self.transport = transport
        self.address = address
        self.connection = connection
        self.serverName = serverName
    }

    /// The same hop without its connection: where a new connection would go.
    var anyConnection: SIPHop {
        var hop = self
        hop.connection = nil
        return hop
    }

    package var description: String { "\(transport.uriParameter):\(address)" + (connection.map { "#\($0)" } ?? "") }

    package static func == (a: SIPHop, b: SIPHop) -> Bool {
        a.transport == b.transport && a.address == b.address && a.connection == b.connection
    }

    package func hash(into hasher: inout Hasher) {
        hasher.combine(transport)
        hasher.combine(address)
        hasher.combine(connection)
    }
}
