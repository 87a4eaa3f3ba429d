/// Bounds on what strangers on the network can make a user agent keep, do or send.
///
/// Every datagram from a source IP address takes a token from that address's bucket (as
/// Kamailio's `pike` module does): a source that sends faster than
/// ``datagramsPerSecondPerSource`` once its ``burstPerSource`` is spent is dropped unread and
/// counted (``SIPStatistics/rateLimited``). State is capped: completed server transactions
/// beyond ``maximumServerTransactions`` and ended calls beyond ``maximumEndedCalls`` are
/// forgotten oldest first, and incoming calls beyond ``maximumIncomingCalls`` get 486.
///
/// Thread safety: a value type; safe to use from any thread.
public struct SIPLimits: Sendable, Hashable {
    /// Datagrams per second a source IP address may send on average; nil: no rate limit.
    /// A call's signalling is a few datagrams a second at most.
    public var datagramsPerSecondPerSource: Double?
    /// Datagrams a source may send in a row before the rate applies (the bucket's size).
    public var burstPerSource: Int
    /// Source addresses tracked at once; beyond, idle ones are forgotten, and while all are
    /// busy new sources share one bucket (so a spoofed flood cannot grow the table).
    public var trackedSources: Int
    /// Server transactions kept at once. Beyond, the oldest one that has sent its final
    /// response is forgotten early (a retransmitted request then counts as new); a request
    /// that finds none to forget is dropped (``SIPStatistics/stateLimitDropped``).
    public var maximumServerTransactions: Int
    /// Incoming calls not yet ended, at once: more INVITEs get 486 Busy Here.
    public var maximumIncomingCalls: Int
    /// Ended calls kept to absorb late messages (64 × T1 each): beyond, the oldest is forgotten.
    public var maximumEndedCalls: Int

    public init(datagramsPerSecondPerSource: Double? = 50, burstPerSource: Int = 100, trackedSources: Int = 1024,
                maximumServerTransactions: Int = 256, maximumIncomingCalls: Int = 32, maximumEndedCalls: Int = 64) {
        self.datagramsPerSecondPerSource = datagramsPerSecondPerSource
        self.burstPerSource = burstPerSource
        self.trackedSources = trackedSources
        self.maximumServerTransactions = maximumServerTransactions
        self.maximumIncomingCalls = maximumIncomingCalls
        self.maximumEndedCalls = maximumEndedCalls
    }

    /// The defaults: 50 datagrams a second per source after a burst of 100, 1024 sources,
    /// 256 server transactions, 32 incoming calls, 64 ended calls.
    public static let `default` = SIPLimits()

    /// The default state limits without a rate limit (for a flood from one address, such as
    /// a test's, that checks the state limits alone).
    public static let unlimitedRate = SIPLimits(datagramsPerSecondPerSource: nil)
}
