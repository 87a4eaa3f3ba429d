public import Platform
import Synchronization

/// Why a call ended.
///
/// Thread safety: a value type; safe to use from any thread.
public enum SIPCallEndReason: Sendable, Hashable, CustomStringConvertible {
    /// A BYE ended an established call: the peer's (`byRemote`) or ours.
    case hungUp(byRemote: Bool)
    /// The call was cancelled before it was answered: by the caller's CANCEL on an incoming
    /// call (`byRemote`), or by our ``SIPCall/cancel()`` on an outgoing one.
    case cancelled(byRemote: Bool)
    /// Outgoing: the callee answered with a final non-2xx response (486, 488, 603...) or did
    /// not answer at all (408 after Timer B). Incoming: our 2xx was never acknowledged (408).
    case failed(status: Int, reason: String)
    /// Incoming: we rejected it with ``SIPCall/reject(status:reason:)``.
    case rejected(status: Int)
    /// The user agent was closed.
    case shutdown

    public var description: String {
        switch self {
        case .hungUp(let byRemote): byRemote ? "hung up by the peer" : "hung up"
        case .cancelled(let byRemote): byRemote ? "cancelled by the caller" : "cancelled"
        case .failed(let status, let reason): "failed: \(status) \(reason)"
        case .rejected(let status): "rejected with \(status)"
        case .shutdown: "user agent closed"
        }
    }
}

/// What happens to a call, in order, on ``SIPCall/events``; ``ended(_:)`` is the last event.
///
/// Thread safety: a value type; safe to use from any thread.
public enum SIPCallEvent: Sendable, Hashable {
    /// Outgoing: the callee's side has the INVITE (100 Trying).
    case trying
    /// Outgoing: the callee is ringing (180) or reports progress (183). The body is an
    /// early-media answer when the response had one.
    case ringing(SIPBody?)
    /// Outgoing: the callee answered (2xx) and the ACK has been sent. The body is the answer
    /// to the offer.
    case answered(SIPBody?)
    /// Incoming: the caller acknowledged our 2xx. The body is the caller's answer when the
    /// INVITE carried no offer (then the 2xx carried ours).
    case confirmed(SIPBody?)
    /// Either direction, established: the peer changed the session with a re-INVITE (hold,
    /// resume, moved media). The body is the peer's new description: its offer, once
    /// ``SIPUserAgent/Configuration/answerChangedOffer`` has answered it (the 2xx is on its
    /// way), or, for a re-INVITE without an offer, its answer to ours, from the ACK.
    case reoffered(SIPBody)
    /// Established: the peer accepted our re-INVITE (``SIPCall/reinvite(offer:)``) with a 2xx and
    /// the ACK is sent. The body is its answer to our offer.
    case reinviteAnswered(SIPBody?)
    /// Established: the peer declined our re-INVITE with this final status (488, 403, or 491
    /// Request Pending three times in a row); the session stays as it was (RFC 3261 section 14.1).
    case reinviteDeclined(status: Int, reason: String)
    /// Established: the peer asks us to call someone (REFER, RFC 3515), accepted with 202 and a
    /// first NOTIFY (100 Trying). Report the new call's progress with
    /// ``SIPCall/notifyReferral(status:reason:)``, ending with its final status.
    case referred(SIPReferral)
    /// Established: a NOTIFY on our REFER (``SIPCall/refer(to:replacing:)``): the status of the
    /// call the peer placed (100 Trying, 180 Ringing, 200 OK, 486...); `final` once it is the last.
    case referProgress(status: Int, reason: String, final: Bool)
    /// Our REFER was refused with this status (408 for no response): nothing was transferred.
    case referDeclined(status: Int, reason: String)
    /// The call is over.
    case ended(SIPCallEndReason)
}

/// Where a call stands.
///
/// Thread safety: a value type; safe to use from any thread.
public enum SIPCallState: Sendable, Hashable {
    /// Outgoing: the INVITE is sent, no ringing yet.
    case calling
    /// Incoming: the INVITE arrived (100 Trying sent); not answered yet.
    case incoming
    /// Outgoing: 180/183 received. Incoming: 180 sent.
    case ringing
    /// Incoming: the 2xx is sent, the ACK has not arrived.
    case connecting
    /// Answered and acknowledged: media flows.
    case established
    case ended(SIPCallEndReason)

    public var isEnded: Bool {
        if case .ended = self { return true }
        return false
    }
}

/// Errors of the user agent's API.
///
/// Thread safety: a value type; safe to use from any thread.
public enum SIPError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The target's host does not resolve.
    case unresolvableHost(String)
    /// The target asks for a transport other than UDP (`transport=tcp`, `sips:`).
    case unsupportedTransport(String)
    /// The target's address family differs from the socket's (IPv4 socket, IPv6 target).
    case addressFamilyMismatch(SocketAddress)
    /// The call is not in a state where this is possible (answering a call already cancelled...).
    case invalidState(SIPCallState)
    /// A status code that cannot be used here (a rejection must be 300 ... 699).
    case invalidStatus(Int)
    /// No final response arrived in 64 × T1.
    case timeout
    /// The user agent is closed.
    case closed
    /// The request got this final response (a registrar refused a REGISTER, say).
    case rejected(status: Int, reason: String)
    /// A registration lifetime under 1 s (use `unregister()` to remove a binding).
    case invalidExpires(Int)
    /// As many of our requests are in progress as ``SIPLimits/maximumClientTransactions`` allows.
    case tooManyRequests
    /// The agent cannot listen or set up TLS as configured (what, and why).
    case cannotListen(String)
    /// A later ``SIPUserAgent/register(at:expires:)`` at another registrar took this one's place.
    case replaced
    /// An account cannot be added as asked (``SIPUserAgent/addAccount(user:displayName:credentials:)``): why.
    case invalidAccount(user: String, reason: String)

    public var description: String {
        switch self {
        case .unresolvableHost(let host): "cannot resolve '\(host)'"
        case .unsupportedTransport(let transport): "unsupported transport '\(transport)' (UDP only)"
        case .addressFamilyMismatch(let address): "\(address) is not reachable from this socket's address family"
        case .invalidState(let state): "not possible in call state \(state)"
        case .invalidStatus(let status): "status \(status) cannot be used here"
        case .timeout: "no response (timeout)"
        case .closed: "the user agent is closed"
        case .rejected(let status, let reason): "refused with \(status) \(reason)"
        case .invalidExpires(let seconds): "a registration lifetime of \(seconds) s (at least 1 s)"
        case .tooManyRequests: "too many requests in progress"
        case .cannotListen(let why): "cannot listen: \(why)"
        case .replaced: "replaced by a registration at another registrar"
        case let .invalidAccount(user, reason): "no account '\(user)': \(reason)"
        }
    }
}

/// One call (one INVITE dialog), incoming or outgoing.
///
/// An outgoing call comes from ``SIPUserAgent/invite(to:offer:from:)``; an incoming one from
/// ``SIPUserAgent/incomingCalls``. Its ``events`` tell what the peer does; its methods say
/// what we do. The user agent sends every ACK, retransmission and 100 Trying itself.
///
/// Thread safety: every method is safe from any thread or task; they take the user agent's
/// lock, send without blocking and return (no `await`). Events are produced in order on the
/// user agent's network thread, its timer queue or the caller's thread, and read from
/// ``events`` by one task.
public final class SIPCall: Sendable, CustomStringConvertible {
    public enum Direction: Sendable, Hashable {
        case outgoing, incoming
    }

    public let direction: Direction
    public let callID: String
    /// The peer: the callee of an outgoing call (`To`), the caller of an incoming one (`From`); without tag.
    public let remote: SIPNameAddress
    /// Our side (`From` of an outgoing call, `To` of an incoming one); without tag.
    public let local: SIPNameAddress
    /// The session offer: the caller's (from the INVITE; nil for an INVITE without a body) for
    /// an incoming call, ours for an outgoing one.
    public let offer: SIPBody?
    /// The peer's signalling address: where the INVITE came from, or where ours was sent.
    public let remoteAddress: SocketAddress
    /// The transport the call's signalling travels on (to the next hop).
    public let transport: SIPTransportKind
    /// Our host in this call's Via and Contact: what an SDP answer's `c=` line should carry.
    public let localHost: String
    /// The user of our account the call is placed from, or addressed to (an incoming call
    /// whose Request-URI names no account of ours is the configuration's user's).
    public let account: String
    /// The call's events, in order; the stream finishes after ``SIPCallEvent/ended(_:)``.
    public let events: AsyncStream<SIPCallEvent>
    /// Incoming: the Call-ID of our call this one replaces (its INVITE's `Replaces`, RFC 3891,
    /// named an established call of ours: an attended transfer's target, or a call pickup).
    public let replacedCallID: String?

    let key: CallKey
    let core: UserAgentCore
    let stateBox: CallStateBox

    init(core: UserAgentCore, info: NewCallInfo) {
        self.core = core
        key = info.key
        direction = info.direction
        callID = info.callID
        remote = info.remote
        local = info.local
        offer = info.offer
        remoteAddress = info.remoteAddress
        transport = info.transport
        localHost = info.localHost
        account = info.account
        events = info.events
        stateBox = info.stateBox
        replacedCallID = info.replacedCallID
    }

    /// Where the call stands now (a snapshot; ``events`` tells each change).
    public var state: SIPCallState { stateBox.state }

    /// How many events ``events`` has been given so far (a reader that has read this many has
    /// read them all, until the next).
    package var eventsYielded: Int { stateBox.eventCount }

    public var description: String { "\(direction) call \(callID) with \(remote)" }

    /// Incoming: sends 180 Ringing (may be repeated).
    ///
    /// - Throws: ``SIPError/invalidState(_:)`` unless the call is incoming and not yet answered.
    public func ringing() throws(SIPError) {
        try core.withState { $0.ringing(key) }.get()
    }

    /// Incoming: answers with a 2xx carrying `answer` (the answer to ``offer``, or our offer when
    /// the INVITE had none). The 2xx is retransmitted until the ACK arrives
    /// (``SIPCallEvent/confirmed(_:)``); without an ACK in 64 × T1 the call is ended with a BYE.
    ///
    /// - Throws: ``SIPError/invalidState(_:)`` unless the call is incoming and not yet answered
    ///   (the caller may have cancelled a moment ago: then ``events`` says so).
    public func accept(answer: SIPBody) throws(SIPError) {
        try core.withState { $0.accept(key, answer: answer) }.get()
    }

    /// Incoming: rejects the call with a final status: 486 Busy Here, 488 Not Acceptable Here
    /// (no common codec), 603 Decline...
    ///
    /// - Throws: ``SIPError/invalidStatus(_:)`` outside 300 ... 699, ``SIPError/invalidState(_:)``
    ///   unless the call is incoming and not yet answered.
    public func reject(status: Int = 486, reason: String? = nil) throws(SIPError) {
        try core.withState { $0.reject(key, status: status, reason: reason) }.get()
    }

    /// Outgoing: cancels the call before it is answered (CANCEL, sent once the callee has sent a
    /// provisional response, RFC 3261 section 9.1). The call ends when the INVITE's final
    /// response (487) arrives; if the callee answers at the same moment, the call is
    /// acknowledged and ended with a BYE. Either way it ends as ``SIPCallEndReason/cancelled(byRemote:)``.
    ///
    /// - Throws: ``SIPError/invalidState(_:)`` unless the call is outgoing and not yet answered.
    public func cancel() throws(SIPError) {
        try core.withState { $0.cancel(key) }.get()
    }

    /// Ends an established call with a BYE. The call ends at once (``SIPCallEndReason/hungUp(byRemote:)``);
    /// the BYE is retransmitted in the background. On an incoming call still waiting for its
    /// ACK, the BYE goes out when the ACK arrives (RFC 3261 section 15).
    ///
    /// - Throws: ``SIPError/invalidState(_:)`` unless the call is established (or connecting).
    public func bye() throws(SIPError) {
        try core.withState { $0.bye(key) }.get()
    }

    /// Established: offers a new session description with a re-INVITE (RFC 3261 section 14.1):
    /// hold (`a=inactive` or `a=sendonly`), resume, a new address. The peer's answer comes as
    /// ``SIPCallEvent/reinviteAnswered(_:)``, a refusal as ``SIPCallEvent/reinviteDeclined(status:reason:)``.
    /// While another INVITE transaction of this dialog is in progress (ours, or the peer's
    /// waiting for its ACK) the offer waits and goes out when it completes; a newer offer
    /// replaces one still waiting. A 491 (both sides re-INVITEd at once) is retried after the
    /// random wait of section 14.1. A 408 or no response ends the call with a BYE, a 481 ends it.
    /// On an incoming call answered but not yet acknowledged (`connecting`) it waits for the ACK.
    ///
    /// - Throws: ``SIPError/invalidState(_:)`` unless the call is established or connecting.
    public func reinvite(offer: SIPBody) throws(SIPError) {
        try core.withState { $0.reinvite(key, offer: offer) }.get()
    }

    /// Established: asks the peer to call `target` (REFER, RFC 3515): a blind transfer, or with
    /// `replacing` (``replaces`` of our call with the target) an attended one. The answer comes
    /// as ``SIPCallEvent/referProgress(status:reason:final:)`` events, or
    /// ``SIPCallEvent/referDeclined(status:reason:)``. The call itself goes on: end it with
    /// ``bye()`` once the progress is final and good.
    ///
    /// - Throws: ``SIPError/invalidState(_:)`` unless the call is established,
    ///   ``SIPError/tooManyRequests`` while an earlier REFER of this call is in progress.
    public func refer(to target: SIPURI, replacing: SIPReplaces? = nil) throws(SIPError) {
        var uri = target
        uri.headers = nil
        try core.withState { $0.refer(key, SIPReferral(target: uri, replaces: replacing)) }.get()
    }

    /// After ``SIPCallEvent/referred(_:)``: tells the peer how the call it asked for goes (a
    /// NOTIFY with the status line): 180 Ringing, then 200 OK or the failure; a status of 200
    /// or more is the last.
    ///
    /// - Throws: ``SIPError/invalidStatus(_:)`` outside 100 ... 699 or for a reason with a line
    ///   break, ``SIPError/invalidState(_:)`` without a referral waiting for its outcome.
    public func notifyReferral(status: Int, reason: String) throws(SIPError) {
        try core.withState { $0.notifyReferral(key, status: status, reason: reason) }.get()
    }

    /// The `Replaces` value that names this call's dialog as the peer knows it: what an
    /// attended transfer's REFER carries, for the transferee's INVITE to the peer. Nil before
    /// the dialog exists.
    public var replaces: SIPReplaces? {
        core.withState { state in
            state.calls[key]?.dialog.map { SIPReplaces(callID: $0.id.callID, toTag: $0.id.remoteTag, fromTag: $0.id.localTag) }
        }
    }

    /// Our last session description in this call: the offer or answer we sent last, nil before
    /// one was sent. The base for a re-INVITE's offer (RFC 3264 section 8: the same origin, its
    /// version increased).
    public var localDescription: SIPBody? {
        core.withState { $0.calls[key]?.localBody }
    }

    /// Ends the call whatever its state: ``bye()`` when answered, ``cancel()`` when an outgoing
    /// call is not, 603 Decline when an incoming call is not; nothing when it has ended.
    public func hangUp() {
        core.withState { $0.hangUp(key) }
    }
}

/// The call state shared by the user agent (which writes it under its lock) and the
/// ``SIPCall`` handle (which reads it): a leaf lock, never held while taking another.
final class CallStateBox: Sendable {
    private let value: Mutex<(state: SIPCallState, events: Int)>

    init(_ state: SIPCallState) { value = Mutex((state, 0)) }

    var state: SIPCallState {
        get { value.withLock { $0.state } }
        set { value.withLock { $0.state = newValue } }
    }

    /// How many events the call has yielded.
    var eventCount: Int { value.withLock { $0.events } }

    func countEvent() { value.withLock { $0.events += 1 } }
}

/// Where a call's events go: its stream, counted (so a test on virtual time knows when a
/// reader has seen them all).
///
/// Thread safety: safe from any thread.
struct CallEventSink: Sendable {
    let continuation: AsyncStream<SIPCallEvent>.Continuation
    let box: CallStateBox

    func yield(_ event: SIPCallEvent) {
        box.countEvent()
        continuation.yield(event)
    }

    func finish() { continuation.finish() }
}
