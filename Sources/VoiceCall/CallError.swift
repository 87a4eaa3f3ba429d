import SIP

/// Why a call operation failed.
///
/// Thread safety: a value type; safe to use from any thread.
public enum CallError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The controller already has ``CallConfiguration/maximumCalls`` calls.
    case busy
    /// The target is not a SIP URI (`sip:user@host:port`).
    case invalidTarget(String)
    /// The audio session could not be configured or activated (for example a phone call holds the audio).
    case audioSession(String)
    /// The media could not be set up (device, codec, sockets).
    case media(String)
    /// SIP signalling failed.
    case signalling(String)
    /// A request of ours got a final error response, as it was sent: a registrar that refused a
    /// REGISTER (403 Forbidden, 404 Not Found, 423 Interval Too Brief...); `request` is its method.
    case refused(request: String, response: SIPFinalResponse)
    /// The operation does not apply in the call's state.
    case invalidState(String)
    /// DTMF keys could not be sent (none were).
    case dtmf(String)
    /// Media encryption could not be agreed or set up (the reason says what to change).
    case mediaSecurity(String)
    /// A transfer failed: the peer refused our REFER, or the call it placed to the target did
    /// not connect, with the SIP status and reason it reported. The call goes on.
    case transferFailed(status: Int, reason: String)
    /// A conference room could not be joined or asked (``CallController/join(_:)``): Janus is
    /// unreachable, the room does not exist or does not take plain-RTP participants.
    case conference(String)
    /// An account cannot be added as asked (``CallController/addAccount(user:displayName:credentials:)``): why.
    case invalidAccount(user: String, reason: String)

    public var description: String {
        switch self {
        case .busy: "as many calls as allowed are in progress (CallConfiguration.maximumCalls)"
        case let .invalidTarget(t): "not a SIP URI: \(t)"
        case let .audioSession(why): "audio session: \(why)"
        case let .media(why): "media: \(why)"
        case let .signalling(why): "signalling: \(why)"
        case let .refused(request, response): "\(request) refused: \(response)"
        case let .invalidState(why): why
        case let .dtmf(why): "DTMF: \(why)"
        case let .mediaSecurity(why): "media encryption: \(why)"
        case let .transferFailed(status, reason): "transfer failed: \(status) \(reason)"
        case let .conference(why): "conference: \(why)"
        case let .invalidAccount(user, reason): "no account '\(user)': \(reason)"
        }
    }
}

extension CallError {
    /// `error` from `request`: a final response carried as ``refused(request:response:)``, the
    /// rest as ``signalling(_:)``.
    init(_ error: SIPError, request: String) {
        if case let .rejected(status, reason) = error {
            self = .refused(request: request, response: SIPFinalResponse(status: status, reason: reason))
        } else {
            self = .signalling("\(request): \(error)")
        }
    }
}
