import Platform

/// The RTCP transmission interval, RFC 3550 section 6.3 and appendix A.7.
///
/// Thread safety: stateless; safe from any thread.
public enum RTCPInterval {
    /// The minimum interval between reports, in seconds (halved before the first report).
    public static let minimumSeconds = 5.0
    /// The share of the RTCP bandwidth for senders when they are few.
    public static let senderBandwidthFraction = 0.25
    /// Divides the randomised interval so that the average stays right with timer reconsideration (e - 3/2).
    public static let compensation = 2.71828 - 1.5

    /// A.7 `rtcp_interval`: seconds until the next report.
    ///
    /// - Parameters:
    ///   - members: participants in the session, this one included.
    ///   - senders: participants that sent RTP since the last report.
    ///   - rtcpBandwidth: the RTCP bandwidth in octets per second (5% of the session bandwidth).
    ///   - weSent: whether this participant sent RTP since the last report.
    ///   - averagePacketSize: average compound RTCP packet size, UDP and IP headers included, in octets.
    ///   - initial: before this participant's first report (the minimum is halved).
    ///   - random: a uniform value in [0, 1) that spreads the interval over [0.5, 1.5] times the deterministic one.
    public static func seconds(members: Int, senders: Int, rtcpBandwidth: Double, weSent: Bool,
                               averagePacketSize: Double, initial: Bool, random: Double) -> Double {
        let minimum = initial ? minimumSeconds / 2 : minimumSeconds
        var bandwidth = rtcpBandwidth
        var n = Double(members)
        if Double(senders) <= Double(members) * senderBandwidthFraction {
            if weSent {
                bandwidth *= senderBandwidthFraction
                n = Double(senders)
            } else {
                bandwidth *= 1 - senderBandwidthFraction
                n -= Double(senders)
            }
        }
        var t = bandwidth > 0 ? averagePacketSize * n / bandwidth : minimum
        t = max(t, minimum)
        return t * (random + 0.5) / compensation
    }
}

/// When to send RTCP: the timer rules of RFC 3550 section 6.3 (with timer
/// reconsideration, 6.3.6) for a two-party session.
///
/// Thread safety: a value type; used by the network thread only.
public struct RTCPScheduler: Sendable {
    /// RTCP bandwidth in octets per second.
    public var rtcpBandwidth: Double
    /// Average compound packet size in octets with lower-layer headers (6.3.3).
    public private(set) var averagePacketSize: Double
    /// Participants known (this one included).
    public var members = 1
    /// Participants that sent RTP recently (6.3.8: within the last two report intervals); the caller keeps it current.
    public var senders = 0
    /// Whether this participant sent RTP recently; the caller keeps it current.
    public var weSent = false
    /// Before the first report.
    public private(set) var initial = true
    /// When the last report was sent, in seconds.
    public private(set) var lastSent: Double
    /// When the next report is due, in seconds.
    public private(set) var nextDue: Double
    private var random: SeededRandom

    /// Starts a schedule at `now` seconds.
    ///
    /// - Parameters:
    ///   - now: the start, in seconds.
    ///   - seed: the seed of the interval's randomization (6.3.1).
    ///   - sessionBandwidth: the session's bandwidth in bits per second; RTCP gets 5% of it.
    ///   - firstPacketSize: the probable size of the first compound packet with headers (6.3.2).
    public init(now: Double, sessionBandwidth: Double, firstPacketSize: Int, seed: UInt64) {
        rtcpBandwidth = sessionBandwidth * 0.05 / 8
        averagePacketSize = Double(firstPacketSize)
        random = SeededRandom(seed: seed)
        lastSent = now
        nextDue = now
        nextDue = now + interval()
    }

    /// The interval for the current state, randomised.
    public mutating func interval() -> Double {
        RTCPInterval.seconds(members: members, senders: senders, rtcpBandwidth: rtcpBandwidth, weSent: weSent,
                             averagePacketSize: averagePacketSize, initial: initial, random: random.unit())
    }

    /// Accounts for a compound packet sent or received (6.3.3): size with UDP and IP headers.
    public mutating func account(packetSize: Int) {
        averagePacketSize = Double(packetSize) / 16 + averagePacketSize * 15 / 16
    }

    /// The timer fired at `now` (6.3.6): returns whether to send a report now. Either
    /// way ``nextDue`` is the next time to call again. After sending, call ``sent(now:size:)``.
    public mutating func expired(now: Double) -> Bool {
        let t = interval()
        if lastSent + t <= now { return true }
        nextDue = lastSent + t
        return false
    }

    /// A report of `size` octets (with headers) was sent at `now`.
    public mutating func sent(now: Double, size: Int) {
        account(packetSize: size)
        lastSent = now
        initial = false
        nextDue = now + interval()
    }
}
