/// Bounds on what strangers on the network can make a user agent keep, do or send.
///
/// Every datagram from a source IP address (an IPv6 /64) takes a token from that address's
/// bucket (as Kamailio's `pike` module does) and one from a global bucket: a source that sends faster than
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
    /// Datagrams per second read from all sources together; nil: no global cap. A quarter of
    /// ``burstTotal`` is kept for the peers we talk to (our requests' destinations, our dialogs'
    /// peers, the registrar), which also skip their source's bucket: a flood that spoofs their
    /// address cannot silence them, and one from many addresses costs bounded CPU.
    public var datagramsPerSecondTotal: Double?
    /// Datagrams read in a row from all sources before the global rate applies.
    public var burstTotal: Int
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
    /// Our own requests in progress at once (client transactions): beyond, a new call or
    /// OPTIONS fails with ``SIPError/tooManyRequests`` and a BYE for a fork is not sent.
    public var maximumClientTransactions: Int
    /// `Record-Route` values a dialog keeps (one per proxy on the way): an INVITE with more gets
    /// 400, a 2xx with more is dropped and ends the call.
    public var maximumRouteSet: Int
    /// Bytes of `Record-Route` a dialog keeps (every in-dialog request carries them), as for
    /// ``maximumRouteSet``.
    public var maximumRouteSetBytes: Int
    /// Forked 2xx to one INVITE that are acknowledged and ended with a BYE; more are dropped.
    public var maximumForks: Int
    /// TCP and TLS connections at once, opened and accepted: beyond, new ones are refused.
    public var maximumConnections: Int
    /// Connections accepted from one source address at once.
    public var maximumConnectionsPerSource: Int
    /// A connection with no byte in or out for this long is closed (a registration's keep-alives
    /// and refreshes keep its own open).
    public var connectionIdleSeconds: Int

    public init(datagramsPerSecondPerSource: Double? = 50, burstPerSource: Int = 100,
                datagramsPerSecondTotal: Double? = 1000, burstTotal: Int = 2000, trackedSources: Int = 1024,
                maximumServerTransactions: Int = 256, maximumIncomingCalls: Int = 32, maximumEndedCalls: Int = 64,
                maximumClientTransactions: Int = 256, maximumRouteSet: Int = 32, maximumRouteSetBytes: Int = 8192,
                maximumForks: Int = 4, maximumConnections: Int = 256, maximumConnectionsPerSource: Int = 16,
                connectionIdleSeconds: Int = 600) {
        self.datagramsPerSecondPerSource = datagramsPerSecondPerSource
        self.burstPerSource = burstPerSource
        self.datagramsPerSecondTotal = datagramsPerSecondTotal
        self.burstTotal = burstTotal
        self.trackedSources = trackedSources
        self.maximumServerTransactions = maximumServerTransactions
        self.maximumIncomingCalls = maximumIncomingCalls
        self.maximumEndedCalls = maximumEndedCalls
        self.maximumClientTransactions = maximumClientTransactions
        self.maximumRouteSet = maximumRouteSet
        self.maximumRouteSetBytes = maximumRouteSetBytes
        self.maximumForks = maximumForks
        self.maximumConnections = maximumConnections
        self.maximumConnectionsPerSource = maximumConnectionsPerSource
        self.connectionIdleSeconds = connectionIdleSeconds
    }

    /// The defaults: 50 datagrams a second per source (IPv6: per /64) after a burst of 100,
    /// 1000 a second in all after a burst of 2000, 1024 sources,
    /// 256 server transactions, 32 incoming calls, 64 ended calls, 256 client transactions,
    /// route sets of 32 values in 8 KiB, 4 forks, 256 connections (16 per source) closed after
    /// 10 minutes idle.
    public static let `default` = SIPLimits()

    /// The default state limits without a rate limit (for a flood from one address, such as
    /// a test's, that checks the state limits alone).
    public static let unlimitedRate = SIPLimits(datagramsPerSecondPerSource: nil, datagramsPerSecondTotal: nil)
}
