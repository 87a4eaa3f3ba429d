/// Finds delay peaks that recur, the way NetEq's peak detector does: a packet whose relative
/// delay stands well above the jitter quantile is a peak; once two peaks fall within the
/// window, the target must cover the highest of them until the peaks stop for a window.
///
/// A quantile alone misses a pattern that is rare but regular: a packet that arrives just
/// after the pull it was due for, one time in fifty, is 2 % of the packets, under a 95 %
/// quantile, yet each one is 20 ms of concealment. Bursty device timing (a sound server's
/// cycle under the call's period) makes exactly that pattern.
///
/// A peak is an event, not a packet: the packets that come together after a stall (a starved
/// thread, a network queue that empties at once) each stand above the quantile by a packet
/// interval less than the one before, and counted one by one, a single 160 ms stall made three
/// peaks under ``maximumExcessMs`` and held the target 60 ms up for the window. A late packet
/// whose relative delay is below the one before it arrived faster than it was sent: it is
/// catching up, and belongs to the same event, however long the receiving thread was kept from
/// reading it (a time limit on the burst split one stall into peaks when the thread was
/// preempted halfway through the catch-up). An event counts once, at its highest packet; one
/// whose first packet was a stall is a stall throughout.
///
/// Thread safety: a value type with inline storage; used by one thread (the I/O thread).
/// ``update(relativeDelayMs:quantileMs:at:)`` and ``peakMs(at:)`` do not allocate.
public struct DelayPeakDetector: Sendable {
    /// How far above the quantile a relative delay must be to count as a peak, in milliseconds.
    public let thresholdMs: Double
    /// How far above the quantile a peak may be, in milliseconds: the pattern this covers is a
    /// few periods of burst; a packet later than that is a stall (a starved thread, a route
    /// change), which holding the whole call's delay up for the window would cost more than
    /// concealing it once.
    public let maximumExcessMs: Double
    /// How long a peak is remembered, in nanoseconds.
    public let windowNanoseconds: Int64
    /// The latest peaks, a ring: when each came (nanoseconds) and how high it was (ms).
    private var times = InlineArray<8, Int64>(repeating: 0)
    private var heights = InlineArray<8, Double>(repeating: 0)
    private var count = 0
    private var next = 0
    /// The last packet's relative delay, and what its event has counted so far.
    private var lastDelayMs = 0.0
    private var burst = Burst.nothing

    private enum Burst { case nothing, peak, stall }

    public init(thresholdMs: Double = 5, maximumExcessMs: Double = 60, windowMs: Int = 10_000) {
        self.thresholdMs = thresholdMs
        self.maximumExcessMs = maximumExcessMs
        windowNanoseconds = Int64(windowMs) * 1_000_000
    }

    /// Forgets every peak.
    public mutating func reset() {
        count = 0
        next = 0
        lastDelayMs = 0
        burst = .nothing
    }

    /// Accounts for one packet's relative delay, measured at `time` (nanoseconds, any origin).
    public mutating func update(relativeDelayMs: Double, quantileMs: Double, at time: Int64) {
        let catchingUp = relativeDelayMs < lastDelayMs
        lastDelayMs = relativeDelayMs
        let excess = relativeDelayMs - quantileMs
        guard excess > thresholdMs else {
            burst = .nothing
            return
        }
        if !catchingUp { burst = .nothing }
        switch burst {
        case .stall, .peak:
            return  // catching up: lower than the packet that began the event
        case .nothing where excess > maximumExcessMs:
            burst = .stall
        case .nothing:
            times[next] = time
            heights[next] = relativeDelayMs
            next = (next + 1) % times.count
            count = min(count + 1, times.count)
            burst = .peak
        }
    }

    /// The delay the recurring peaks ask for at `time`: the highest peak in the window when
    /// the window holds two or more, else 0.
    public func peakMs(at time: Int64) -> Double {
        var recent = 0
        var highest = 0.0
        for i in 0..<count where time - times[i] <= windowNanoseconds {
            recent += 1
            highest = max(highest, heights[i])
        }
        return recent >= 2 ? highest : 0
    }
}
