/// Where a call is in its life.
///
/// ```
/// idle ─dial─> outgoingRinging ─answered─> active <─resumed── held
///  └─incoming─> incomingRinging ─answer──>   ├─interrupted─> held(interrupted) ─hold─> held(local)
///                                            └─hold────────> held(local)
///                   every state but ended ─hang up / BYE / failure─> ended(reason)
/// ```
///
/// Thread safety: a value type; safe to use from any thread.
public enum CallState: Sendable, Equatable, CustomStringConvertible {
    /// Made, nothing sent or received yet.
    case idle
    /// We invited the peer; it has not answered (it may be ringing).
    case outgoingRinging
    /// The peer invited us; we have not answered.
    case incomingRinging
    /// Media flows both ways.
    case active
    /// Set up, but no capture or playout (the network side stays up).
    case held(HoldReason)
    /// Over, for good.
    case ended(CallEndReason)

    public var description: String {
        switch self {
        case .idle: "idle"
        case .outgoingRinging: "outgoing ringing"
        case .incomingRinging: "incoming ringing"
        case .active: "active"
        case let .held(reason): "held (\(reason.rawValue))"
        case let .ended(reason): "ended (\(reason))"
        }
    }

    /// Whether the call is over.
    public var isEnded: Bool { if case .ended = self { true } else { false } }

    /// Whether the call is on hold, for whatever reason.
    public var isHeld: Bool { if case .held = self { true } else { false } }
}

/// Why a call is on hold.
public enum HoldReason: String, Sendable, Equatable {
    /// A higher-priority session (a phone call, another app) took the audio.
    case interrupted
    /// The app held it (``Call/hold()``): only ``Call/resume()`` takes it off hold.
    case local
}

/// Why a call ended. A reason that a SIP final response decided carries it, status and reason
/// phrase as they were sent (``response``).
///
/// Thread safety: a value type; safe to use from any thread.
public enum CallEndReason: Sendable, Equatable, CustomStringConvertible {
    /// We hung up.
    case localHangUp
    /// The peer hung up (BYE).
    case remoteHangUp
    /// We cancelled before the peer answered.
    case cancelled
    /// The peer cancelled before we answered.
    case remoteCancelled
    /// The peer is busy or declined: its 486 Busy Here, 600 Busy Everywhere or 603 Decline.
    case busy(SIPFinalResponse)
    /// We rejected the call, with the response we sent (``Call/reject(status:reason:)``; 603
    /// Decline when it was hung up while ringing).
    case rejected(SIPFinalResponse)
    /// No codec or media encryption in common: the 488 or 606 the peer sent, or the 488 we
    /// sent; nil when we hung up (BYE) an answer whose encryption we could not accept.
    case notAcceptable(SIPFinalResponse?)
    /// The peer did not answer in time: its 408 or 480, or the 408 of our own timeout (no
    /// response in 64 x T1, or ringing past `SIP/SIPUserAgent/Configuration/ringTimeout`).
    case noAnswer(SIPFinalResponse)
    /// Our INVITE got another final response: 404 Not Found, 403 Forbidden, 503 Service
    /// Unavailable...
    case refused(SIPFinalResponse)
    /// The audio device failed mid-call (a sound server that died or stalled, a device that
    /// was unplugged) and could not be opened again, with what happened.
    case deviceFailed(String)
    /// Neither RTP nor RTCP came from the peer for ``CallConfiguration/mediaTimeout`` while the
    /// call was not on hold: the peer vanished without a BYE (we send one).
    case mediaTimeout
    /// We transferred the call (``Call/transfer(to:)-(String)``): the peer reached the target, and we
    /// hung up.
    case transferred
    /// A new call took this one's place: its INVITE named this call in `Replaces` (the
    /// transferee of an attended transfer now talks to us; see ``CallController/Event/replaced(callID:by:)``).
    case replaced
    /// Any other failure, with what happened.
    case failed(String)

    /// The SIP final response that decided the end, sent or received; nil for an end no
    /// response carried (a hang-up, a cancel, a media timeout, a device failure).
    public var response: SIPFinalResponse? {
        switch self {
        case let .busy(r), let .rejected(r), let .noAnswer(r), let .refused(r): r
        case let .notAcceptable(r): r
        default: nil
        }
    }

    public var description: String {
        switch self {
        case .localHangUp: "local hang-up"
        case .remoteHangUp: "remote hang-up"
        case .cancelled: "cancelled"
        case .remoteCancelled: "cancelled by the caller"
        case let .busy(r): "busy (\(r))"
        case let .rejected(r): "rejected (\(r))"
        case let .notAcceptable(r): r.map { "no common codec or encryption (\($0))" } ?? "no common encryption"
        case let .noAnswer(r): "no answer (\(r))"
        case let .refused(r): "refused (\(r))"
        case let .deviceFailed(why): "audio device failed: \(why)"
        case .mediaTimeout: "no media from the peer"
        case .transferred: "transferred"
        case .replaced: "replaced by another call"
        case let .failed(why): "failed: \(why)"
        }
    }
}

/// A SIP final response that ended a call (``CallEndReason/response``) or refused a request
/// (``CallError/refused(request:response:)``).
///
/// Thread safety: a value type; safe to use from any thread.
public struct SIPFinalResponse: Sendable, Equatable, CustomStringConvertible {
    /// 300 to 699.
    public let status: Int
    /// The reason phrase as it was sent.
    public let reason: String

    public init(status: Int, reason: String) {
        self.status = status
        self.reason = reason
    }

    public var description: String { "\(status) \(reason)" }
}

/// Something that happens to a call. ``CallStateMachine`` decides what it does.
public enum CallEvent: Sendable, Equatable {
    case dial
    case incoming
    case answered
    case answer
    case interrupted
    /// The app holds the call.
    case hold
    case resumed
    case ended(CallEndReason)
}

/// An event that does not apply in the call's state (for example answering an outgoing call).
///
/// Thread safety: a value type; safe to use from any thread.
public struct InvalidCallTransition: Error, Sendable, Equatable, CustomStringConvertible {
    public let state: CallState
    public let event: CallEvent
    public var description: String { "cannot \(event) a call that is \(state)" }
}

/// The call's state transitions, as a pure function: the whole table in one place.
///
/// Thread safety: a value type; safe to use from any thread.
public struct CallStateMachine: Sendable, Equatable {
    public private(set) var state: CallState = .idle

    public init() {}

    /// Applies `event`, or throws without changing anything when it does not apply.
    public mutating func apply(_ event: CallEvent) throws(InvalidCallTransition) {
        state = try Self.next(state, event)
    }

    /// The state after `event` in `state`.
    public static func next(_ state: CallState, _ event: CallEvent) throws(InvalidCallTransition) -> CallState {
        switch (state, event) {
        case (.idle, .dial): return .outgoingRinging
        case (.idle, .incoming): return .incomingRinging
        case (.outgoingRinging, .answered): return .active
        case (.incomingRinging, .answer): return .active
        case (.active, .interrupted): return .held(.interrupted)
        case (.held, .interrupted): return state
        case (.active, .hold), (.held, .hold): return .held(.local)
        case (.held, .resumed): return .active
        case (.ended, _): break
        case (_, .ended(let reason)): return .ended(reason)
        default: break
        }
        throw InvalidCallTransition(state: state, event: event)
    }
}
