public import DNS
public import Platform
import Glibc

/// The DNS lookups ``SIPServerLocator`` needs: NAPTR and SRV records and a host's numeric addresses.
///
/// `DNSResolver` is one; tests give a value that answers from a table.
///
/// Thread safety: conforming types must be safe to call from any thread (they are `Sendable`).
public protocol SIPNameResolver: Sendable {
    /// The NAPTR records of `name`, in any order. A resolver without NAPTR lookups (the default
    /// implementation) throws `DNSError.noData`, and the locator goes on to SRV.
    func naptr(_ name: String) throws(DNSError) -> [DNSNamingRecord]
    /// The SRV records of `name`, in any order.
    func srv(_ name: String) throws(DNSError) -> [DNSServiceRecord]
    /// The numeric IPv4 and IPv6 addresses of `host`, preferred first.
    func addresses(of host: String) throws(DNSError) -> [String]
}

extension SIPNameResolver {
    public func naptr(_ name: String) throws(DNSError) -> [DNSNamingRecord] { throw DNSError.noData }
}

extension DNSResolver: SIPNameResolver {}

/// One place to send a request: a transport, a numeric address and port, and the name the
/// server's TLS certificate must carry.
///
/// Thread safety: a value type; safe to use from any thread.
public struct SIPServerTarget: Sendable, Hashable, CustomStringConvertible {
    public var transport: SIPTransportKind
    public var address: SocketAddress
    /// The identity to check a TLS server's certificate against: the host of the URI (the
    /// domain), not the SRV target, as RFC 5922 section 4 says (DNS is not secured, so a name
    /// learnt from it proves nothing). A numeric host is itself.
    public var hostName: String

    public init(transport: SIPTransportKind, address: SocketAddress, hostName: String) {
        self.transport = transport
        self.address = address
        self.hostName = hostName
    }

    public var description: String { "\(transport.rawValue) \(address) (\(hostName))" }
}

/// Why no server was found for a URI.
///
/// Thread safety: a value type; safe to use from any thread.
public enum SIPLocationError: Error, Sendable, Equatable {
    /// The URI needs a transport we do not have: `sips:` or `transport=tls` without TLS,
    /// `transport=sctp`, `sips:` with `transport=udp`.
    case unsupportedTransport(String)
    /// The domain says the service is not available (its only SRV target is `"."`).
    case serviceUnavailable(String)
    /// DNS gave no usable address; the last lookup's error.
    case unresolved(DNSError)
}

/// Finds the servers to try for a SIP URI, as RFC 3263 section 4 says: NAPTR, SRV, then A/AAAA.
///
/// - a numeric host is the server, on the URI's port or the transport's default;
/// - a host with a port is looked up with A/AAAA only;
/// - without a `transport` parameter, the domain's NAPTR records (RFC 3263 section 4.1): those
///   with flag `s`, no regexp and a service for a transport we have (`SIPS+D2T` TLS, `SIP+D2T`
///   TCP, `SIP+D2U` UDP; only `SIPS+D2T` for `sips:`), by order then preference; the first
///   whose replacement has SRV records gives the servers;
/// - no usable NAPTR record: SRV, `_sips._tcp` for `sips:`, the one for an explicit
///   `transport`, else `_sips._tcp` (when TLS is among ``transports``), `_sip._tcp`,
///   `_sip._udp` in turn, the first name with records used;
/// - SRV records are sorted by priority and, within one, at random by weight (RFC 2782), a
///   target `"."` meaning none;
/// - no SRV record at all: A/AAAA on the default port (5060, 5061 for TLS).
///
/// The transport is the URI's `transport` parameter, else the NAPTR record's, else TLS for
/// `sips:`, else UDP (TCP when UDP is not among ``transports``). Work is bounded: at most
/// ``maximumTargets`` targets and ``maximumQueries`` DNS queries (a NAPTR or SRV lookup counts
/// one, an address lookup two: A and AAAA), at most 32 NAPTR and 32 SRV records used. Failover (the next target after a timeout or a 503) is
/// the caller's: the list is in the order to try.
///
/// ``locate(_:)`` blocks while DNS answers (each query up to the resolver's timeout × attempts):
/// never call it on the audio thread or under the user agent's lock.
///
/// Thread safety: a value type; safe to use from any thread (the resolver is `Sendable`).
public struct SIPServerLocator: Sendable {
    public var resolver: any SIPNameResolver
    /// The transports we can use; TLS only when it is configured (certificates, trust).
    public var transports: Set<SIPTransportKind>
    public var maximumTargets = 8
    public var maximumQueries = 16

    public init(resolver: any SIPNameResolver, transports: Set<SIPTransportKind> = [.udp, .tcp]) {
        self.resolver = resolver
        self.transports = transports
    }

    /// The servers for `uri`, in the order to try them.
    public func locate(_ uri: SIPURI) throws(SIPLocationError) -> [SIPServerTarget] {
        var random = SystemRandomNumberGenerator()
        return try locate(uri, using: &random)
    }

    /// The servers for `uri`, with SRV weights drawn from `random` (a seeded one in tests).
    public func locate(_ uri: SIPURI, using random: inout some RandomNumberGenerator) throws(SIPLocationError) -> [SIPServerTarget] {
        var search = Search(locator: self, hostName: uri.host)
        let secure = uri.scheme == "sips"
        var fixed: SIPTransportKind?
        if let parameter = uri.transport {
            guard let kind = SIPTransportKind(uriParameter: parameter) else { throw .unsupportedTransport(parameter) }
            // sips: with transport=tcp is TLS over TCP (RFC 3261 section 26.2.2); with udp it cannot be.
            if secure, kind == .udp { throw .unsupportedTransport("udp for a sips: URI") }
            fixed = secure ? .tls : kind
        } else if secure {
            fixed = .tls
        }
        if let fixed, !transports.contains(fixed) { throw .unsupportedTransport(fixed.uriParameter) }
        let fallback = fixed ?? [SIPTransportKind.udp, .tcp, .tls].first { transports.contains($0) } ?? .udp

        if let numeric = Self.numeric(uri.host) {
            guard let address = try? SocketAddress(host: numeric, port: uri.port ?? fallback.defaultPort) else {
                throw .unresolved(.invalidName)
            }
            return [SIPServerTarget(transport: fallback, address: address, hostName: uri.host)]
        }
        if let port = uri.port {
            return try search.addressTargets(of: uri.host, port: port, transport: fallback)
        }
        if uri.transport == nil, let targets = search.namingTargets(secure: secure, using: &random) { return targets }
        let candidates = fixed.map { [$0] } ?? [SIPTransportKind.tls, .tcp, .udp].filter { transports.contains($0) }
        for transport in candidates {
            let name = "\(transport.serviceLabels).\(uri.host)"
            if let targets = try search.serviceTargets(name, transport: transport, using: &random) { return targets }
        }
        return try search.addressTargets(of: uri.host, port: fallback.defaultPort, transport: fallback)
    }

    /// The transport a NAPTR service field names for SIP (RFC 3263 section 4.1), if we know it.
    static func transport(forService service: String) -> SIPTransportKind? {
        switch service.uppercased() {
        case "SIPS+D2T": .tls
        case "SIP+D2T": .tcp
        case "SIP+D2U": .udp
        default: nil
        }
    }

    /// SRV records in the order to try (RFC 2782): ascending priority; within a priority, each
    /// next one drawn at random with probability proportional to its weight (weight 0 first,
    /// so it is picked only when the draw is 0).
    public static func ordered(_ records: [DNSServiceRecord], using random: inout some RandomNumberGenerator) -> [DNSServiceRecord] {
        var result: [DNSServiceRecord] = []
        result.reserveCapacity(records.count)
        for (_, group) in Dictionary(grouping: records, by: \.priority).sorted(by: { $0.key < $1.key }) {
            var pool = group.filter { $0.weight == 0 } + group.filter { $0.weight != 0 }
            while !pool.isEmpty {
                let total = pool.reduce(0) { $0 + Int($1.weight) }
                let draw = Int.random(in: 0...total, using: &random)
                var running = 0
                let index = pool.firstIndex { running += Int($0.weight); return running >= draw } ?? pool.count - 1
                result.append(pool.remove(at: index))
            }
        }
        return result
    }

    /// `host` in canonical form when it is a numeric IPv4 or IPv6 address (checked with
    /// inet_pton, so nothing from DNS is ever itself looked up by name).
    static func numeric(_ host: String) -> String? {
        var bytes = in6_addr()
        for family in [AF_INET, AF_INET6] where inet_pton(family, host, &bytes) == 1 {
            var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
            guard inet_ntop(family, &bytes, &text, socklen_t(text.count)) != nil else { return nil }
            return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        }
        return nil
    }
}

/// One resolution's state: the targets so far, the queries spent, the last DNS error.
private struct Search {
    let locator: SIPServerLocator
    let hostName: String
    var targets: [SIPServerTarget] = []
    var queries = 0
    var lastError: DNSError?

    init(locator: SIPServerLocator, hostName: String) {
        self.locator = locator
        self.hostName = hostName
    }

    var isFull: Bool { targets.count >= locator.maximumTargets || queries + 2 > locator.maximumQueries }

    /// The SRV records of `name`; nil when the lookup failed (no such name, no SRV record, no answer).
    mutating func serviceRecords(_ name: String) -> [DNSServiceRecord]? {
        guard queries + 1 <= locator.maximumQueries else { return nil }
        queries += 1
        do { return try locator.resolver.srv(name) } catch {
            lastError = error
            return nil
        }
    }

    /// The NAPTR records of `hostName` for the transports we have (only TLS when `secure`), by
    /// order then preference; the first whose SRV name gives servers wins. Nil when none does:
    /// the caller goes on with its own SRV names.
    mutating func namingTargets(secure: Bool, using random: inout some RandomNumberGenerator) -> [SIPServerTarget]? {
        guard queries + 1 <= locator.maximumQueries else { return nil }
        queries += 1
        let records: [DNSNamingRecord]
        do { records = try locator.resolver.naptr(hostName) } catch {
            lastError = error
            return nil
        }
        let usable = records.prefix(32).compactMap { record -> (DNSNamingRecord, SIPTransportKind)? in
            guard record.flags.lowercased() == "s", record.regexp.isEmpty, record.replacement != ".",
                  let transport = SIPServerLocator.transport(forService: record.service),
                  locator.transports.contains(transport), !secure || transport == .tls else { return nil }
            return (record, transport)
        }.sorted { ($0.0.order, $0.0.preference) < ($1.0.order, $1.0.preference) }
        for (record, transport) in usable where !isFull {
            // A replacement that offers nothing, or whose servers do not resolve: the next record.
            if let targets = try? serviceTargets(record.replacement, transport: transport, using: &random) { return targets }
        }
        return nil
    }

    /// The servers the SRV records of `name` give, in the order to try; nil when the name has
    /// no SRV record.
    mutating func serviceTargets(_ name: String, transport: SIPTransportKind,
                                 using random: inout some RandomNumberGenerator) throws(SIPLocationError) -> [SIPServerTarget]? {
        guard let records = serviceRecords(name), !records.isEmpty else { return nil }
        let usable = records.prefix(32).filter { !$0.isNoService }
        guard !usable.isEmpty else { throw .serviceUnavailable(name) }
        for record in SIPServerLocator.ordered(Array(usable), using: &random) where !isFull {
            addTargets(of: record.target, port: record.port, transport: transport)
        }
        guard !targets.isEmpty else { throw .unresolved(lastError ?? .noData) }
        return targets
    }

    /// Appends the addresses of `host` on `port`; skips duplicates and what is not numeric.
    mutating func addTargets(of host: String, port: UInt16, transport: SIPTransportKind) {
        guard !isFull else { return }
        queries += 2
        let addresses: [String]
        do { addresses = try locator.resolver.addresses(of: host) } catch {
            lastError = error
            return
        }
        for text in addresses.prefix(32) where targets.count < locator.maximumTargets {
            guard let numeric = SIPServerLocator.numeric(text),
                  let address = try? SocketAddress(host: numeric, port: port) else { continue }
            let target = SIPServerTarget(transport: transport, address: address, hostName: hostName)
            if !targets.contains(target) { targets.append(target) }
        }
    }

    /// A/AAAA only: the targets for `host` on `port`, or the error.
    mutating func addressTargets(of host: String, port: UInt16, transport: SIPTransportKind) throws(SIPLocationError) -> [SIPServerTarget] {
        addTargets(of: host, port: port, transport: transport)
        guard !targets.isEmpty else { throw .unresolved(lastError ?? .noData) }
        return targets
    }
}
