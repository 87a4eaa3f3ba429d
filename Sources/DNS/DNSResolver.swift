public import Platform
import Synchronization

/// A DNS stub resolver over glibc's libresolv: NAPTR and SRV records and host addresses, asked of the
/// machine's name servers or of servers given (a test's dnsmasq).
///
/// Every call blocks until an answer comes or the tries run out: at most about
/// ``Configuration/timeoutSeconds`` × ``Configuration/attempts`` per server asked (glibc waits
/// longer for the second and third of several servers: in all, up to 2.3 times that with three).
/// Do not call it from the audio thread or while holding the SIP user agent's lock; resolve
/// first, then hand the addresses over.
///
/// Thread safety: safe to share between threads. One resolver state serves one query at a time
/// (glibc's `res_n*` calls are not reentrant on one state), so concurrent calls wait for each
/// other; make several resolvers for lookups in parallel.
public final class DNSResolver: Sendable {
    /// Which name servers to ask, and how long to wait for them.
    ///
    /// Thread safety: a value type; safe to use from any thread.
    public struct Configuration: Sendable, Equatable {
        /// Where queries go.
        public enum Servers: Sendable, Equatable {
            /// `/etc/resolv.conf` as `res_ninit` reads it (once, when the resolver is made).
            case system
            /// These servers only, in order (at most 3, glibc's `MAXNS`; numeric IPv4 or IPv6 with
            /// their ports; an IPv6 scope id is not kept).
            case custom([SocketAddress])
        }

        public var servers: Servers
        /// Seconds to wait for one try at one server (glibc counts whole seconds), 1 ... 30.
        public var timeoutSeconds: Int
        /// Tries per server, 1 ... 5.
        public var attempts: Int

        public init(servers: Servers, timeoutSeconds: Int = 2, attempts: Int = 2) {
            self.servers = servers
            self.timeoutSeconds = timeoutSeconds
            self.attempts = attempts
        }

        /// The machine's configuration: name servers from `/etc/resolv.conf`; ``DNSResolver/addresses(of:)``
        /// goes through `getaddrinfo`, so `/etc/hosts` and the other NSS sources count.
        public static let system = Configuration(servers: .system)

        /// Only `servers` are asked, for addresses too (`/etc/hosts` does not count).
        public static func servers(_ servers: [SocketAddress], timeoutSeconds: Int = 2, attempts: Int = 2) -> Configuration {
            Configuration(servers: .custom(servers), timeoutSeconds: timeoutSeconds, attempts: attempts)
        }
    }

    public let configuration: Configuration
    private let state: Mutex<ResolverState>

    /// Makes a resolver; reads `/etc/resolv.conf` for ``Configuration/system``.
    ///
    /// - Throws: ``DNSError/invalidConfiguration`` for no server, more than 3, or timing out of
    ///   range; ``DNSError/system`` when the resolver state cannot be set up.
    public init(_ configuration: Configuration = .system) throws(DNSError) {
        guard (1...30).contains(configuration.timeoutSeconds), (1...5).contains(configuration.attempts) else {
            throw DNSError.invalidConfiguration.asked("timeout \(configuration.timeoutSeconds) s, \(configuration.attempts) attempts")
        }
        if case .custom(let servers) = configuration.servers, servers.isEmpty || servers.count > 3 {
            throw DNSError.invalidConfiguration.asked("\(servers.count) name servers (1 to 3)")
        }
        self.configuration = configuration
        state = Mutex(try ResolverState(configuration))
    }

    /// The SRV records of `name` (`_sip._udp.example.test`), as the server listed them (at most
    /// 32; records with a target that is not a host name are left out). Order them with
    /// RFC 2782's rules before use.
    ///
    /// - Throws: ``DNSError/noSuchName``, ``DNSError/noData`` (the name has no SRV record),
    ///   ``DNSError/timeout``, ``DNSError/serverFailure``, ``DNSError/refused``,
    ///   ``DNSError/malformedAnswer``, ``DNSError/invalidName``.
    public func srv(_ name: String) throws(DNSError) -> [DNSServiceRecord] {
        guard HostName.isValid(name) else { throw DNSError.invalidName.asked("SRV '\(name)'") }
        return try state.withLock { (state: inout ResolverState) throws(DNSError) -> [DNSServiceRecord] in
            try state.query(name, type: RecordType.srv, parse: ResolverState.serviceRecord)
        }
    }

    /// The NAPTR records of `name` (`example.test`), as the server listed them (at most 32;
    /// records whose fields do not parse, or whose replacement is not a host name, are left out).
    /// Order them by ``DNSNamingRecord/order`` and ``DNSNamingRecord/preference`` before use.
    ///
    /// - Throws: as ``srv(_:)``.
    public func naptr(_ name: String) throws(DNSError) -> [DNSNamingRecord] {
        guard HostName.isValid(name) else { throw DNSError.invalidName.asked("NAPTR '\(name)'") }
        return try state.withLock { (state: inout ResolverState) throws(DNSError) -> [DNSNamingRecord] in
            try state.query(name, type: RecordType.naptr, parse: ResolverState.namingRecord)
        }
    }

    /// The numeric addresses of `host`: IPv4 (A) first, then IPv6 (AAAA), without duplicates,
    /// at most 32 of each. A numeric `host` is returned as it is.
    ///
    /// With ``Configuration/Servers/custom(_:)`` these are two queries to those servers only (A,
    /// then AAAA unless A said the name does not exist). With ``Configuration/system`` it is
    /// `getaddrinfo`, which honours `/etc/hosts` and whose time bound is `/etc/resolv.conf`'s
    /// (`options timeout:N attempts:N`) rather than this configuration's.
    ///
    /// - Throws: as ``srv(_:)``; an error only when neither family gave an address.
    public func addresses(of host: String) throws(DNSError) -> [String] {
        if let numeric = NumericAddress.normalized(host) { return [numeric] }
        guard HostName.isValid(host) else { throw DNSError.invalidName.asked("addresses of '\(host)'") }
        if case .system = configuration.servers { return try SystemAddresses.lookup(host) }
        return try state.withLock { (state: inout ResolverState) throws(DNSError) -> [String] in
            var found: [String] = []
            var firstError: DNSError?
            do throws(DNSError) {
                found = try state.query(host, type: RecordType.a, parse: ResolverState.address)
            } catch {
                // A name that does not exist has no AAAA record either: one query saved.
                if error == .noSuchName { throw error }
                firstError = error
            }
            do throws(DNSError) {
                found += try state.query(host, type: RecordType.aaaa, parse: ResolverState.address)
            } catch {
                if found.isEmpty { throw firstError.map { $0 == .noData ? error : $0 } ?? error }
            }
            var seen = Set<String>()
            return found.filter { seen.insert($0).inserted }
        }
    }
}

/// DNS record types asked for.
enum RecordType {
    static let a: Int32 = 1
    static let aaaa: Int32 = 28
    static let srv: Int32 = 33
    static let naptr: Int32 = 35

    /// The type's name, for error messages.
    static func name(_ type: Int32) -> String {
        switch type {
        case a: "A"
        case aaaa: "AAAA"
        case srv: "SRV"
        case naptr: "NAPTR"
        default: "type \(type)"
        }
    }
}
