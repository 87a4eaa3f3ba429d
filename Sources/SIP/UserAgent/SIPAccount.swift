/// An identity a user agent registers and places calls as, beside the configuration's own
/// (``SIPUserAgent/addAccount(user:displayName:credentials:)``): its user part (of its
/// address of record and Contact), display name, credentials and registration.
///
/// An account keeps its agent: the agent closes when neither it nor any account is referenced,
/// or on ``SIPUserAgent/close()``.
///
/// Thread safety: safe from any thread or task.
public final class SIPAccount: Sendable, CustomStringConvertible {
    /// The user part of its address of record and Contact.
    public let user: String
    /// The display name in its `From`.
    public let displayName: String?
    /// Where its registration stands, each change once: one reader; the 16 newest are kept for
    /// a slow one. Finishes when the agent closes.
    public let registrationStates: AsyncStream<SIPRegistrationState>

    private let agent: SIPUserAgent

    init(agent: SIPUserAgent, user: String, displayName: String?, registrationStates: AsyncStream<SIPRegistrationState>) {
        self.agent = agent
        self.user = user
        self.displayName = displayName
        self.registrationStates = registrationStates
    }

    /// Registers its Contact at `registrar` (`sip:host[:port]`) for the address of record
    /// `sip:user@host` (RFC 3261 section 10.2), answering a digest challenge with its
    /// credentials. The binding is refreshed before it lapses (at 80 % of its lifetime, at
    /// least 33 s early when it is long enough), tried again after a failed refresh, or a
    /// first REGISTER that got no answer, 408, 480 or 5xx (30 s, doubling up to 10 minutes;
    /// the call still throws), and removed by ``unregister()`` or, best effort, when the agent
    /// closes. While registered, its calls carry the address of record in `From`, so a proxy
    /// that authenticates them knows who calls. Calling it again (a new lifetime, or another
    /// registrar, which replaces the first) is allowed.
    ///
    /// - Parameter registrar: the registrar's URI (`sip:host[:port]`).
    /// - Parameter expires: the lifetime asked for, in seconds (a registrar may grant less,
    ///   or answer 423 with a minimum, which is then asked for once).
    /// - Returns: the lifetime granted, in seconds.
    /// - Throws: ``SIPError/rejected(status:reason:)`` when the registrar refuses (a 401 or 407
    ///   after the credentials: they are wrong), ``SIPError/timeout``, ``SIPError/closed``,
    ///   ``SIPError/replaced`` when a later call at another registrar took its place, or
    ///   ``SIPError/invalidExpires(_:)`` for a lifetime under 1 s.
    @discardableResult
    public func register(at registrar: SIPURI, expires: Int = 3600) async throws(SIPError) -> Int {
        guard expires >= 1 else { throw .invalidExpires(expires) }
        return try await agent.registration(of: user, at: registrar, expires: expires)
    }

    /// Removes the binding ``register(at:expires:)`` made (a REGISTER with `Expires: 0`) and
    /// stops refreshing it. Nothing happens when there is none.
    ///
    /// - Throws: ``SIPError/rejected(status:reason:)``, ``SIPError/timeout`` or ``SIPError/closed``;
    ///   the binding is forgotten either way (a registrar drops it when it lapses).
    public func unregister() async throws(SIPError) { try await agent.unregister(user: user) }

    /// Where its registration stands now.
    public var registrationState: SIPRegistrationState { agent.registrationState(of: user) }

    /// The registrar its binding is at (or being made or removed at); nil when there is none.
    public var registrar: SIPURI? { agent.registrar(of: user) }

    public var description: String { "account \(user)" }
}
