import DNS
import Platform

extension SIPUserAgent {
    /// The servers a request to `target` may go to, in order (the first, then the ones to fail
    /// over to): the outbound proxy's when there is one, else the target's; on the transport the
    /// URI names (`transport=`, TLS for `sips:`), or for a name its SRV records say (RFC 3263),
    /// else the configured one. Blocks for DNS (bounded by the resolver's timeout): never called
    /// under the core's lock. Only names the user gave are looked up here.
    func resolve(_ target: SIPURI) throws(SIPError) -> [SIPHop] {
        let environment = machinery.environment
        let configuration = environment.configuration
        var uri = configuration.outboundProxy ?? target
        if target.scheme == "sips" { uri.scheme = "sips" }  // sips: means TLS on every hop
        if let maddr = uri.parameters["maddr"] { uri.host = maddr }
        if uri.transport == nil, uri.scheme != "sips", configuration.transport != .udp || isIPLiteral(uri.host) {
            uri.parameters["transport"] = configuration.transport.uriParameter
        }
        var transports: Set<SIPTransportKind> = [.udp, .tcp]
        if environment.network.canSend(on: .tls) { transports.insert(.tls) }
        let targets: [SIPServerTarget]
        do throws(SIPLocationError) {
            targets = try SIPServerLocator(resolver: environment.resolver, transports: transports).locate(uri)
        } catch {
            switch error {
            case .unsupportedTransport(let name): throw .unsupportedTransport(name)
            case .serviceUnavailable, .unresolved: throw .unresolvableHost(uri.host)
            }
        }
        // Our socket's family only: the other family's servers are unreachable from it.
        let hops = targets.filter { $0.address.family == localAddress.family }.prefix(8).map {
            SIPHop($0.transport, $0.address, serverName: isIPLiteral($0.hostName) ? nil : $0.hostName)
        }
        guard let first = hops.first else {
            if let other = targets.first { throw .addressFamilyMismatch(other.address) }
            throw .unresolvableHost(uri.host)
        }
        guard environment.network.canSend(on: first.transport) else { throw .unsupportedTransport(first.transport.uriParameter) }
        return Array(hops)
    }
}

/// A call target located once (``SIPUserAgent/locate(_:)``): the servers to try, and the local
/// host an SDP offer toward them should carry. Placing the call with it looks nothing up again.
///
/// Thread safety: a value type; safe to use from any thread.
public struct SIPLocatedTarget: Sendable {
    /// The target as given.
    public let uri: SIPURI
    /// Our host in Via and Contact toward the first server: what the offer's `c=` line carries.
    public let localHost: String
    let servers: [SIPHop]

    /// The transport to the first server.
    public var transport: SIPTransportKind { servers[0].transport }
    /// Whether every server the INVITE may go to (failover included) is reached over TLS: what
    /// SDES needs before it puts keys in an offer.
    public var isSecure: Bool { servers.allSatisfy { $0.transport == .tls } }
}

extension SIPUserAgent {
    /// Locates `target` (DNS for a name, the outbound proxy when there is one) for
    /// ``invite(_:offer:replaces:from:)``. Blocks for DNS, bounded by the resolver's timeout.
    ///
    /// - Throws: ``SIPError`` when the target cannot be reached from this socket.
    public func locate(_ target: SIPURI) throws(SIPError) -> SIPLocatedTarget {
        let servers = try resolve(target)
        return SIPLocatedTarget(uri: target, localHost: machinery.environment.advertisedHost(toward: servers[0].address),
                                servers: servers)
    }

    /// Places a call to a target located with ``locate(_:)``: as ``invite(to:offer:from:)`` without
    /// a second lookup.
    ///
    /// - Parameter target: where to call, located once.
    /// - Parameter offer: our session offer (nil: an INVITE without one, the answer's offer comes in the 2xx).
    /// - Parameter replaces: the target's dialog this call takes over (`Replaces`, RFC 3891):
    ///   what an attended transfer's ``SIPReferral/replaces`` says.
    /// - Parameter account: the account it is placed from (its address of record, display
    ///   name and credentials); nil: the configuration's.
    public func invite(_ target: SIPLocatedTarget, offer: SIPBody?, replaces: SIPReplaces? = nil,
                       from account: SIPAccount? = nil) throws(SIPError) -> SIPCall {
        let info = try machinery.withState {
            $0.invite(target: target.uri, destination: target.servers[0], alternates: Array(target.servers.dropFirst()),
                      offer: offer, replaces: replaces, account: account?.user)
        }.get()
        return SIPCall(core: machinery, info: info)
    }
}
