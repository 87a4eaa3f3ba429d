package import Platform

/// What carries a user agent's messages and keeps its time: its sockets and network thread
/// (``SIPTransports``), or an embedded network on virtual time (the `SIPEmbedded` module),
/// which runs the same core without sockets, threads or sleeps, as swift-nio's `NIOEmbedded`
/// runs a channel's handlers.
///
/// Thread safety: implementations are safe from any thread.
package protocol SIPNetwork: AnyObject, Sendable {
    /// The UDP address: `SIPUserAgent.localAddress`, and the host in Via and Contact.
    var localAddress: SocketAddress { get }
    /// The address we listen on for `transport`, nil when we do not.
    func listeningAddress(for transport: SIPTransportKind) -> SocketAddress?
    /// The local port messages on `transport` come from (Via's sent-by, Contact).
    func localPort(for transport: SIPTransportKind) -> UInt16
    /// The local host the route to `peer` leaves from, nil when there is no route.
    func localHost(toward peer: SocketAddress) -> String?
    /// Whether requests can go out on `transport`.
    func canSend(on transport: SIPTransportKind) -> Bool
    /// Sends a message toward `hop` without blocking; false when it could not.
    @discardableResult
    func send(_ bytes: [UInt8], to hop: SIPHop, isResponse: Bool) -> Bool
    /// The time now: the monotonic clock, or the embedded network's virtual time.
    var now: ContinuousClock.Instant { get }
    /// A timer was armed earlier than every other, or the agent is closing: a loop waiting for
    /// the old deadline wakes.
    func wakeLoop()
    /// Closes every connection and socket (the agent is closing).
    func closeAll()
    /// Runs `work` (the application's answer to a changed offer) off the network thread, so SDP
    /// work never holds up other messages: on a task of its own, or when an embedded network says.
    func offload(_ work: @escaping @Sendable () -> Void)
}

extension SIPTransports: SIPNetwork {
    var localAddress: SocketAddress { udp.localAddress }

    func listeningAddress(for transport: SIPTransportKind) -> SocketAddress? {
        switch transport {
        case .udp: udp.localAddress
        case .tcp: tcpListener?.localAddress
        case .tls: tlsListener?.localAddress
        }
    }

    var now: ContinuousClock.Instant { .now }

    func localHost(toward peer: SocketAddress) -> String? { UDPSocket.localAddress(toward: peer)?.host }

    func wakeLoop() { wake.signal() }

    func offload(_ work: @escaping @Sendable () -> Void) {
        Task.detached { work() }
    }
}
