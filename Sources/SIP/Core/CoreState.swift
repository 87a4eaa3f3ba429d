import DNS
import Platform
import Dispatch
import Foundation
import Logging
import Synchronization

/// Identifies a call inside one user agent.
typealias CallKey = UInt64

/// A client transaction's key (RFC 3261 section 17.1.3): the top Via branch and the CSeq method.
struct ClientKey: Sendable, Hashable {
    var branch: String
    var method: SIPMethod
}

/// A server transaction's key (RFC 3261 section 17.2.3): branch, sent-by and method, with
/// ACK matching INVITE.
struct ServerKey: Sendable, Hashable {
    var branch: String
    var sentBy: String
    var method: SIPMethod
}

/// Who gets what a client transaction delivers.
enum ClientOwner: Sendable {
    case invite(CallKey)
    case cancel(CallKey)
    case bye(CallKey)
    /// Our re-INVITE in an established call.
    case reinvite(CallKey)
    /// Our REFER, and our NOTIFYs on a REFER from the peer (RFC 3515).
    case refer(CallKey)
    case notify(CallKey)
    case options
    /// The REGISTER of this user's account (``AccountRecord/registration``).
    case register(String)
    /// Nobody (a BYE for a forked 2xx).
    case none
}

struct ClientRecord: Sendable {
    var transaction: ClientTransaction
    let destination: SIPHop
    let owner: ClientOwner
    /// How many times this request was sent again with credentials (at most 2: once, and
    /// once more for a stale nonce).
    var authenticationRetries = 0
    /// The digest answers it carries, to check the server's `rspauth` with.
    var digests: [(answer: DigestAnswer, proxy: Bool)] = []
}

struct ServerRecord: Sendable {
    var transaction: ServerTransaction
    let method: SIPMethod
    /// The request, with `received`/`rport` added to its top Via (responses copy it); dropped
    /// once a non-INVITE request has its final response (retransmissions get its bytes).
    var request: SIPRequest?
    /// Where the request came from, and so where its responses go: always the source address
    /// and port (as RFC 3581 `rport` asks), never the Via's port, so nothing reaches an address
    /// that did not send the request. Retransmissions must come from it too.
    let destination: SIPHop
    /// The incoming call an INVITE started.
    var callKey: CallKey?

    init(transaction: ServerTransaction, request: SIPRequest, destination: SIPHop) {
        self.transaction = transaction
        method = request.method
        self.request = request
        self.destination = destination
    }
}

/// What identifies an incoming INVITE whatever path it took: its Call-ID and From tag
/// (merged requests, RFC 3261 section 8.2.2.2).
struct CallerID: Sendable, Hashable {
    var callID: String
    var fromTag: String
}

/// Timers of the user agent core (not of a transaction).
enum CallTimer: Sendable, Hashable {
    /// Retransmit the unacknowledged 2xx for this CSeq (section 13.3.1.4).
    case retransmit2xx(UInt32)
    /// Give up waiting for the ACK of the 2xx for this CSeq.
    case ackTimeout(UInt32)
    /// A CANCEL got no final response for the INVITE in 64 × T1 (section 9.1).
    case cancelTimeout
    /// Send the queued re-INVITE after a 491 Request Pending (RFC 3261 section 14.1).
    case retryReinvite
    /// Forget an ended call (it stays to absorb late retransmissions).
    case linger
    /// Our INVITE got a provisional response and no final one in ``SIPUserAgent/Configuration/ringTimeout``.
    case ringTimeout
    /// Refresh the session (RFC 4028), for this timer generation.
    case sessionRefresh(UInt64)
    /// The peer did not refresh the session in time.
    case sessionExpiry(UInt64)
}

enum TimerEvent: Sendable {
    case client(ClientKey, TransactionTimer)
    case server(ServerKey, TransactionTimer)
    case call(CallKey, CallTimer)
    /// Ask whether our address toward each registrar moved (``CoreState/checkNetwork()``).
    case networkCheck
    /// Refresh this user's registration, of this generation (a later register or unregister
    /// makes it stale).
    case registration(String, UInt64)
}

/// An unacknowledged 2xx to an INVITE, retransmitted by the UAS core.
struct Pending2xx: Sendable {
    let bytes: [UInt8]
    let destination: SIPHop
    let sequence: UInt32
    var interval: Duration
    /// For the call's first INVITE (not a re-INVITE): its ACK confirms the call.
    let isInitial: Bool
    /// Bytes its retransmissions may still send (the transaction's reflection budget, less
    /// the BYE a missing ACK sends): past it they stop, and a missing ACK ends the call as usual.
    var budget: Int
    /// For a re-INVITE without an offer: the 2xx carried our offer, and the ACK brings the answer.
    var awaitsAnswer = false
}

/// What the user agent core keeps per call.
struct CallRecord: Sendable {
    let key: CallKey
    let direction: SIPCall.Direction
    let box: CallStateBox
    let events: CallEventSink
    /// The peer's signalling hop (source of its INVITE, or where ours went).
    var peer: SIPHop
    /// Outgoing: the servers still to try, in order, when the current one times out or answers
    /// 503 before any provisional response (RFC 3263 section 4.3).
    var alternates: [SIPHop] = []
    /// Our host as written in Via and Contact for this call.
    let localHost: String
    /// The user of the account it is placed from or addressed to (``AccountRecord``).
    var account: String
    private(set) var phase: SIPCallState
    var dialog: Dialog?
    /// Our last session description (offer or answer) and the peer's.
    var localBody: SIPBody?
    var remoteBody: SIPBody?

    // Outgoing.
    var invite: SIPRequest?
    var inviteKey: ClientKey?
    var sawProvisional = false
    var reportedTrying = false
    var cancelRequested = false
    var cancelSent = false
    /// The ACK for the 2xx, sent again for each retransmitted 2xx.
    var ack: [UInt8]?
    /// Where the first 2xx came from: later 2xx (retransmissions, forks) must come from there.
    var answerSource: SIPHop?
    /// Forked 2xx acknowledged and ended with a BYE (at most ``SIPLimits/maximumForks``).
    var forksEnded = 0
    /// The INVITE was sent again after a 422 (once).
    var retriedSessionInterval = false
    /// The dialog's session timer (RFC 4028), once negotiated.
    var sessionTimer: SessionTimer?

    // Incoming.
    var serverKey: ServerKey?
    var localTag = ""
    var pending2xx: Pending2xx?
    /// `bye()` was called before the ACK arrived: send the BYE when it does.
    var byeWhenACKed = false

    // Our re-INVITEs (either direction, established).
    /// The one in progress: its client transaction and offer.
    var reinviteKey: ClientKey?
    var reinviteOffer: SIPBody?
    /// The ACK for its 2xx (and that 2xx's CSeq), sent again for each retransmitted 2xx.
    var reinviteACK: (sequence: UInt32, bytes: [UInt8])?
    /// The peer's re-INVITE whose changed offer the application is answering (off the lock).
    var reofferKey: ServerKey?
    /// The offer to send once no INVITE transaction is in progress (only the latest is kept).
    var queuedOffer: SIPBody?
    /// A 491 retry is scheduled; how many 491s in a row the current offer got.
    var retryScheduled = false
    var requestPendingCount = 0

    // Transfers (RFC 3515), established.
    /// Our REFER in progress, and whether it was accepted and NOTIFYs may come.
    var referKey: ClientKey?
    var referSubscribed = false
    /// The peer's REFER we accepted and have not sent a final NOTIFY for.
    var referralActive = false

    init(key: CallKey, direction: SIPCall.Direction, phase: SIPCallState, peer: SIPHop, localHost: String,
         account: String, events: AsyncStream<SIPCallEvent>.Continuation) {
        self.key = key
        self.account = account
        self.direction = direction
        self.phase = phase
        self.peer = peer
        self.localHost = localHost
        box = CallStateBox(phase)
        self.events = CallEventSink(continuation: events, box: box)
    }

    mutating func setPhase(_ phase: SIPCallState) {
        self.phase = phase
        box.state = phase
    }
}

/// A peer's changed offer in an established call, answered by the application off the lock.
struct PendingReoffer: Sendable {
    let callKey: CallKey
    let key: ServerKey
    let request: SIPRequest
    let sequence: UInt32
    let callID: String
    /// The re-INVITE's Contact: the dialog's new remote target once we answer 2xx.
    let target: SIPURI?
    let offer: SIPBody
    let peerPrevious: SIPBody?
    let ours: SIPBody
}

/// What a ``SIPCall`` handle is made from.
struct NewCallInfo: Sendable {
    let key: CallKey
    let direction: SIPCall.Direction
    let callID: String
    let remote: SIPNameAddress
    let local: SIPNameAddress
    let offer: SIPBody?
    let remoteAddress: SocketAddress
    let transport: SIPTransportKind
    let localHost: String
    let account: String
    let events: AsyncStream<SIPCallEvent>
    let stateBox: CallStateBox
    /// Incoming: the Call-ID of our call its `Replaces` takes over.
    var replacedCallID: String? = nil
}

/// What does not change for the life of a user agent.
struct CoreEnvironment: Sendable {
    let network: any SIPNetwork
    /// For the names the user configures (registrar, proxy, call target); used off the lock.
    let resolver: DNSResolver
    let configuration: SIPUserAgent.Configuration
    let incoming: AsyncStream<SIPCall>.Continuation
    /// The bound host, nil for a wildcard bind.
    let boundHost: String?

    var logger: Logger { configuration.logger }
    var timers: SIPTimers { configuration.timers }
    func localPort(for transport: SIPTransportKind) -> UInt16 { network.localPort(for: transport) }

    /// The host for Via and Contact: configured, bound, or the local end of the route to `peer`.
    func advertisedHost(toward peer: SocketAddress?) -> String {
        if let host = configuration.advertisedHost { return host }
        if let boundHost { return boundHost }
        if let peer, let local = network.localHost(toward: peer) { return local }
        return network.localAddress.family == .ipv6 ? "::1" : "127.0.0.1"
    }
}

/// Everything the user agent knows, changed only under ``UserAgentCore``'s lock.
struct CoreState: Sendable {
    let env: CoreEnvironment
    var clients: [ClientKey: ClientRecord] = [:]
    var servers: [ServerKey: ServerRecord] = [:]
    var calls: [CallKey: CallRecord] = [:]
    var dialogs: [DialogID: CallKey] = [:]
    /// Incoming calls by their INVITE's Call-ID and From tag.
    var callers: [CallerID: CallKey] = [:]
    /// Calls not ended, and how many of them are incoming (the limits count them).
    var activeCalls = 0
    var activeIncomingCalls = 0
    /// Server transactions with a final response, and ended calls, oldest first: what the
    /// limits forget first.
    var answeredServers = KeyQueue<ServerKey>()
    var endedCalls = KeyQueue<CallKey>()
    var rateLimiter: SourceRateLimiter
    var optionsWaiters: [ClientKey: CheckedContinuation<Result<SIPResponse, SIPError>, Never>] = [:]
    /// The accounts by user, the configuration's among them (``AccountRecord``).
    var accounts: [String: AccountRecord] = [:]
    /// Whether the ``TimerEvent/networkCheck`` timer is armed.
    var networkCheckArmed = false
    var statistics = SIPStatistics()
    var closed = false
    var nextCallKey: CallKey = 1
    /// Messages, timers and new incoming calls, handled by ``UserAgentCore`` after the lock is released.
    var pendingSends: [PendingSend] = []
    var pendingTimers: [(Duration, TimerEvent)] = []
    var pendingIncoming: [NewCallInfo] = []
    /// Changed offers for the application to answer once the lock is released.
    var pendingReoffers: [PendingReoffer] = []

    /// - Parameter states: the registration states of the configuration's account.
    init(env: CoreEnvironment, states: AsyncStream<SIPRegistrationState>.Continuation) {
        self.env = env
        rateLimiter = SourceRateLimiter(limits: env.configuration.limits, now: env.network.now)
        accounts[env.configuration.user] = AccountRecord(displayName: env.configuration.displayName,
                                                         credentials: env.configuration.credentials, states: states)
    }

    var timers: SIPTimers { env.timers }
    var limits: SIPLimits { env.configuration.limits }
    var logger: Logger { env.logger }

    mutating func schedule(_ delay: Duration, _ event: TimerEvent) {
        pendingTimers.append((delay, event))
    }

    /// Queues a message for `destination`: the core does no I/O; ``UserAgentCore`` sends what
    /// is queued once the lock is released (a full socket buffer or a stalled connection drops
    /// it, as the network could).
    mutating func send(_ bytes: [UInt8], to destination: SIPHop, retransmission: Bool = false, isResponse: Bool = false) {
        statistics.messagesSent += 1
        if retransmission { statistics.retransmissionsSent += 1 }
        pendingSends.append(PendingSend(bytes: bytes, hop: destination, isResponse: isResponse))
        if logger.logLevel <= .trace {
            logger.trace("SIP -> \(destination)\n\(String(decoding: bytes, as: UTF8.self))")
        }
    }

    /// The outbound proxy as a preloaded route (RFC 3261 section 8.1.2) of a request outside a
    /// dialog; loose routing (`lr`), so the Request-URI stays the target.
    func addPreloadedRoute(to headers: inout SIPHeaders) {
        guard var proxy = env.configuration.outboundProxy else { return }
        proxy.user = nil
        if !proxy.parameters.contains("lr") { proxy.parameters["lr"] = nil }
        headers.add("Route", "<\(proxy)>")
    }

    /// Whether a dialog may keep the `Record-Route` of these headers for the call's life: at
    /// most ``SIPLimits/maximumRouteSet`` values in ``SIPLimits/maximumRouteSetBytes`` (every
    /// in-dialog request, ACK included, carries them). Counted before parsed.
    func routeSetFits(_ headers: SIPHeaders) -> Bool {
        guard headers.valueCount("Record-Route", limit: limits.maximumRouteSet) <= limits.maximumRouteSet else { return false }
        var bytes = 0
        for field in headers where field.name == "Record-Route" { bytes += field.value.utf8.count }
        return bytes <= limits.maximumRouteSetBytes
    }

    /// A new top Via for a request on `transport`: our sent-by, a fresh branch, `rport` (RFC 3581).
    func makeVia(localHost: String, transport: SIPTransportKind) -> String {
        SIPVia(transport: transport.rawValue, host: localHost, port: env.localPort(for: transport),
               parameters: ["branch": sipMagicCookie + randomToken(), "rport": nil]).description
    }

    /// Our Contact on `transport`: a stream transport is named in it (RFC 3261 section 19.1.4),
    /// so the peer's requests come back on the kind of transport we listen on.
    func contactURI(user: String, localHost: String, transport: SIPTransportKind) -> SIPURI {
        var uri = SIPURI(user: user, host: localHost, port: env.localPort(for: transport))
        if transport != .udp { uri.parameters["transport"] = transport.uriParameter }
        return uri
    }

    /// Where in-dialog requests go: the first route, else the remote target, when it is an IP
    /// literal of our family (on its transport: `transport=`, or TLS for `sips:`); otherwise the
    /// peer's hop (no DNS under the lock).
    func destination(of dialog: Dialog, fallback: SIPHop) -> SIPHop {
        let uri = dialog.routeSet.first?.uri ?? dialog.remoteTarget
        let transport = uri.transport.flatMap(SIPTransportKind.init(uriParameter:)) ?? (uri.scheme == "sips" ? .tls : fallback.transport)
        guard isIPLiteral(uri.host), env.network.canSend(on: transport),
              let address = try? SocketAddress(host: uri.host, port: uri.port ?? (transport == .tls ? 5061 : 5060)),
              address.family == fallback.address.family
        else { return fallback }
        // The peer's own connection when the target is where it already is.
        if address == fallback.address, transport == fallback.transport { return fallback }
        return SIPHop(transport, address)
    }
}

/// A message the core asked to send, sent once its lock is released.
struct PendingSend: Sendable {
    let bytes: [UInt8]
    let hop: SIPHop
    let isResponse: Bool
}

extension Duration {
    /// Whole nanoseconds (saturating).
    var nanoseconds: Int {
        let (seconds, attoseconds) = components
        let (ns, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        return overflow ? Int.max : Int(ns + attoseconds / 1_000_000_000)
    }
}
