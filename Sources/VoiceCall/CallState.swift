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

/// Why a call ended.
public enum CallEndReason: Sendable, Equatable, CustomStringConvertible {
    /// We hung up.
    case localHangUp
    /// The peer hung up (BYE).
    case remoteHangUp
    /// We cancelled before the peer answered.
    case cancelled
    /// The peer cancelled before we answered.
    case remoteCancelled
    /// The peer is busy (486) or declined (603).
    case busy
    /// We rejected the call.
    case rejected
    /// No codec in common (488).
    case notAcceptable
    /// The peer did not answer in time (408 / timeout).
    case noAnswer
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

    public var description: String {
        switch self {
        case .localHangUp: "local hang-up"
        case .remoteHangUp: "remote hang-up"
        case .cancelled: "cancelled"
        case .remoteCancelled: "cancelled by the caller"
        case .busy: "busy"
        case .rejected: "rejected"
        case .notAcceptable: "no common codec"
        case .noAnswer: "no answer"
        case let .deviceFailed(why): "audio device failed: \(why)"
        case .mediaTimeout: "no media from the peer"
        case .transferred: "transferred"
        case .replaced: "replaced by another call"
        case let .failed(why): "failed: \(why)"
        }
    }
}

/// A SIP final response that ended a call (``Call/finalResponse``).
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
