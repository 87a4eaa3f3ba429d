import Platform

// Token buckets per source network (Kamailio's pike module does the same per address) under one
// global bucket: a datagram takes a token from both, tokens come back at a fixed rate up to the
// bucket's size. Source addresses are spoofable, so a peer we already talk to (a dialog's, or
// one our requests went to) is not held to its source's bucket, which a flood in its name would
// drain, and it keeps a reserve of the global bucket that strangers cannot spend.

/// Per-source token buckets with a bounded table, under a global cap.
///
/// Thread safety: a value type, used under the user agent's lock.
struct SourceRateLimiter {
    private struct Bucket {
        var tokens: Double
        var updated: ContinuousClock.Instant
    }

    let rate: Double?
    let burst: Double
    let capacity: Int
    let globalRate: Double?
    let globalBurst: Double
    /// Global tokens that only known peers may take.
    let reserve: Double
    private var buckets: [SocketAddress.NetworkPrefix: Bucket] = [:]
    /// Shared by new sources while the table is full of busy ones.
    private var overflow: Bucket
    private var global: Bucket
    /// When idle sources were last forgotten (at most every 100 ms: it walks the table).
    private var purged: ContinuousClock.Instant

    init(limits: SIPLimits, now: ContinuousClock.Instant = .now) {
        rate = limits.datagramsPerSecondPerSource
        burst = Double(max(1, limits.burstPerSource))
        capacity = max(1, limits.trackedSources)
        globalRate = limits.datagramsPerSecondTotal
        globalBurst = Double(max(1, limits.burstTotal))
        reserve = globalBurst / 4
        overflow = Bucket(tokens: burst, updated: now)
        global = Bucket(tokens: globalBurst, updated: now)
        purged = now
    }

    /// Whether a datagram from `source` may be read now as a stranger's (it takes its tokens
    /// when it may); when not, a known peer may still go through ``admitKnownPeer(now:)``.
    mutating func admit(_ source: SocketAddress, now: ContinuousClock.Instant) -> Bool {
        admitBySource(source.networkPrefix, now: now) && takeGlobal(now: now, floor: reserve)
    }

    /// Whether a datagram from a peer we talk to may be read now: its source's bucket does not
    /// apply, and it may take the global reserve.
    mutating func admitKnownPeer(now: ContinuousClock.Instant) -> Bool {
        takeGlobal(now: now, floor: 0)
    }

    private mutating func admitBySource(_ key: SocketAddress.NetworkPrefix, now: ContinuousClock.Instant) -> Bool {
        guard let rate else { return true }
        if buckets[key] == nil, buckets.count >= capacity { forgetIdle(now: now, rate: rate) }
        if buckets[key] == nil, buckets.count >= capacity { return Self.take(&overflow, now: now, rate: rate, burst: burst) }
        var bucket = buckets[key] ?? Bucket(tokens: burst, updated: now)
        let admitted = Self.take(&bucket, now: now, rate: rate, burst: burst)
        buckets[key] = bucket
        return admitted
    }

    /// Takes a global token if more than `floor` are left (strangers leave the reserve).
    private mutating func takeGlobal(now: ContinuousClock.Instant, floor: Double) -> Bool {
        guard let globalRate else { return true }
        Self.refill(&global, now: now, rate: globalRate, burst: globalBurst)
        guard global.tokens >= floor + 1 else { return false }
        global.tokens -= 1
        return true
    }

    private static func refill(_ bucket: inout Bucket, now: ContinuousClock.Instant, rate: Double, burst: Double) {
        let elapsed = Double((now - bucket.updated).nanoseconds) / 1e9
        bucket.tokens = min(burst, bucket.tokens + elapsed * rate)
        bucket.updated = now
    }

    private static func take(_ bucket: inout Bucket, now: ContinuousClock.Instant, rate: Double, burst: Double) -> Bool {
        refill(&bucket, now: now, rate: rate, burst: burst)
        guard bucket.tokens >= 1 else { return false }
        bucket.tokens -= 1
        return true
    }

    /// Forgets the sources whose bucket has refilled (they have been quiet long enough that
    /// a new bucket would be the same). Linear, and only when the table is full.
    private mutating func forgetIdle(now: ContinuousClock.Instant, rate: Double) {
        guard now - purged >= .milliseconds(100) else { return }
        purged = now
        let refill = burst / rate
        buckets = buckets.filter { Double((now - $0.value.updated).nanoseconds) / 1e9 + $0.value.tokens / rate < refill }
    }
}
