/// The timer values of RFC 3261 section 17 (table 4), for UDP.
///
/// Timers A/E/G start at T1 and double (E and G up to T2); B, F, H, J, L and M are 64 × T1;
/// K and I are T4; D is ``timerD``. Tests use short values; production uses ``rfc3261``.
///
/// Thread safety: a value type; safe to use from any thread.
public struct SIPTimers: Sendable, Hashable {
    /// Round-trip time estimate: the first retransmission interval (500 ms).
    public var t1: Duration
    /// The longest retransmission interval for non-INVITE requests and INVITE responses (4 s).
    public var t2: Duration
    /// How long a message may stay in the network (5 s): Timers I and K.
    public var t4: Duration
    /// How long an INVITE client transaction absorbs retransmitted final responses (at least 32 s on UDP).
    public var timerD: Duration
    /// The shortest session interval (RFC 4028 `Min-SE`, seconds) accepted or asked for: 90, as
    /// RFC 4028 sets it; tests shorten it as they shorten T1.
    public var minimumSessionSeconds: Int

    public init(t1: Duration = .milliseconds(500), t2: Duration = .seconds(4), t4: Duration = .seconds(5),
                timerD: Duration = .seconds(32), minimumSessionSeconds: Int = 90) {
        self.t1 = t1
        self.t2 = t2
        self.t4 = t4
        self.timerD = timerD
        self.minimumSessionSeconds = minimumSessionSeconds
    }

    /// The values of RFC 3261.
    public static let rfc3261 = SIPTimers()

    /// The first wait before a failed REGISTER of a live binding is sent again: 60 × T1 (30 s);
    /// it doubles with each failure in a row, up to 20 times this.
    public var registrationRetry: Duration { t1 * 60 }

    /// How often an agent bound to a wildcard address with a binding asks which local address
    /// the route to each registrar leaves from, to register again when it moved: 10 × T1 (5 s).
    public var networkCheck: Duration { t1 * 10 }

    /// 64 × T1: Timers B, F, H, J, L and M; also how long the UAS retransmits a 2xx without an ACK.
    public var transactionTimeout: Duration { t1 * 64 }
}
