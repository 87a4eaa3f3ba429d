import Platform
@testable import SIP
import Testing

/// The per-source token buckets under the global one, on a virtual clock.
@Suite struct SourceRateLimiterTests {
    private static func address(_ host: String) -> SocketAddress {
        (try? SocketAddress(host: host, port: 5060))!
    }

    private final class Limiter {
        var limiter: SourceRateLimiter
        let start = ContinuousClock.now

        init(_ limits: SIPLimits) { limiter = SourceRateLimiter(limits: limits, now: start) }

        /// Whether a stranger's datagram is read; a known peer's when `known`.
        func admit(_ host: String, after delay: Duration = .zero, known: Bool = false) -> Bool {
            let now = start + delay
            return limiter.admit(SourceRateLimiterTests.address(host), now: now) || known && limiter.admitKnownPeer(now: now)
        }
    }

    /// A source gets its burst, then the rate; another source has its own bucket.
    @Test func eachSourceHasItsOwnBucket() {
        let limiter = Limiter(SIPLimits(datagramsPerSecondPerSource: 10, burstPerSource: 5))
        #expect((0..<8).filter { _ in limiter.admit("192.0.2.1") }.count == 5)
        #expect(limiter.admit("192.0.2.2"))
        #expect(!limiter.admit("192.0.2.1", after: .milliseconds(50)))
        #expect(limiter.admit("192.0.2.1", after: .milliseconds(150)))  // 1.5 tokens back
        #expect(SourceRateLimiter(limits: .unlimitedRate).rate == nil)
    }

    /// A table full of busy sources (a spoofed flood) does not grow: new sources share one
    /// bucket, and quiet ones make room again.
    @Test func theTableIsBounded() {
        let limiter = Limiter(SIPLimits(datagramsPerSecondPerSource: 1, burstPerSource: 2, trackedSources: 3))
        for host in ["192.0.2.1", "192.0.2.2", "192.0.2.3"] { #expect(limiter.admit(host)) }
        // Three more new sources: the shared bucket lets the first two through.
        var shared: [Bool] = []
        for host in ["192.0.2.4", "192.0.2.5", "192.0.2.6"] { shared.append(limiter.admit(host)) }
        #expect(shared == [true, true, false])
        // Two seconds on, the first three have refilled and are forgotten: a new one gets its own bucket.
        #expect((0..<3).map { _ in limiter.admit("192.0.2.7", after: .seconds(2)) } == [true, true, false])
    }

    /// IPv6 sources share a bucket per /64: an attacker with a prefix has one bucket, not 2^64.
    @Test func ipv6SourcesShareTheirSlash64() {
        let limiter = Limiter(SIPLimits(datagramsPerSecondPerSource: 1, burstPerSource: 4))
        let sameSlash64 = (1...8).map { "2001:db8:1:2::\($0)" }
        var admitted = 0
        for host in sameSlash64 where limiter.admit(host) { admitted += 1 }
        #expect(admitted == 4)
        #expect(limiter.admit("2001:db8:1:3::1"))
    }

    /// A flood from many sources stops at the global cap, and strangers leave a quarter of the
    /// global burst to the peers we talk to, whose own source bucket does not apply (its
    /// address may be the one the flood spoofs).
    @Test func theGlobalCapKeepsAReserveForKnownPeers() {
        let limiter = Limiter(SIPLimits(datagramsPerSecondPerSource: 1, burstPerSource: 2,
                                        datagramsPerSecondTotal: 10, burstTotal: 100, trackedSources: 10_000))
        var strangers = 0
        for i in 0..<200 where limiter.admit("10.0.\(i / 250).\(i % 250)") { strangers += 1 }
        #expect(strangers == 75)
        // The peer's own address is flooded too: its bucket is spent, but it is known.
        _ = limiter.admit("192.0.2.9")
        _ = limiter.admit("192.0.2.9")
        #expect(!limiter.admit("192.0.2.9"))
        #expect((0..<30).filter { _ in limiter.admit("192.0.2.9", known: true) }.count == 25)
        #expect(!limiter.admit("192.0.2.10"))
        // A second later 10 tokens are back, under the reserve: still the peer's alone.
        #expect(!limiter.admit("192.0.2.11", after: .seconds(1)))
        #expect(limiter.admit("192.0.2.9", after: .seconds(1), known: true))
    }
}
