public import Platform
public import SIP
import Synchronization

// A network on virtual time for SIP user agents and hand-written peers, as swift-nio's
// `NIOEmbedded` is for channels: the agents' cores run unchanged, but datagrams go from one
// endpoint to another in memory, at once and in order, and time moves only when the owner says
// so (`advance(by:)`), timer by timer. Nothing sleeps and no thread is started, so a test of
// Timer B's 32 s or a session timer's half hour takes microseconds and gives the same result
// on a loaded machine.

/// A network on virtual time for `SIPUserAgent`s and ``EmbeddedSIPPeer``s (UDP only).
///
/// A datagram is delivered when it is sent, on the sender's thread: to the agent bound at its
/// destination (whose answers are delivered in turn, in order, before `send` returns), to the
/// peer there, or nowhere (counted in ``undeliverable``). Timers fire only in ``advance(by:)``.
///
/// Thread safety: safe from any thread; deliveries from several threads at once are
/// serialised (the thread that finds the network idle delivers everything queued meanwhile).
public final class EmbeddedSIPNetwork: Sendable {
    private let origin = ContinuousClock.now
    private let state = Mutex(State())

    private struct State {
        var elapsed: Duration = .zero
        var agents: [SocketAddress: WeakCore] = [:]
        var peers: [SocketAddress: WeakPeer] = [:]
        var queue: [Datagram] = []
        var head = 0
        var delivering = false
        var nextPort: UInt16 = 20_000
        var traffic = EmbeddedSIPTraffic()
        var sent = 0
        /// Work the agents handed off (answers to changed offers), and whether it waits.
        var offloaded: [@Sendable () -> Void] = []
        var holdsOffloaded = false
        var waiters: [(count: Int, continuation: CheckedContinuation<Bool, Never>)] = []
    }

    private struct Datagram {
        let bytes: [UInt8]
        let source: SocketAddress
        let destination: SocketAddress
    }

    private struct WeakCore {
        weak var core: UserAgentCore?
    }

    private struct WeakPeer {
        weak var peer: EmbeddedSIPPeer?
    }

    /// A datagram storm (two endpoints answering each other for ever) stops here.
    public static let deliveriesPerSend = 100_000

    public init() {}

    private static let loopback: SocketAddress = {
        do { return try SocketAddress(host: "127.0.0.1", port: 0) } catch { fatalError("127.0.0.1: \(error)") }
    }()

    /// Virtual time since the network was made.
    public var elapsed: Duration { state.withLock { $0.elapsed } }

    /// What was sent so far, by source and destination.
    public var traffic: EmbeddedSIPTraffic { state.withLock { $0.traffic } }

    /// Datagrams sent to an address nobody is bound at.
    public var undeliverable: Int { state.withLock { $0.traffic.undeliverable } }

    /// A user agent on this network at `configuration.localAddress` (port 0: a free one from
    /// 20000 up). Its timers run on this network's time.
    ///
    /// - Throws: `SIPError.cannotListen` for a wildcard or taken address.
    public func makeAgent(_ configuration: SIPUserAgent.Configuration) throws(SIPError) -> SIPUserAgent {
        var configuration = configuration
        let address = try claim(configuration.localAddress)
        configuration.localAddress = address
        let agent = try SIPUserAgent(configuration: configuration,
                                     network: AgentLink(network: self, bound: address, reachable: address))
        state.withLock { $0.agents[address] = WeakCore(core: agent.machinery) }
        return agent
    }

    /// A user agent bound to the wildcard address (`0.0.0.0`, `configuration.localAddress`'s
    /// port, 0: a free one) of a machine at `host`: it writes `host`, the local end of the route,
    /// in Via and Contact, as an agent on a laptop does; ``move(_:to:)`` gives the machine
    /// another address, as a new network does. Its timers run on this network's time.
    ///
    /// - Throws: `SIPError.cannotListen` for a taken address or a host that is not an IP literal.
    public func makeAgent(_ configuration: SIPUserAgent.Configuration, host: String) throws(SIPError) -> SIPUserAgent {
        var configuration = configuration
        let reachable = try claim(Self.address(host, configuration.localAddress.port))
        configuration.localAddress = try Self.address(reachable.family == .ipv6 ? "::" : "0.0.0.0", reachable.port)
        let link = AgentLink(network: self, bound: configuration.localAddress, reachable: reachable)
        let agent = try SIPUserAgent(configuration: configuration, network: link)
        state.withLock { $0.agents[reachable] = WeakCore(core: agent.machinery) }
        return agent
    }

    /// Gives the machine of `agent` (made with ``makeAgent(_:host:)``) the address `host`:
    /// datagrams to its old address go nowhere from now on.
    ///
    /// - Throws: `SIPError.cannotListen` for an agent not of this network, or a taken address.
    public func move(_ agent: SIPUserAgent, to host: String) throws(SIPError) {
        guard let link = agent.machinery.network as? AgentLink, link.network === self else {
            throw .cannotListen("not an agent of this network")
        }
        let old = link.address
        let new = try claim(Self.address(host, old.port))
        state.withLock { $0.agents[new] = $0.agents.removeValue(forKey: old) }
        link.address = new
    }

    /// Where `agent` is reached now: its bound address, or for one bound to the wildcard address
    /// (``makeAgent(_:host:)``), its machine's.
    public func address(of agent: SIPUserAgent) -> SocketAddress {
        (agent.machinery.network as? AgentLink)?.address ?? agent.localAddress
    }

    private static func address(_ host: String, _ port: UInt16) throws(SIPError) -> SocketAddress {
        do { return try SocketAddress(host: host, port: port) } catch { throw .cannotListen("\(host): \(error)") }
    }

    /// A hand-written peer at `address` (nil: 127.0.0.1 and a free port).
    public func makePeer(at address: SocketAddress? = nil) throws(SIPError) -> EmbeddedSIPPeer {
        let bound = try claim(address ?? Self.loopback)
        let peer = EmbeddedSIPPeer(network: self, address: bound)
        state.withLock { $0.peers[bound] = WeakPeer(peer: peer) }
        return peer
    }

    private func claim(_ address: SocketAddress) throws(SIPError) -> SocketAddress {
        guard address.host != "0.0.0.0", address.host != "::" else {
            throw .cannotListen("an embedded network has no wildcard address: \(address)")
        }
        return try state.withLock { state throws(SIPError) in
            var bound = address
            while bound.port == 0 || state.agents[bound] != nil || state.peers[bound] != nil {
                guard address.port == 0 else { throw .cannotListen("\(address) is taken") }
                bound = bound.with(port: state.nextPort)
                state.nextPort &+= 1
            }
            return bound
        }
    }

    /// Moves time forward by `duration`, firing every agent's timers in deadline order (and
    /// delivering what they send) as their deadlines pass.
    public func advance(by duration: Duration) {
        _ = advance(by: duration) { false }
    }

    /// Moves time forward, timer by timer, until `condition` holds (checked first, and after
    /// each deadline) or `duration` has passed. Returns whether it held.
    @discardableResult
    public func advance(by duration: Duration, until condition: () -> Bool) -> Bool {
        let end = elapsed + duration
        while !condition() {
            let cores = state.withLock { $0.agents.values.compactMap(\.core) }
            let next = cores.compactMap(\.nextTimerDeadline).min().map { $0 - origin }
            guard let next, next <= end else {
                state.withLock { $0.elapsed = max($0.elapsed, end) }
                return condition()
            }
            state.withLock { $0.elapsed = max($0.elapsed, next) }
            for core in cores { core.fireDueTimers() }
        }
        return true
    }

    var now: ContinuousClock.Instant { origin + elapsed }

    /// Waits until `count` datagrams have been sent on the network since it was made: for a
    /// request an async API sends from another task (`SIPUserAgent.register(at:expires:)`).
    /// `timeout` is wall-clock time, a bound for a test that fails; returns false at it.
    public func waitForDatagrams(_ count: Int, timeout: Duration = .seconds(10)) async -> Bool {
        let watchdog = Task { [self] in
            try? await Task.sleep(for: timeout)
            state.withLock { state in
                for waiter in state.waiters { waiter.continuation.resume(returning: false) }
                state.waiters.removeAll()
            }
        }
        defer { watchdog.cancel() }
        return await withCheckedContinuation { continuation in
            state.withLock { state in
                if state.sent >= count { continuation.resume(returning: true) } else { state.waiters.append((count, continuation)) }
            }
        }
    }

    /// Datagrams sent on the network since it was made.
    public var datagramsSent: Int { state.withLock { $0.sent } }

    /// Sends a datagram from `source` (any address: a peer may spoof one) and delivers
    /// everything queued, unless another thread is already doing so.
    func transmit(_ bytes: [UInt8], from source: SocketAddress, to destination: SocketAddress) {
        let deliversNow = state.withLock { state in
            state.queue.append(Datagram(bytes: bytes, source: source, destination: destination))
            state.traffic.count(bytes.count, from: source, to: destination)
            state.sent += 1
            let sent = state.sent
            state.waiters.removeAll { waiter in
                guard waiter.count <= sent else { return false }
                waiter.continuation.resume(returning: true)
                return true
            }
            guard !state.delivering else { return false }
            state.delivering = true
            return true
        }
        guard deliversNow else { return }
        for _ in 0..<Self.deliveriesPerSend {
            switch nextStep() {
            case nil: return
            case .run(let work): work()
            case .deliver(let datagram, .agent(let core)): core.deliver(datagram.bytes, from: SIPHop(.udp, datagram.source))
            case .deliver(let datagram, .peer(let peer)): peer.arrived(datagram.bytes, from: datagram.source)
            case .deliver(_, .nobody): break
            }
        }
        state.withLock { state in
            state.traffic.stormDropped += state.queue.count - state.head
            state.queue.removeAll()
            state.head = 0
            state.delivering = false
        }
    }

    private enum Receiver {
        case agent(UserAgentCore)
        case peer(EmbeddedSIPPeer)
        case nobody
    }

    private enum Step {
        case deliver(Datagram, Receiver)
        case run(@Sendable () -> Void)
    }

    /// The oldest queued datagram and who receives it, else handed-off work that does not
    /// wait; nil (and idle) when neither is left.
    private func nextStep() -> Step? {
        state.withLock { state in
            guard state.head < state.queue.count else {
                state.queue.removeAll(keepingCapacity: true)
                state.head = 0
                if !state.holdsOffloaded, !state.offloaded.isEmpty { return .run(state.offloaded.removeFirst()) }
                state.delivering = false
                return nil
            }
            let datagram = state.queue[state.head]
            state.head += 1
            if let core = state.agents[datagram.destination]?.core { return .deliver(datagram, .agent(core)) }
            if let peer = state.peers[datagram.destination]?.peer { return .deliver(datagram, .peer(peer)) }
            state.traffic.undeliverable += 1
            return .deliver(datagram, .nobody)
        }
    }

    /// Whether work the agents hand off (the application's answer to a changed offer, computed
    /// off the agent's lock) waits for ``runOffloadedWork()``; false (the default): it runs as
    /// the network delivers, right after the message that caused it. A test of what happens
    /// while an answer is being computed holds it.
    public var holdsOffloadedWork: Bool {
        get { state.withLock { $0.holdsOffloaded } }
        set { state.withLock { $0.holdsOffloaded = newValue } }
    }

    /// Runs the work that waits (``holdsOffloadedWork``), in the order it was handed off.
    public func runOffloadedWork() {
        while let work = state.withLock({ $0.offloaded.isEmpty ? nil : $0.offloaded.removeFirst() }) { work() }
    }

    func offload(_ work: @escaping @Sendable () -> Void) {
        let runsNow = state.withLock { state in
            guard !state.holdsOffloaded, !state.delivering else {
                state.offloaded.append(work)
                return false
            }
            return true
        }
        if runsNow { work() }
    }

    func unbind(_ address: SocketAddress) {
        state.withLock { state in
            state.agents[address] = nil
            state.peers[address] = nil
        }
    }
}

/// Bytes and datagrams sent on an ``EmbeddedSIPNetwork``: what a reflection budget is checked on.
///
/// Thread safety: a value type; safe to use from any thread.
public struct EmbeddedSIPTraffic: Sendable {
    /// Bytes sent between each source and destination.
    public private(set) var bytes: [Pair: Int] = [:]
    public private(set) var datagrams: [Pair: Int] = [:]
    /// Datagrams to an address nobody is bound at.
    public internal(set) var undeliverable = 0
    /// Datagrams left undelivered when one send set off more than
    /// ``EmbeddedSIPNetwork/deliveriesPerSend`` deliveries.
    public internal(set) var stormDropped = 0

    /// A source and a destination.
    public struct Pair: Sendable, Hashable {
        public var source: SocketAddress
        public var destination: SocketAddress
    }

    mutating func count(_ size: Int, from source: SocketAddress, to destination: SocketAddress) {
        let pair = Pair(source: source, destination: destination)
        bytes[pair, default: 0] += size
        datagrams[pair, default: 0] += 1
    }

    /// Bytes `source` sent to `destination`.
    public func bytes(from source: SocketAddress, to destination: SocketAddress) -> Int {
        bytes[Pair(source: source, destination: destination)] ?? 0
    }

    /// Bytes `source` sent to anyone.
    public func bytes(from source: SocketAddress) -> Int {
        bytes.reduce(0) { $0 + ($1.key.source == source ? $1.value : 0) }
    }

    /// Bytes anyone sent to `destination`.
    public func bytes(to destination: SocketAddress) -> Int {
        bytes.reduce(0) { $0 + ($1.key.destination == destination ? $1.value : 0) }
    }
}

/// One agent's side of the network: what its core sends through and reads the time from. It
/// holds the network, which holds its agents and peers weakly.
private final class AgentLink: SIPNetwork {
    let network: EmbeddedSIPNetwork?
    /// What the agent is bound to: an address, or the wildcard one.
    let localAddress: SocketAddress
    private let reachable: Mutex<SocketAddress>
    private let origin = ContinuousClock.now

    init(network: EmbeddedSIPNetwork, bound: SocketAddress, reachable: SocketAddress) {
        self.network = network
        localAddress = bound
        self.reachable = Mutex(reachable)
    }

    /// Where the agent is reached, and sends from.
    var address: SocketAddress {
        get { reachable.withLock { $0 } }
        set { reachable.withLock { $0 = newValue } }
    }

    func localHost(toward peer: SocketAddress) -> String? { address.host }

    func listeningAddress(for transport: SIPTransportKind) -> SocketAddress? { transport == .udp ? localAddress : nil }
    func localPort(for transport: SIPTransportKind) -> UInt16 { localAddress.port }
    func canSend(on transport: SIPTransportKind) -> Bool { transport == .udp }

    func send(_ bytes: [UInt8], to hop: SIPHop, isResponse: Bool) -> Bool {
        guard hop.transport == .udp, let network else { return false }
        network.transmit(bytes, from: address, to: hop.address)
        return true
    }

    var now: ContinuousClock.Instant { network?.now ?? origin }
    func wakeLoop() {}
    func offload(_ work: @escaping @Sendable () -> Void) { network?.offload(work) }
    func closeAll() { network?.unbind(address) }
}
