import DNS
import Platform
import SIP
import Synchronization
import Testing
import TestSupport

/// RFC 3263 section 4 against dnsmasq serving `example.test` (`Tools/interop/dns-testbed`):
/// SRV priority 10 -> down.example.test:5079 (nothing listens), 20 -> sip.example.test at
/// 5080 (UDP), 5081 (TCP), 5082 (TLS).
@Suite("Server location against dnsmasq", .enabled(if: DNSTestbed.isUsable))
struct ServerLocatorTestsWithTestbed {
    /// Runs `body` with a `locate` that asks a fresh testbed (one per test: stopping dnsmasq takes seconds).
    func withTestbed(_ body: ((String, Set<SIPTransportKind>) throws -> Result<[String], SIPLocationError>) throws -> Void) throws {
        let testbed = try DNSTestbed.start()
        defer { testbed.stop() }
        let resolver = try DNSResolver(.servers([testbed.address]))
        try body { uri, transports in
            let locator = SIPServerLocator(resolver: resolver, transports: transports)
            var random = SeededRandom(seed: 1)
            let parsed = try #require(SIPURI(uri))
            return Result { () throws(SIPLocationError) in try locator.locate(parsed, using: &random).map(\.description) }
        }
    }

    @Test func srvTargetsInPriorityOrder() throws {
        try withTestbed { (locate: (String, Set<SIPTransportKind>) throws -> Result<[String], SIPLocationError>) throws in
            // TCP before UDP when the URI names none; TLS only when configured.
            #expect(try locate("sip:bob@example.test", [.udp, .tcp]).get() == ["TCP 127.0.0.1:5079 (example.test)", "TCP 127.0.0.1:5081 (example.test)"])
            #expect(try locate("sip:bob@example.test", [.udp]).get() == ["UDP 127.0.0.1:5079 (example.test)", "UDP 127.0.0.1:5080 (example.test)"])
            #expect(try locate("sip:bob@example.test", [.udp, .tcp, .tls]).get() == ["TLS 127.0.0.1:5079 (example.test)", "TLS 127.0.0.1:5082 (example.test)"])
            #expect(try locate("sip:bob@example.test;transport=udp", [.udp, .tcp]).get() == ["UDP 127.0.0.1:5079 (example.test)", "UDP 127.0.0.1:5080 (example.test)"])
            #expect(try locate("sips:bob@example.test", [.udp, .tls]).get() == ["TLS 127.0.0.1:5079 (example.test)", "TLS 127.0.0.1:5082 (example.test)"])
        }
    }

    @Test func withoutSRVTheAddressesOnTheDefaultPort() throws {
        try withTestbed { (locate: (String, Set<SIPTransportKind>) throws -> Result<[String], SIPLocationError>) throws in
            #expect(try locate("sip:bob@sip2.example.test", [.udp, .tcp]).get() == ["UDP 127.0.0.1:5060 (sip2.example.test)", "UDP [::1]:5060 (sip2.example.test)"])
            #expect(try locate("sips:bob@sip.example.test", [.tls]).get() == ["TLS 127.0.0.1:5061 (sip.example.test)"])
            // A port means no SRV lookup, even where SRV records exist (example.test has no A record).
            #expect(try locate("sip:bob@example.test:5099", [.udp, .tcp]) == .failure(.unresolved(.noData)))
            #expect(try locate("sip:bob@sip.example.test:5099;transport=tcp", [.udp, .tcp]).get() == ["TCP 127.0.0.1:5099 (sip.example.test)"])
        }
    }

    @Test func aNameThatDoesNotExist() throws {
        try withTestbed { (locate: (String, Set<SIPTransportKind>) throws -> Result<[String], SIPLocationError>) throws in
            #expect(try locate("sip:bob@nothing.example.test", [.udp, .tcp]) == .failure(.unresolved(.noSuchName)))
        }
    }
}

/// The ordering and bounds, with a resolver that answers from a table.
@Suite("Server location rules")
struct ServerLocatorTests {
    /// Answers from dictionaries and records every name asked.
    struct TableResolver: SIPNameResolver {
        var services: [String: [DNSServiceRecord]] = [:]
        var hosts: [String: [String]] = [:]
        var naming: [String: [DNSNamingRecord]] = [:]
        final class Log: Sendable { let names = Mutex<[String]>([]) }
        let log = Log()

        func naptr(_ name: String) throws(DNSError) -> [DNSNamingRecord] {
            log.names.withLock { $0.append("NAPTR \(name)") }
            guard let records = naming[name] else { throw .noData }
            return records
        }

        func srv(_ name: String) throws(DNSError) -> [DNSServiceRecord] {
            log.names.withLock { $0.append(name) }
            guard let records = services[name] else { throw .noSuchName }
            return records
        }

        func addresses(of host: String) throws(DNSError) -> [String] {
            log.names.withLock { $0.append(host) }
            guard let addresses = hosts[host] else { throw .noSuchName }
            return addresses
        }

        var asked: [String] { log.names.withLock { $0 } }
    }

    func srv(_ priority: UInt16, _ weight: UInt16, _ port: UInt16, _ target: String) -> DNSServiceRecord {
        DNSServiceRecord(priority: priority, weight: weight, port: port, target: target)
    }

    func locate(_ uri: String, _ resolver: TableResolver, transports: Set<SIPTransportKind> = [.udp, .tcp],
                seed: UInt64 = 7) throws(SIPLocationError) -> [String] {
        var random = SeededRandom(seed: seed)
        return try SIPServerLocator(resolver: resolver, transports: transports).locate(SIPURI(uri)!, using: &random).map(\.description)
    }

    @Test func numericHostsAreNotLookedUp() throws {
        let resolver = TableResolver()
        #expect(try locate("sip:bob@192.0.2.1", resolver) == ["UDP 192.0.2.1:5060 (192.0.2.1)"])
        #expect(try locate("sip:bob@192.0.2.1:5070;transport=TCP", resolver) == ["TCP 192.0.2.1:5070 (192.0.2.1)"])
        #expect(try locate("sips:bob@[2001:db8::1]", resolver, transports: [.tls]) == ["TLS [2001:db8::1]:5061 (2001:db8::1)"])
        #expect(resolver.asked.isEmpty)
    }

    @Test func transportsWeCannotUse() {
        let resolver = TableResolver()
        #expect(throws: SIPLocationError.unsupportedTransport("tls")) { try locate("sips:bob@example.test", resolver) }
        #expect(throws: SIPLocationError.unsupportedTransport("tls")) { try locate("sip:bob@example.test;transport=tls", resolver) }
        #expect(throws: SIPLocationError.unsupportedTransport("sctp")) { try locate("sip:bob@example.test;transport=sctp", resolver) }
        #expect(throws: SIPLocationError.unsupportedTransport("udp for a sips: URI")) {
            try locate("sips:bob@example.test;transport=udp", resolver, transports: [.udp, .tls])
        }
        #expect(resolver.asked.isEmpty)
    }

    @Test func transportOrderAndFirstNameWithRecords() throws {
        var resolver = TableResolver()
        resolver.services["_sip._udp.example.test"] = [srv(1, 1, 5070, "a.example.test")]
        resolver.hosts["a.example.test"] = ["192.0.2.1"]
        // No _sips._tcp (TLS configured) nor _sip._tcp records: UDP's are used.
        #expect(try locate("sip:bob@example.test", resolver, transports: [.udp, .tcp, .tls]) == ["UDP 192.0.2.1:5070 (example.test)"])
        #expect(resolver.asked == ["NAPTR example.test", "_sips._tcp.example.test", "_sip._tcp.example.test", "_sip._udp.example.test", "a.example.test"])
        // An explicit transport asks its own name only; none there: A/AAAA on the default port.
        let explicit = TableResolver(services: resolver.services, hosts: ["example.test": ["192.0.2.9"]])
        #expect(try locate("sip:bob@example.test;transport=tcp", explicit) == ["TCP 192.0.2.9:5060 (example.test)"])
        #expect(explicit.asked == ["_sip._tcp.example.test", "example.test"])
        // A port: A/AAAA only.
        let ported = TableResolver(services: resolver.services, hosts: ["example.test": ["192.0.2.9", "2001:db8::9"]])
        #expect(try locate("sip:bob@example.test:5999", ported) == ["UDP 192.0.2.9:5999 (example.test)", "UDP [2001:db8::9]:5999 (example.test)"])
        #expect(ported.asked == ["example.test"])
    }

    func naptr(_ order: UInt16, _ preference: UInt16, _ flags: String, _ service: String, _ replacement: String,
               regexp: String = "") -> DNSNamingRecord {
        DNSNamingRecord(order: order, preference: preference, flags: flags, service: service, regexp: regexp, replacement: replacement)
    }

    @Test func namingRecordsChooseTheTransport() throws {
        var resolver = TableResolver()
        resolver.naming["example.test"] = [
            naptr(10, 10, "s", "SIP+D2U", "_sip._udp.example.test"),
            naptr(10, 5, "S", "sip+d2t", "_sip._tcp.example.test"),  // flags and services are case-insensitive
            naptr(5, 1, "s", "SIP+D2S", "_sip._sctp.example.test"),  // SCTP: not ours
            naptr(1, 1, "u", "E2U+sip", ".", regexp: "!^.*$!sip:bob@evil.example!"),  // not a SIP server record
            naptr(2, 1, "s", "SIPS+D2T", "_sips._tcp.example.test"),  // TLS: not configured here
        ]
        resolver.services = ["_sip._udp.example.test": [srv(1, 0, 5070, "u.example.test")],
                             "_sip._tcp.example.test": [srv(1, 0, 5071, "t.example.test")]]
        resolver.hosts = ["u.example.test": ["192.0.2.1"], "t.example.test": ["192.0.2.2"]]
        // Order 10: preference 5 (TCP) before 10 (UDP).
        #expect(try locate("sip:bob@example.test", resolver) == ["TCP 192.0.2.2:5071 (example.test)"])
        #expect(resolver.asked == ["NAPTR example.test", "_sip._tcp.example.test", "t.example.test"])
        // Without TCP, UDP's record.
        #expect(try locate("sip:bob@example.test", resolver, transports: [.udp]) == ["UDP 192.0.2.1:5070 (example.test)"])
        // An explicit transport skips NAPTR.
        let explicit = TableResolver(services: resolver.services, hosts: resolver.hosts, naming: resolver.naming)
        #expect(try locate("sip:bob@example.test;transport=udp", explicit) == ["UDP 192.0.2.1:5070 (example.test)"])
        #expect(explicit.asked == ["_sip._udp.example.test", "u.example.test"])
    }

    @Test func sipsTakesOnlyTLSRecordsAndKeepsTheDomainsIdentity() throws {
        var resolver = TableResolver()
        resolver.naming["example.test"] = [naptr(1, 1, "s", "SIP+D2T", "_sip._tcp.example.test"),
                                           naptr(2, 1, "s", "SIPS+D2T", "_sips._tcp.provider.net")]
        resolver.services = ["_sip._tcp.example.test": [srv(1, 0, 5060, "t.example.test")],
                             "_sips._tcp.provider.net": [srv(1, 0, 5061, "edge.provider.net")]]
        resolver.hosts = ["t.example.test": ["192.0.2.1"], "edge.provider.net": ["192.0.2.7"]]
        #expect(try locate("sips:bob@example.test", resolver, transports: [.udp, .tcp, .tls]) == ["TLS 192.0.2.7:5061 (example.test)"])
    }

    @Test func namingRecordsThatLeadNowhereFallBackToOurOwnOrder() throws {
        var resolver = TableResolver()
        resolver.naming["example.test"] = [naptr(1, 1, "s", "SIP+D2T", "_sip._tcp.nowhere.test"),
                                           naptr(2, 1, "s", "SIP+D2U", "_sip._udp.unresolved.test")]
        resolver.services = ["_sip._udp.unresolved.test": [srv(1, 0, 5060, "gone.test")],
                             "_sip._udp.example.test": [srv(1, 0, 5090, "u.example.test")]]
        resolver.hosts = ["u.example.test": ["192.0.2.3"]]
        #expect(try locate("sip:bob@example.test", resolver) == ["UDP 192.0.2.3:5090 (example.test)"])
        #expect(resolver.asked == ["NAPTR example.test", "_sip._tcp.nowhere.test", "_sip._udp.unresolved.test", "gone.test",
                                   "_sip._tcp.example.test", "_sip._udp.example.test", "u.example.test"])
    }

    @Test func prioritiesAscendAndTheIdentityIsTheDomain() throws {
        var resolver = TableResolver()
        resolver.services["_sip._tcp.example.test"] = [srv(30, 0, 3, "c.provider.net"), srv(10, 0, 1, "a.provider.net"), srv(20, 0, 2, "b.provider.net")]
        resolver.hosts = ["a.provider.net": ["192.0.2.1"], "b.provider.net": ["192.0.2.2"], "c.provider.net": ["192.0.2.3"]]
        #expect(try locate("sip:bob@example.test", resolver) == [
            "TCP 192.0.2.1:1 (example.test)", "TCP 192.0.2.2:2 (example.test)", "TCP 192.0.2.3:3 (example.test)"])
    }

    @Test func weightsShareTheFirstPlace() {
        let records = [srv(10, 10, 1, "light"), srv(10, 90, 2, "heavy"), srv(5, 0, 3, "first")]
        var random = SeededRandom(seed: 42)
        var heavyFirst = 0
        for _ in 0..<10_000 {
            let order = SIPServerLocator.ordered(records, using: &random)
            #expect(order.first?.target == "first")
            if order[1].target == "heavy" { heavyFirst += 1 }
        }
        #expect((8_700...9_300).contains(heavyFirst), "heavy first \(heavyFirst) of 10000")
        // Weight 0 beside weighted records: first only when the draw is 0 (1 in total + 1).
        let zero = [srv(1, 0, 1, "zero"), srv(1, 99, 2, "w")]
        var zeroFirst = 0
        for _ in 0..<10_000 where SIPServerLocator.ordered(zero, using: &random)[0].target == "zero" { zeroFirst += 1 }
        #expect((50...150).contains(zeroFirst), "zero first \(zeroFirst) of 10000")
        // All weights 0: the server's order.
        let flat = [srv(1, 0, 1, "x"), srv(1, 0, 2, "y"), srv(1, 0, 3, "z")]
        #expect(SIPServerLocator.ordered(flat, using: &random).map(\.target) == ["x", "y", "z"])
    }

    @Test func aDotMeansNoService() throws {
        var resolver = TableResolver()
        resolver.services["_sip._tcp.example.test"] = [srv(0, 0, 0, ".")]
        resolver.hosts["example.test"] = ["192.0.2.1"]
        #expect(throws: SIPLocationError.serviceUnavailable("_sip._tcp.example.test")) { try locate("sip:bob@example.test", resolver) }
        // Beside real targets a dot is skipped.
        resolver.services["_sip._tcp.example.test"] = [srv(0, 0, 0, "."), srv(1, 0, 5070, "a.example.test")]
        resolver.hosts["a.example.test"] = ["192.0.2.5"]
        #expect(try locate("sip:bob@example.test", resolver) == ["TCP 192.0.2.5:5070 (example.test)"])
    }

    @Test func boundedTargetsAndQueries() throws {
        var resolver = TableResolver()
        resolver.services["_sip._udp.example.test"] = (0..<40).map { srv(UInt16($0), 0, 5060, "h\($0).example.test") }
        for i in 0..<40 { resolver.hosts["h\(i).example.test"] = ["192.0.2.\(i)", "2001:db8::\(i)"] }
        #expect(try locate("sip:bob@example.test", resolver, transports: [.udp]).count == 8)
        // Targets that never resolve: the queries stop at 16 (NAPTR, SRV, then seven address lookups of two).
        let failing = TableResolver(services: ["_sip._udp.example.test": resolver.services["_sip._udp.example.test"]!])
        #expect(throws: SIPLocationError.unresolved(.noSuchName)) { try locate("sip:bob@example.test", failing, transports: [.udp]) }
        #expect(failing.asked.count == 9)
    }

    @Test func duplicatesAndNamesFromTheResolverAreDropped() throws {
        var resolver = TableResolver()
        resolver.services["_sip._udp.example.test"] = [srv(1, 0, 5060, "a.example.test"), srv(2, 0, 5060, "b.example.test")]
        // b's "address" is a name: it is never itself looked up.
        resolver.hosts = ["a.example.test": ["192.0.2.1", "192.0.2.1"], "b.example.test": ["evil.example", "192.0.2.1"]]
        #expect(try locate("sip:bob@example.test", resolver, transports: [.udp]) == ["UDP 192.0.2.1:5060 (example.test)"])
        #expect(!resolver.asked.contains("evil.example"))
    }

    @Test func transportKindForms() {
        #expect(SIPTransportKind.tls.rawValue == "TLS")
        #expect(SIPTransportKind.tcp.uriParameter == "tcp")
        #expect(SIPTransportKind(uriParameter: "UdP") == .udp)
        #expect(SIPTransportKind(uriParameter: "ws") == nil)
        #expect(SIPTransportKind.tls.defaultPort == 5061 && SIPTransportKind.udp.defaultPort == 5060)
        #expect(SIPTransportKind.allCases.map(\.serviceLabels) == ["_sip._udp", "_sip._tcp", "_sips._tcp"])
    }
}
