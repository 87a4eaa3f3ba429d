public import Platform

public import Logging
import DNS

/// Counters of a user agent (since it started).
///
/// Thread safety: a value type; safe to use from any thread.
public struct SIPStatistics: Sendable, Hashable {
    /// Datagrams read from the socket (keep-alives and garbage included).
    public var datagramsReceived = 0
    /// Datagrams parsed as SIP messages.
    public var messagesReceived = 0
    /// Datagrams sent, retransmissions included.
    public var messagesSent = 0
    /// Datagrams dropped as malformed (not SIP, a bad response, a request too broken to answer, truncated).
    public var malformedDropped = 0
    /// Malformed requests answered with 400 (or 416, 505).
    public var badRequestsAnswered = 0
    /// Requests and responses sent again by a retransmission timer or to answer a retransmission.
    public var retransmissionsSent = 0
    /// Retransmitted requests, responses and ACKs absorbed by a transaction or dialog.
    public var retransmissionsAbsorbed = 0
    /// Requests for a dialog or transaction that does not exist (answered 481, or dropped for an ACK).
    public var unknownDialogRequests = 0
    /// Responses that match no client transaction (dropped).
    public var strayResponses = 0
    /// Requests sent again with credentials after a 401 or 407.
    public var challengesAnswered = 0
    /// Challenges left unanswered although credentials are configured: a realm they are not
    /// for, a challenge not from the registrar (for credentials without a realm), or one
    /// after the retry for a stale nonce (see ``SIPCredentials``).
    public var challengesDeclined = 0
    /// Responses to an authenticated request dropped because their `Authentication-Info`
    /// `rspauth` is wrong (the server does not know the password: not our registrar or proxy).
    public var badServerAuthentication = 0
    /// Datagrams dropped unread because their source sent too many (``SIPLimits``).
    public var rateLimited = 0
    /// Server transactions forgotten before their time to stay under ``SIPLimits/maximumServerTransactions``.
    public var serverTransactionsEvicted = 0
    /// Ended calls forgotten before their time to stay under ``SIPLimits/maximumEndedCalls``.
    public var endedCallsEvicted = 0
    /// Requests dropped because they repeat the transaction (branch, sent-by, method) of a request
    /// from another source address: a retransmission comes from where its original came from.
    public var spoofedRetransmissions = 0
    /// 2xx responses to our INVITE dropped because they come from an address other than the
    /// dialog's first 2xx, or carry more routes than ``SIPLimits/maximumRouteSet``, or fork
    /// more dialogs than we acknowledge (``SIPLimits/maximumForks``).
    public var unacceptable2xxDropped = 0
    /// Requests dropped, or INVITEs refused with 486, because a state limit was reached
    /// (``SIPLimits/maximumServerTransactions``, ``SIPLimits/maximumIncomingCalls``).
    public var stateLimitDropped = 0
    /// Incoming calls announced on ``SIPUserAgent/incomingCalls``.
    public var incomingCalls = 0

    public init() {}
}

/// A SIP user agent (RFC 3261) on one UDP socket: direct IP calls, or calls through a proxy
/// and a registrar that authenticate with digests.
///
/// It places calls (``invite(to:offer:from:)``), answers them (``incomingCalls``), answers OPTIONS,
/// and runs the transaction layer (retransmissions, timers), the dialogs (ACK for 2xx,
/// 2xx retransmission until ACK, in-dialog BYE) and the checks that keep anything from an
/// unknown dialog away from a call (481). Bodies are opaque: SDP is the caller's business.
///
/// Threads: one network thread (`callaudio-sip`) waits on the UDP socket, the TCP and TLS
/// listeners and connections, and the earliest timer at once. It and every public method work
/// on one state behind one `Mutex`; the core does no I/O under it, and sending never blocks.
/// Events are yielded to `AsyncStream`s while the lock is held, so each stream is in order;
/// no user code runs under the lock.
///
/// Thread safety: safe from any thread or task.
public final class SIPUserAgent: Sendable {
    /// How a user agent is set up.
    ///
    /// Thread safety: a value type; safe to use from any thread.
    /// Answers a peer's changed offer in an established call: `(callID, offer, peerPrevious,
    /// ours)` to the answer, or nil to decline (see ``Configuration/answerChangedOffer``).
    /// `callID` is the call's ``SIPCall/callID``, for an answer that depends on the call's own
    /// state (a call we hold answers `inactive`).
    public typealias OfferAnswerer = @Sendable (_ callID: String, _ offer: SIPBody, _ peerPrevious: SIPBody?,
                                                _ ours: SIPBody) -> SIPBody?

    public struct Configuration: Sendable {
        /// The address to bind (`0.0.0.0:5060`, `127.0.0.1:0` for any free port).
        public var localAddress: SocketAddress
        /// The user part of our `From` and `Contact` URIs.
        public var user: String
        /// The display name in our `From` (none when nil).
        public var displayName: String?
        /// The host written in `Via` and `Contact`. Nil: the bound address, or for a wildcard
        /// bind (`0.0.0.0`, `::`) the local address of the route to each peer.
        public var advertisedHost: String?
        /// The `User-Agent` header.
        public var userAgent: String
        public var timers: SIPTimers
        /// Incoming calls beyond this many active ones are answered 486 Busy Here (nil: no limit).
        public var maximumCalls: Int?
        /// Answers a re-INVITE whose offer differs from the peer's last description (RFC 3264
        /// section 8: hold, resume, other changes): given the call, the new offer, the peer's
        /// last description and ours, it returns the answer, or nil to decline with 488 (the session
        /// stays as it was). A call then gets ``SIPCallEvent/reoffered(_:)``. Nil (the default):
        /// every change is declined. A re-INVITE with the same offer as before is a refresh and
        /// gets our last description without a call.
        ///
        /// Thread safety: called off the user agent's lock, on a task of its own (an embedded
        /// network runs it when it delivers), so SDP work never holds up other messages; the
        /// re-INVITE waits for its answer (a second one meanwhile gets 500 with Retry-After).
        public var answerChangedOffer: OfferAnswerer?
        /// Answers digest challenges (401 and 407) to our requests: INVITE, re-INVITE, BYE,
        /// OPTIONS and REGISTER are sent again once with credentials (RFC 3261 section 22.2),
        /// and once more after a `stale` challenge; only for the realm the credentials are for
        /// (``SIPCredentials/realm``, or without one the registrar's). Nil: a challenge fails the request.
        public var credentials: SIPCredentials?
        /// Rate and state limits against hostile or broken peers.
        public var limits: SIPLimits
        public var logger: Logger
        /// Also listen on TCP, on the UDP socket's port (RFC 3261 section 18: a UA must; off by
        /// default so an agent on port 0 never fails for a TCP port in use).
        public var listensOnTCP = false
        /// TLS: servers' certificates checked against a CA file or the system's store, and with
        /// a certificate and key, a listener for incoming TLS. Nil: no TLS (`sips:` fails).
        public var tls: SIPTLSConfiguration?
        /// The transport for targets that name none (no `transport=` parameter, not `sips:`).
        public var transport: SIPTransportKind = .udp
        /// Every request outside a dialog goes here first (a preloaded route, RFC 3261 section
        /// 8.1.2), as providers put a proxy in front of their registrars; nil: none.
        public var outboundProxy: SIPURI?
        /// How long an outgoing call may ring (from its first provisional response) before it is
        /// cancelled and ends as `failed(408, "Ring Timeout")`; nil: for ever. 3 minutes, as a
        /// proxy's Timer C (RFC 3261 section 16.6).
        public var ringTimeout: Duration? = .seconds(180)
        /// The session interval our INVITEs ask for (RFC 4028 `Session-Expires`, seconds, at
        /// least 90): the dialog is refreshed by a re-INVITE every half interval by the side the
        /// answer names, and ended by the other side when no refresh comes. Nil: not asked for
        /// (a peer's session timer is still honoured). 30 minutes, RFC 4028's recommendation.
        public var sessionInterval: Int? = 1800
        /// The DNS servers for the names we are given (registrar, proxy, call target: SRV, then
        /// A/AAAA, RFC 3263); nil: the system's (`/etc/resolv.conf`).
        public var dnsServers: [SocketAddress]?

        public init(localAddress: SocketAddress, user: String = "callaudio", displayName: String? = nil,
                    advertisedHost: String? = nil, userAgent: String = "CallAudio", timers: SIPTimers = .rfc3261,
                    maximumCalls: Int? = nil,
                    answerChangedOffer: OfferAnswerer? = nil, credentials: SIPCredentials? = nil,
                    limits: SIPLimits = .default, logger: Logger = Logger(label: "callaudio.sip")) {
            self.localAddress = localAddress
            self.user = user
            self.displayName = displayName
            self.advertisedHost = advertisedHost
            self.userAgent = userAgent
            self.timers = timers
            self.maximumCalls = maximumCalls
            self.answerChangedOffer = answerChangedOffer
            self.credentials = credentials
            self.limits = limits
            self.logger = logger
        }
    }

    /// New incoming calls, in arrival order (the 100 Trying is already sent). Answer each with
    /// ``SIPCall/ringing()``, ``SIPCall/accept(answer:)`` or ``SIPCall/reject(status:reason:)``.
    /// Finishes when the user agent closes.
    public let incomingCalls: AsyncStream<SIPCall>

    /// Where the configuration's account's registration stands, each change once
    /// (``SIPRegistrationState``): one reader; the 16 newest are kept for a slow one. Finishes
    /// when the user agent closes. Other accounts have their own (``SIPAccount/registrationStates``).
    public let registrationStates: AsyncStream<SIPRegistrationState>

    private let core: UserAgentCore
    /// The machinery: for the agent's other files (resolving targets), this module's tests and
    /// the embedded network that drives it.
    package var machinery: UserAgentCore { core }

    /// Binds the socket and starts the network thread.
    ///
    /// - Throws: ``SIPError/cannotListen(_:)`` when an address cannot be bound, or a TLS
    ///   file cannot be used; nothing is left open then.
    public convenience init(configuration: Configuration) throws(SIPError) {
        let transports = try SIPTransports.make(for: configuration)
        try self.init(configuration: configuration, network: transports)
        core.startReceiving(on: transports)
        configuration.logger.info("SIP user agent on \(transports.udp.localAddress)")
    }

    /// A user agent on `network`, which delivers its messages and fires its timers (an
    /// embedded network on virtual time); `configuration.localAddress` is not bound.
    ///
    /// - Throws: ``SIPError/cannotListen(_:)`` when the DNS resolver cannot be set up.
    package init(configuration: Configuration, network: any SIPNetwork) throws(SIPError) {
        let resolver: DNSResolver
        do { resolver = try DNSResolver(configuration.dnsServers.map { .servers($0) } ?? .system) } catch {
            throw .cannotListen("DNS: \(error)")
        }
        let (stream, continuation) = AsyncStream.makeStream(of: SIPCall.self)
        incomingCalls = stream
        let (states, stateContinuation) = AsyncStream.makeStream(of: SIPRegistrationState.self, bufferingPolicy: .bufferingNewest(16))
        registrationStates = states
        core = UserAgentCore(network: network, resolver: resolver, configuration: configuration, incoming: continuation,
                             registrationStates: stateContinuation)
    }

    /// Closes the user agent (as ``close()``).
    deinit { core.close() }

    /// The bound address (with the actual port when bound to port 0).
    public var localAddress: SocketAddress { core.environment.network.localAddress }

    /// The address we listen on for `transport` (nil when we do not).
    public func listeningAddress(for transport: SIPTransportKind) -> SocketAddress? {
        core.environment.network.listeningAddress(for: transport)
    }

    /// Our URI as peers should call it: `sip:user@host:port`.
    public var localURI: SIPURI {
        SIPURI(user: core.environment.configuration.user, host: core.environment.advertisedHost(toward: nil),
               port: localAddress.port)
    }

    /// The local host this agent writes in Via and Contact toward `target` (the configured
    /// advertised host, the bound address, or for a wildcard bind the local end of the route):
    /// what an SDP offer's `c=` and `o=` lines should carry.
    ///
    /// - Throws: ``SIPError`` when the target cannot be reached from this socket.
    public func localHost(toward target: SIPURI) throws(SIPError) -> String {
        try locate(target).localHost
    }

    /// Places a call: sends an INVITE carrying `offer` to `target` (`sip:user@host:port`, UDP,
    /// port 5060 when absent; a host name is resolved here, once).
    ///
    /// - Parameter target: whom to call.
    /// - Parameter offer: our session offer (nil: an INVITE without one).
    /// - Parameter account: the account it is placed from; nil: the configuration's.
    /// - Returns: the call; its ``SIPCall/events`` report trying, ringing, answered or the end.
    /// - Throws: ``SIPError`` when the target cannot be reached from this socket, or the agent is closed.
    public func invite(to target: SIPURI, offer: SIPBody?, from account: SIPAccount? = nil) throws(SIPError) -> SIPCall {
        try invite(locate(target), offer: offer, from: account)
    }

    /// Sends an OPTIONS request (a capabilities query, or a ping) and waits for its final response.
    ///
    /// - Throws: ``SIPError/timeout`` after 64 × T1 without a final response; ``SIPError/closed``.
    public func options(to target: SIPURI) async throws(SIPError) -> SIPResponse {
        let destination = try resolve(target)[0]
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<SIPResponse, SIPError>, Never>) in
            core.withState { $0.options(target: target, destination: destination, waiter: continuation) }
        }
        return try result.get()
    }

    /// Registers the configuration's account (``Configuration/user``) at `registrar`: as
    /// ``SIPAccount/register(at:expires:)``, with ``Configuration/credentials``.
    @discardableResult
    public func register(at registrar: SIPURI, expires: Int = 3600) async throws(SIPError) -> Int {
        guard expires >= 1 else { throw .invalidExpires(expires) }
        return try await registration(of: core.environment.configuration.user, at: registrar, expires: expires)
    }

    /// Removes the configuration's account's binding (as ``SIPAccount/unregister()``).
    public func unregister() async throws(SIPError) {
        try await unregister(user: core.environment.configuration.user)
    }

    /// Where the configuration's account's registration stands now.
    public var registrationState: SIPRegistrationState { registrationState(of: core.environment.configuration.user) }

    /// The registrar the configuration's account's binding is at (or being made or removed
    /// at); nil when there is none.
    public var registrar: SIPURI? { registrar(of: core.environment.configuration.user) }

    /// Adds an account: another identity this agent registers and places calls as, on the
    /// same sockets (as pjsua2's accounts). Its user part is its Contact's, so a call its
    /// registrar forwards names it (``SIPCall/account``).
    ///
    /// - Parameter user: the user part of its address of record and Contact, unique on the agent.
    /// - Parameter displayName: the display name in its `From`.
    /// - Parameter credentials: for digest challenges to its REGISTERs and calls.
    /// - Throws: ``SIPError/invalidAccount(user:reason:)`` for a user the agent has already, one
    ///   a URI cannot carry unescaped, or beyond 32 accounts; ``SIPError/closed``. Nothing changes then.
    public func addAccount(user: String, displayName: String? = nil,
                           credentials: SIPCredentials? = nil) throws(SIPError) -> SIPAccount {
        let (states, continuation) = AsyncStream.makeStream(of: SIPRegistrationState.self, bufferingPolicy: .bufferingNewest(16))
        try core.withState {
            $0.addAccount(user: user, displayName: displayName, credentials: credentials, states: continuation)
        }.get()
        return SIPAccount(agent: self, user: user, displayName: displayName, registrationStates: states)
    }

    func registration(of user: String, at registrar: SIPURI, expires: Int) async throws(SIPError) -> Int {
        let servers = try resolve(registrar)
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<Int, SIPError>, Never>) in
            core.withState {
                $0.register(user: user, registrar: registrar, destination: servers[0], alternates: Array(servers.dropFirst()),
                            expires: expires, waiter: continuation)
            }
        }
        return try result.get()
    }

    func unregister(user: String) async throws(SIPError) {
        guard let registrar = registrar(of: user) else { return }
        _ = try await registration(of: user, at: registrar, expires: 0)
    }

    func registrationState(of user: String) -> SIPRegistrationState {
        core.withState { $0.accounts[user]?.state ?? .unregistered }
    }

    func registrar(of user: String) -> SIPURI? { core.withState { $0.accounts[user]?.registration?.registrar } }

    /// Tells the agent the network changed (an app that hears so from the system): every
    /// account whose registrar is now reached from another local address registers again at
    /// once, from it, removing its old Contact. An agent bound to a wildcard address also
    /// checks by itself every ``SIPTimers/networkCheck`` (5 s) while it has a binding; one
    /// bound to an address, or with ``Configuration/advertisedHost``, never moves. Calls in
    /// progress keep their addresses.
    public func networkChanged() { core.withState { $0.checkNetwork() } }

    /// The counters so far.
    public var statistics: SIPStatistics { core.withState { $0.statistics } }

    /// How much state the agent keeps (tests check the limits with it).
    package var stateCounts: (servers: Int, clients: Int, calls: Int, dialogs: Int) {
        core.withState { ($0.servers.count, $0.clients.count, $0.calls.count, $0.dialogs.count) }
    }

    /// Handles `bytes` as if they had arrived from `source`, on the caller's thread (a bench
    /// times the work one datagram costs with it; responses go to `source`).
    func receive(_ bytes: [UInt8], from source: SIPHop) {
        core.withState { $0.receive(bytes, from: source, truncated: false) }
    }

    /// Ends every call (a best-effort BYE, CANCEL or 480 sent once; each call's events end with
    /// ``SIPCallEndReason/shutdown``), finishes ``incomingCalls`` and stops the network thread
    /// (the socket closes within 100 ms). Idempotent.
    public func close() { core.close() }
}
