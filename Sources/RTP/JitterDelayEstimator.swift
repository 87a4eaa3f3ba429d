/// Estimates how much delay the jitter buffer needs, the way WebRTC's NetEq does:
/// a histogram of each packet's *relative delay* (its transit time minus the smallest
/// transit in the last two seconds), aged by a forgetting factor, and a high quantile of it.
///
/// A packet's transit is its arrival time minus its RTP timestamp in seconds: the
/// network delay plus an unknown constant. The smallest transit in a sliding window
/// is the fastest path; taking it over a window (rather than ever) follows clock
/// drift between sender and receiver.
///
/// Thread safety: a value type holding its own memory; used by one thread (the I/O
/// thread). ``update(arrival:timestamp:)`` and ``quantile(_:)`` do not allocate.
public struct JitterDelayEstimator: ~Copyable {
    /// Histogram buckets, 1 ms each; delays of a second or more fall in the last.
    public static let bucketCount = 1000
    /// Transit samples kept for the sliding minimum.
    public static let windowCapacity = 256

    /// Weight kept by the histogram per packet once started (NetEq: 0.983).
    public let forgetFactor: Double
    /// Length of the sliding window for the fastest transit, in nanoseconds.
    public let historyNanoseconds: Int64

    private let histogram: UnsafeMutablePointer<Double>
    private let windowArrival: UnsafeMutablePointer<Int64>
    private let windowTransit: UnsafeMutablePointer<Int64>
    private var windowStart = 0
    private var windowCount = 0
    private var updates = 0
    /// The smallest transit in the window, in nanoseconds (arrival clock minus RTP time).
    public private(set) var baseTransit: Int64 = 0

    /// Creates an estimator whose histogram starts as one packet's worth of `priorMs`.
    public init(forgetFactor: Double = 0.983, historyMs: Int = 2000, priorMs: Double = 40) {
        self.forgetFactor = forgetFactor
        historyNanoseconds = Int64(historyMs) * 1_000_000
        histogram = .allocate(capacity: Self.bucketCount)
        windowArrival = .allocate(capacity: Self.windowCapacity)
        windowTransit = .allocate(capacity: Self.windowCapacity)
        reset(priorMs: priorMs)
    }

    deinit {
        histogram.deallocate()
        windowArrival.deallocate()
        windowTransit.deallocate()
    }

    /// Forgets everything; the histogram becomes one packet's worth of `priorMs`.
    public mutating func reset(priorMs: Double) {
        histogram.initialize(repeating: 0, count: Self.bucketCount)
        histogram[Self.bucket(priorMs)] = 1
        windowStart = 0
        windowCount = 0
        updates = 0
        baseTransit = 0
    }

    private static func bucket(_ ms: Double) -> Int { max(0, min(bucketCount - 1, Int(ms))) }

    /// Accounts for a packet.
    ///
    /// - Parameters:
    ///   - arrival: arrival time in nanoseconds (any origin, the same for every call).
    ///   - timestamp: its RTP timestamp, extended and converted to nanoseconds.
    /// - Returns: the packet's relative delay in milliseconds.
    @discardableResult
    public mutating func update(arrival: Int64, timestamp: Int64) -> Double {
        let transit = arrival - timestamp
        // Slide the window: drop samples older than the history, and the oldest if full.
        while windowCount > 0, arrival - windowArrival[windowStart] > historyNanoseconds || windowCount == Self.windowCapacity {
            windowStart = (windowStart + 1) % Self.windowCapacity
            windowCount -= 1
        }
        let slot = (windowStart + windowCount) % Self.windowCapacity
        windowArrival[slot] = arrival
        windowTransit[slot] = transit
        windowCount += 1
        var minimum = transit
        for i in 0..<windowCount {
            minimum = min(minimum, windowTransit[(windowStart + i) % Self.windowCapacity])
        }
        baseTransit = minimum

        let relativeMs = Double(transit - minimum) / 1e6
        // Progressive forgetting at the start (an average of everything so far, the
        // prior counting as one packet), then exponential with `forgetFactor`.
        let factor = min(forgetFactor, 1 - 1 / Double(updates + 2))
        for i in 0..<Self.bucketCount { histogram[i] *= factor }
        histogram[Self.bucket(relativeMs)] += 1 - factor
        updates += 1
        return relativeMs
    }

    /// The relative delay in milliseconds below which a fraction `q` of the histogram's weight lies
    /// (linear within a 1 ms bucket).
    public func quantile(_ q: Double) -> Double {
        var total = 0.0
        for i in 0..<Self.bucketCount { total += histogram[i] }
        guard total > 0 else { return 0 }
        // Interpolated within the bucket where the cumulative weight reaches q.
        let goal = q * total
        var sum = 0.0
        for i in 0..<Self.bucketCount {
            let next = sum + histogram[i]
            if next >= goal, histogram[i] > 0 { return Double(i) + (goal - sum) / histogram[i] }
            sum = next
        }
        return Double(Self.bucketCount)
    }
}
