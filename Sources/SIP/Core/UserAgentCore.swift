import DNS
import Logging
import Platform
import Synchronization

// The driver of the user agent core. The core (`CoreState`) does no I/O: it takes messages,
// timer firings and calls from the application, and queues what to send, which timers to arm
// and which calls to announce. This driver runs it: one network thread (a `LoopThread`) waits on
// every socket and the earliest timer at once, feeds the core what arrives and what fires, and
// the sends the core queued go out once its lock is released, from whichever thread called.

/// Timers of the core, by deadline (a sorted array: a few hundred at most, one per transaction).
///
/// Thread safety: a value type, used under ``UserAgentCore``'s timer lock.
struct TimerQueue {
    private var entries: [(deadline: ContinuousClock.Instant, event: TimerEvent)] = []

    var nextDeadline: ContinuousClock.Instant? { entries.first?.deadline }
    var count: Int { entries.count }

    mutating func add(_ event: TimerEvent, at deadline: ContinuousClock.Instant) {
        // Binary search for the first later deadline: equal deadlines fire in the order armed.
        var low = 0, high = entries.count
        while low < high {
            let middle = (low + high) / 2
            if entries[middle].deadline <= deadline { low = middle + 1 } else { high = middle }
        }
        entries.insert((deadline, event), at: low)
    }

    /// The events due at `now`, in deadline order, removed from the queue.
    mutating func popDue(at now: ContinuousClock.Instant) -> [TimerEvent] {
        var due = 0
        while due < entries.count, entries[due].deadline <= now { due += 1 }
        let events = entries[..<due].map(\.event)
        entries.removeFirst(due)
        return events
    }

    mutating func removeAll() { entries.removeAll() }
}

/// The user agent's machinery: the core's state behind a lock, its network and its timers.
/// A socket network is driven by a network thread (``startReceiving(on:)``); an embedded one
/// by its owner, through ``deliver(_:from:)`` and ``fireDueTimers()``.
///
/// Thread safety: safe from any thread. Lock order: the core's lock is never held while the
/// network's or the timers' is taken (sends and timers are handed over after it is released).
package final class UserAgentCore: Sendable {
    let environment: CoreEnvironment
    /// The network it runs on (an embedded network finds its own link with it).
    package var network: any SIPNetwork { environment.network }
    private let state: Mutex<CoreState>
    private let timers = Mutex(TimerQueue())
    private let running = Atomic<Bool>(true)
    private let thread = Mutex<LoopThread?>(nil)

    init(network: any SIPNetwork, resolver: DNSResolver, configuration: SIPUserAgent.Configuration,
         incoming: AsyncStream<SIPCall>.Continuation, registrationStates: AsyncStream<SIPRegistrationState>.Continuation) {
        let bound = network.localAddress.host
        let wildcard = bound == "0.0.0.0" || bound == "::"
        environment = CoreEnvironment(network: network, resolver: resolver, configuration: configuration, incoming: incoming,
                                      boundHost: wildcard ? nil : bound)
        state = Mutex(CoreState(env: environment, states: registrationStates))
    }

    /// Runs `body` under the lock, then sends the messages, arms the timers and announces the
    /// incoming calls it queued (none of which needs the lock, and `SIPCall` needs this object).
    @discardableResult
    func withState<R: Sendable>(_ body: (inout CoreState) -> R) -> R {
        let (result, sends, newTimers, incoming, reoffers) = state.withLock { state in
            let result = body(&state)
            let queued = (state.pendingSends, state.pendingTimers, state.pendingIncoming, state.pendingReoffers)
            state.pendingSends.removeAll()
            state.pendingTimers.removeAll()
            state.pendingIncoming.removeAll()
            state.pendingReoffers.removeAll()
            return (result, queued.0, queued.1, queued.2, queued.3)
        }
        let network = environment.network
        for send in sends where !network.send(send.bytes, to: send.hop, isResponse: send.isResponse) {
            environment.logger.debug("SIP: could not send to \(send.hop)")
        }
        if !newTimers.isEmpty {
            let now = network.now
            let wasFirst = timers.withLock { queue in
                let before = queue.nextDeadline
                for (delay, event) in newTimers { queue.add(event, at: now + delay) }
                return before == nil || queue.nextDeadline! < before!
            }
            if wasFirst { network.wakeLoop() }  // the loop waits for an earlier deadline
        }
        for info in incoming { environment.incoming.yield(SIPCall(core: self, info: info)) }
        if let answerer = environment.configuration.answerChangedOffer {
            for reoffer in reoffers {
                network.offload { [self] in
                    let answer = answerer(reoffer.callID, reoffer.offer, reoffer.peerPrevious, reoffer.ours)
                    withState { $0.finishReoffer(reoffer, answer: answer) }
                }
            }
        }
        return result
    }

    /// Handles a message that arrived from `source` (the network thread's, or an embedded network's).
    package func deliver(_ bytes: [UInt8], from source: SIPHop, truncated: Bool = false) {
        withState { $0.receive(bytes, from: source, truncated: truncated) }
    }

    /// The earliest armed timer's deadline, nil when none is armed.
    package var nextTimerDeadline: ContinuousClock.Instant? { timers.withLock { $0.nextDeadline } }

    /// Fires the timers due at the network's time now, in deadline order (and those they arm
    /// that are due at once).
    package func fireDueTimers() {
        while true {
            let due = timers.withLock { $0.popDue(at: environment.network.now) }
            guard !due.isEmpty else { return }
            for event in due { withState { $0.timerFired(event) } }
        }
    }

    /// Starts the network thread over the sockets of `transports`.
    func startReceiving(on transports: SIPTransports) {
        thread.withLock { current in
            guard current == nil else { return }
            let loop = LoopThread(name: "callaudio-sip", NetworkLoop(core: self, transports: transports))
            loop.start()
            current = loop
        }
    }

    /// One turn of the network thread: waits for a socket or the next timer (at most 100 ms, so
    /// a stop is noticed), handles what arrived, then fires the timers that are due.
    fileprivate func turn(_ transports: SIPTransports, scratch: UnsafeMutableRawBufferPointer) {
        let now = ContinuousClock.now
        var waitMs = 100
        if let next = nextTimerDeadline {
            waitMs = next <= now ? 0 : min(100, Int((next - now).nanoseconds / 1_000_000) + 1)
        }
        transports.service(timeoutMs: waitMs, scratch: scratch) { bytes, hop, truncated in
            deliver(bytes, from: hop, truncated: truncated)
        } failed: { hop in
            withState { $0.transportFailed(hop) }
        }
        let due = timers.withLock { $0.popDue(at: .now) }
        for event in due { withState { $0.timerFired(event) } }
    }

    var isRunning: Bool { running.load(ordering: .acquiring) }

    func close() {
        guard running.exchange(false, ordering: .acquiringAndReleasing) else { return }
        withState { $0.shutdown() }
        let loop = thread.withLock { $0.take() }
        environment.network.wakeLoop()
        loop?.stop()
        timers.withLock { $0.removeAll() }
        environment.network.closeAll()
    }
}

/// The network thread's body. It holds the core weakly: a user agent nobody holds closes itself
/// (its `deinit`), which stops this loop.
private final class NetworkLoop: ThreadLoop {
    private weak let core: UserAgentCore?
    private let transports: SIPTransports

    init(core: UserAgentCore, transports: SIPTransports) {
        self.core = core
        self.transports = transports
    }

    func run(stopping: borrowing Atomic<Bool>) {
        let scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: 65_536, alignment: 16)
        defer { scratch.deallocate() }
        while !stopping.load(ordering: .acquiring) {
            guard let core, core.isRunning else { return }
            core.turn(transports, scratch: scratch)
        }
    }
}
