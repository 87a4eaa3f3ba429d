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
    case options
    /// Our REGISTER (``CoreState/registration``).
    case register
    /// Nobody (a BYE for a forked 2xx).
    case none
}

struct ClientRecord: Sendable {
    var transaction: ClientTransaction
    let destination: SocketAddress
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
    let destination: SocketAddress
    /// The incoming call an INVITE started.
    var callKey: CallKey?

    init(transaction: ServerTransaction, request: SIPRequest, destination: SocketAddress) {
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
}

enum TimerEvent: Sendable {
    case client(ClientKey, TransactionTimer)
    case server(ServerKey, TransactionTimer)
    case call(CallKey, CallTimer)
    /// Refresh the registration of this generation (a later register or unregister makes it stale).
    case registration(UInt64)
}

/// An unacknowledged 2xx to an INVITE, retransmitted by the UAS core.
struct Pending2xx: Sendable {
    let bytes: [UInt8]
    let destination: SocketAddress
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
    let events: AsyncStream<SIPCallEvent>.Continuation
    /// The peer's signalling address (source of its INVITE, or where ours went).
    let peer: SocketAddress
    /// Our host as written in Via and Contact for this call.
    let localHost: String
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
    var answerSource: SocketAddress?
    /// Forked 2xx acknowledged and ended with a BYE (at most ``SIPLimits/maximumForks``).
    var forksEnded = 0

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
    /// The offer to send once no INVITE transaction is in progress (only the latest is kept).
    var queuedOffer: SIPBody?
    /// A 491 retry is scheduled; how many 491s in a row the current offer got.
    var retryScheduled = false
    var requestPendingCount = 0

    init(key: CallKey, direction: SIPCall.Direction, phase: SIPCallState, peer: SocketAddress, localHost: String,
         events: AsyncStream<SIPCallEvent>.Continuation) {
        self.key = key
        self.direction = direction
        self.phase = phase
        self.peer = peer
        self.localHost = localHost
        self.events = events
        box = CallStateBox(phase)
    }

    mutating func setPhase(_ phase: SIPCallState) {
        self.phase = phase
        box.state = phase
    }
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
    let localHost: String
    let events: AsyncStream<SIPCallEvent>
    let stateBox: CallStateBox
}

/// What does not change for the life of a user agent.
struct CoreEnvironment: Sendable {
    let socket: UDPSocket
    let configuration: SIPUserAgent.Configuration
    let incoming: AsyncStream<SIPCall>.Continuation
    /// The bound host, nil for a wildcard bind.
    let boundHost: String?

    var logger: Logger { configuration.logger }
    var timers: SIPTimers { configuration.timers }
    var localPort: UInt16 { socket.localAddress.port }

    /// The host for Via and Contact: configured, bound, or the local end of the route to `peer`.
    func advertisedHost(toward peer: SocketAddress?) -> String {
        if let host = configuration.advertisedHost { return host }
        if let boundHost { return boundHost }
        if let peer, let local = UDPSocket.localAddress(toward: peer) { return local.host }
        return socket.localAddress.family == .ipv6 ? "::1" : "127.0.0.1"
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
    /// Our binding at a registrar, from the first REGISTER until it is removed.
    var registration: RegistrationRecord?
    var statistics = SIPStatistics()
    var closed = false
    var nextCallKey: CallKey = 1
    /// Timers and new incoming calls, handled by ``UserAgentCore`` after the lock is released.
    var pendingTimers: [(Duration, TimerEvent)] = []
    var pendingIncoming: [NewCallInfo] = []

    init(env: CoreEnvironment) {
        self.env = env
        rateLimiter = SourceRateLimiter(limits: env.configuration.limits)
    }

    var timers: SIPTimers { env.timers }
    var limits: SIPLimits { env.configuration.limits }
    var logger: Logger { env.logger }

    mutating func schedule(_ delay: Duration, _ event: TimerEvent) {
        pendingTimers.append((delay, event))
    }

    /// Sends a datagram (never blocks; a full socket buffer drops it, as the network could).
    mutating func send(_ bytes: [UInt8], to destination: SocketAddress, retransmission: Bool = false) {
        statistics.messagesSent += 1
        if retransmission { statistics.retransmissionsSent += 1 }
        let result = env.socket.send(bytes, to: destination)
        if result != .sent {
            logger.warning("SIP send to \(destination) failed: \(result)")
        }
        if logger.logLevel <= .trace {
            logger.trace("SIP -> \(destination)\n\(String(decoding: bytes, as: UTF8.self))")
        }
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

    /// A new top Via toward `destination`: our sent-by, a fresh branch, `rport` (RFC 3581).
    func makeVia(localHost: String) -> String {
        SIPVia(host: localHost, port: env.localPort,
               parameters: ["branch": sipMagicCookie + randomToken(), "rport": nil]).description
    }

    func contactURI(localHost: String) -> SIPURI {
        SIPURI(user: env.configuration.user, host: localHost, port: env.localPort)
    }

    /// Where in-dialog requests go: the first route, else the remote target, when it is an IP
    /// literal of our family; otherwise the peer's signalling address (no DNS under the lock).
    func destination(of dialog: Dialog, fallback: SocketAddress) -> SocketAddress {
        let uri = dialog.routeSet.first?.uri ?? dialog.remoteTarget
        guard uri.transport == nil || uri.transport == "udp", isIPLiteral(uri.host),
              let address = try? SocketAddress(host: uri.host, port: uri.effectivePort),
              address.family == fallback.family
        else { return fallback }
        return address
    }
}

/// The user agent's machinery: the state behind a lock, the network thread and the timers.
final class UserAgentCore: Sendable {
    let environment: CoreEnvironment
    private let state: Mutex<CoreState>
    private let running = Atomic<Bool>(true)
    private let timerQueue = DispatchQueue(label: "callaudio.sip.timers")

    init(socket: UDPSocket, configuration: SIPUserAgent.Configuration, incoming: AsyncStream<SIPCall>.Continuation) {
        let bound = socket.localAddress.host
        let wildcard = bound == "0.0.0.0" || bound == "::"
        environment = CoreEnvironment(socket: socket, configuration: configuration, incoming: incoming,
                                      boundHost: wildcard ? nil : bound)
        state = Mutex(CoreState(env: environment))
    }

    /// Runs `body` under the lock, then starts the timers it asked for and announces new
    /// incoming calls (both need no lock, and `SIPCall` needs this object).
    @discardableResult
    func withState<R: Sendable>(_ body: (inout CoreState) -> R) -> R {
        let (result, timers, incoming) = state.withLock { state in
            let result = body(&state)
            let timers = state.pendingTimers, incoming = state.pendingIncoming
            state.pendingTimers.removeAll()
            state.pendingIncoming.removeAll()
            return (result, timers, incoming)
        }
        for (delay, event) in timers {
            timerQueue.asyncAfter(deadline: .now() + .nanoseconds(delay.nanoseconds)) { [weak self] in
                self?.withState { $0.timerFired(event) }
            }
        }
        for info in incoming { environment.incoming.yield(SIPCall(core: self, info: info)) }
        return result
    }

    /// Starts the network thread: it waits up to 100 ms at a time for a datagram, so it
    /// notices ``close()`` within that time.
    func startReceiving() {
        let socket = environment.socket
        Thread.detachNewThread { [self] in
            Thread.current.name = "callaudio-sip"
            let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 65_536, alignment: 16)
            defer { buffer.deallocate() }
            while running.load(ordering: .acquiring) {
                switch socket.receive(into: buffer, timeoutMs: 100) {
                case .timeout:
                    continue
                case .failed(let code):
                    environment.logger.debug("SIP receive failed: errno \(code)")
                    usleep(10_000)  // do not spin on a persistent error
                case .datagram(let length, let source, let truncated):
                    let bytes = Array(UnsafeRawBufferPointer(rebasing: buffer[..<length]))
                    withState { $0.receive(bytes, from: source, truncated: truncated) }
                }
            }
        }
    }

    func close() {
        guard running.exchange(false, ordering: .acquiringAndReleasing) else { return }
        withState { $0.shutdown() }
    }
}

extension Duration {
    /// Whole nanoseconds (saturating).
    var nanoseconds: Int {
        let (seconds, attoseconds) = components
        let (ns, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        return overflow ? Int.max : Int(ns + attoseconds / 1_000_000_000)
    }
}
