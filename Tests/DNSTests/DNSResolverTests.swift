import DNS
import Foundation
import Platform
import Testing
import TestSupport

/// The resolver against dnsmasq serving `example.test` (`Tools/interop/dns-testbed`): SRV,
/// A and AAAA, and each way a lookup fails.
@Suite("DNS resolver against dnsmasq", .enabled(if: DNSTestbed.isUsable))
struct DNSResolverTests {
    /// Runs `body` with a resolver pointed at a fresh testbed, stopped after.
    func withTestbed(_ arguments: [String] = [], _ body: (DNSResolver, DNSTestbed) throws -> Void) throws {
        let testbed = try DNSTestbed.start(arguments)
        defer { testbed.stop() }
        let resolver = try DNSResolver(.servers([testbed.address], timeoutSeconds: 2, attempts: 2))
        try body(resolver, testbed)
    }

    @Test func serviceRecordsAsServed() throws {
        try withTestbed { (resolver: DNSResolver, _: DNSTestbed) throws in
            let records = try resolver.srv("_sip._udp.example.test")
            #expect(Set(records) == [DNSServiceRecord(priority: 10, weight: 50, port: 5079, target: "down.example.test"),
                                     DNSServiceRecord(priority: 20, weight: 50, port: 5080, target: "sip.example.test")])
            let tls = try resolver.srv("_sips._tcp.example.test.")  // a trailing dot is the same name
            #expect(tls.contains(DNSServiceRecord(priority: 20, weight: 50, port: 5082, target: "sip.example.test")))
        }
    }

    @Test func namingRecordsAsServed() throws {
        try withTestbed { (resolver: DNSResolver, _: DNSTestbed) throws in
            let records = try resolver.naptr("example.test")
            #expect(Set(records) == [
                DNSNamingRecord(order: 10, preference: 10, flags: "S", service: "SIPS+D2T", replacement: "_sips._tcp.example.test"),
                DNSNamingRecord(order: 20, preference: 10, flags: "S", service: "SIP+D2T", replacement: "_sip._tcp.example.test"),
                DNSNamingRecord(order: 30, preference: 10, flags: "S", service: "SIP+D2U", replacement: "_sip._udp.example.test"),
            ])
            #expect(throws: DNSError.noData) { try resolver.naptr("sip.example.test") }
        }
    }

    @Test func addressesIPv4ThenIPv6() throws {
        try withTestbed { (resolver: DNSResolver, _: DNSTestbed) throws in
            #expect(try resolver.addresses(of: "sip2.example.test") == ["127.0.0.1", "::1"])
            #expect(try resolver.addresses(of: "sip.example.test") == ["127.0.0.1"])
            // Numeric hosts are not asked about.
            #expect(try resolver.addresses(of: "::1") == ["::1"])
            #expect(try resolver.addresses(of: "192.0.2.7") == ["192.0.2.7"])
        }
    }

    @Test func noSuchNameAndNoData() throws {
        try withTestbed { (resolver: DNSResolver, _: DNSTestbed) throws in
            #expect(throws: DNSError.noSuchName) { try resolver.srv("_sip._udp.nothing.example.test") }
            #expect(throws: DNSError.noSuchName) { try resolver.addresses(of: "nothing.example.test") }
            // The name exists (it has an A record) but no SRV record.
            let error = #expect(throws: DNSError.noData) { try resolver.srv("sip.example.test") }
            #expect(error?.message.contains("SRV sip.example.test") == true, "\(String(describing: error))")
        }
    }

    @Test func foreignZoneIsRefused() throws {
        try withTestbed { (resolver: DNSResolver, _: DNSTestbed) throws in
            let error = #expect(throws: DNSError.refused) { try resolver.addresses(of: "example.com") }
            #expect(error?.responseCode == 5)
            #expect(throws: DNSError.refused) { try resolver.srv("_sip._udp.example.org") }
        }
    }

    @Test func serviceNotAvailableIsADot() throws {
        try withTestbed(["--srv", "_sip._tcp=0 0 0 ."]) { (resolver: DNSResolver, _: DNSTestbed) throws in
            let records = try resolver.srv("_sip._tcp.example.test")
            #expect(records == [DNSServiceRecord(priority: 0, weight: 0, port: 0, target: ".")])
            #expect(records.first?.isNoService == true)
        }
    }

    @Test func oneResolverServesConcurrentCallers() async throws {
        let testbed = try DNSTestbed.start()
        defer { testbed.stop() }
        let resolver = try DNSResolver(.servers([testbed.address]))
        let counts = try await withThrowingTaskGroup(of: Int.self) { group in
            for i in 0..<8 {
                group.addTask {
                    i % 2 == 0 ? try resolver.srv("_sip._tcp.example.test").count
                               : try resolver.addresses(of: "sip2.example.test").count
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(counts.sorted() == [2, 2, 2, 2, 2, 2, 2, 2])
    }

    /// A server that never answers: the call ends after about timeout x attempts.
    @Test func silentServerTimesOutInBoundedTime() throws {
        let silent = try UDPSocket(bindingTo: SocketAddress(host: "127.0.0.1", port: 0))
        let resolver = try DNSResolver(.servers([silent.localAddress], timeoutSeconds: 1, attempts: 2))
        let start = MonotonicClock.nanoseconds()
        let error = #expect(throws: DNSError.timeout) { try resolver.srv("_sip._udp.example.test") }
        let seconds = Double(MonotonicClock.nanoseconds() - start) / 1e9
        #expect(error?.responseCode == nil)
        // The upper bound leaves room for a starved CI machine.
        #expect(seconds >= 1.5 && seconds < 6, "took \(seconds) s for 1 s x 2 attempts")
    }

    @Test func badNamesAndConfigurations() throws {
        let server = try SocketAddress(host: "127.0.0.1", port: 9)
        #expect(throws: DNSError.invalidConfiguration) { try DNSResolver(.servers([])) }
        #expect(throws: DNSError.invalidConfiguration) { try DNSResolver(.servers(Array(repeating: server, count: 4))) }
        #expect(throws: DNSError.invalidConfiguration) { try DNSResolver(.servers([server], timeoutSeconds: 0)) }
        let resolver = try DNSResolver(.servers([server], timeoutSeconds: 1, attempts: 1))
        for name in ["", "bad name.example", "a..b", String(repeating: "a", count: 64) + ".test",
                     String(repeating: "abcdefg.", count: 40), "x\u{0}y", "é.test"] {
            #expect(throws: DNSError.invalidName) { try resolver.srv(name) }
            #expect(throws: DNSError.invalidName) { try resolver.addresses(of: name) }
        }
    }

    /// The machine's configuration: getaddrinfo, so /etc/hosts counts.
    @Test func systemResolverHonoursHosts() throws {
        let resolver = try DNSResolver()
        #expect(try resolver.addresses(of: "localhost").contains { $0 == "127.0.0.1" || $0 == "::1" })
    }
}
