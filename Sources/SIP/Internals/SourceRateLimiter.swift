// A token bucket per source IP address (Kamailio's pike module does the same per address): a
// datagram takes a token, tokens come back at a fixed rate up to the bucket's size.

/// Per-source token buckets with a bounded table.
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
    private var buckets: [String: Bucket] = [:]
    /// Shared by new sources while the table is full of busy ones.
    private var overflow: Bucket
    /// When idle sources were last forgotten (at most every 100 ms: it walks the table).
    private var purged: ContinuousClock.Instant

    init(limits: SIPLimits, now: ContinuousClock.Instant = .now) {
        rate = limits.datagramsPerSecondPerSource
        burst = Double(max(1, limits.burstPerSource))
        capacity = max(1, limits.trackedSources)
        overflow = Bucket(tokens: burst, updated: now)
        purged = now
    }

    /// Whether a datagram from `host` may be read now (it takes a token when it may).
    mutating func admit(_ host: String, now: ContinuousClock.Instant) -> Bool {
        guard let rate else { return true }
        if buckets[host] == nil, buckets.count >= capacity { forgetIdle(now: now, rate: rate) }
        if buckets[host] == nil, buckets.count >= capacity { return take(&overflow, now: now, rate: rate) }
        var bucket = buckets[host] ?? Bucket(tokens: burst, updated: now)
        let admitted = take(&bucket, now: now, rate: rate)
        buckets[host] = bucket
        return admitted
    }

    private func take(_ bucket: inout Bucket, now: ContinuousClock.Instant, rate: Double) -> Bool {
        let elapsed = Double((now - bucket.updated).nanoseconds) / 1e9
        bucket.tokens = min(burst, bucket.tokens + elapsed * rate)
        bucket.updated = now
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
