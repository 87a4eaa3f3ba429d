/// Where our registration stands (``SIPUserAgent/registrationStates``,
/// ``SIPUserAgent/registrationState``).
///
/// Thread safety: a value type; safe to use from any thread.
public enum SIPRegistrationState: Sendable, Equatable, CustomStringConvertible {
    /// No binding: never asked for, removed, or given up on.
    case unregistered
    /// A REGISTER for a binding at `registrar` is on its way (the first, or one after a failure;
    /// a refresh of a live binding stays ``registered(_:expires:)``).
    case registering(SIPURI)
    /// The registrar keeps our binding for `expires` seconds from now (a refresh granting
    /// another lifetime says it again).
    case registered(SIPURI, expires: Int)
    /// The last REGISTER failed with `error` (``SIPError/rejected(status:reason:)`` carries the
    /// registrar's status); a live binding is tried again in `retryIn` seconds, nil: given up.
    case failed(SIPURI, SIPError, retryIn: Int?)

    /// Whether a binding is live.
    public var isRegistered: Bool { if case .registered = self { true } else { false } }

    public var description: String {
        switch self {
        case .unregistered: "unregistered"
        case let .registering(registrar): "registering at \(registrar)"
        case let .registered(registrar, expires): "registered at \(registrar) for \(expires) s"
        case let .failed(registrar, error, retry):
            "failed at \(registrar): \(error)" + (retry.map { ", again in \($0) s" } ?? "")
        }
    }
}
