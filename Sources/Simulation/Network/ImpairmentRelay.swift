public import Platform
import Glibc
import Synchronization

/// Network impairments for one direction of a relay.
///
/// Thread safety: a value type; safe to use from any thread.
public struct ImpairmentProfile: Sendable, Equatable {
    /// Base one-way delay in milliseconds.
    public var delayMs: Double
    /// Each packet's delay varies uniformly by up to this much either way, in milliseconds.
    public var jitterMs: Double
    /// Packets dropped at random, in percent.
    public var lossPercent: Double
    /// Packets held back by ``reorderDelayMs`` more, so later ones overtake them, in percent.
    public var reorderPercent: Double
    public var reorderDelayMs: Double
    /// Packets delivered twice (the copy up to 10 ms later), in percent.
    public var duplicatePercent: Double

    public init(delayMs: Double = 0, jitterMs: Double = 0, lossPercent: Double = 0, reorderPercent: Double = 0,
                reorderDelayMs: Double = 40, duplicatePercent: Double = 0) {
        self.delayMs = delayMs
        self.jitterMs = jitterMs
        self.lossPercent = lossPercent
        self.reorderPercent = reorderPercent
        self.reorderDelayMs = reorderDelayMs
        self.duplicatePercent = duplicatePercent
    }

    /// No impairment.
    public static let none = ImpairmentProfile()
}

/// The seeded decisions of an impairment profile, packet by packet.
///
/// Every packet consumes the same number of random draws whatever happens to it, so
/// the n-th packet's fate depends only on the seed and n: two streams of the same
/// length through models with the same seed are impaired identically.
///
/// Thread safety: a value type; use from one thread.
public struct ImpairmentModel: Sendable {
    /// What happens to one packet: the delays, in milliseconds, of each copy delivered.
    public struct Decision: Sendable, Equatable {
        /// Delay of the packet, or nil if it is lost.
        public var delayMs: Double?
        /// Delay of a duplicate, if one is made.
        public var duplicateDelayMs: Double?
    }

    public let profile: ImpairmentProfile
    private var random: SeededRandom

    public init(profile: ImpairmentProfile, seed: UInt64) {
        self.profile = profile
        random = SeededRandom(seed: seed)
    }

    /// The fate of the next packet.
    public mutating func next() -> Decision {
        let lossDraw = random.unit(), jitterDraw = random.unit(), reorderDraw = random.unit()
        let duplicateDraw = random.unit(), duplicateDelayDraw = random.unit()
        guard lossDraw * 100 >= profile.lossPercent else { return Decision(delayMs: nil, duplicateDelayMs: nil) }
        var delay = max(0, profile.delayMs + (2 * jitterDraw - 1) * profile.jitterMs)
        if reorderDraw * 100 < profile.reorderPercent { delay += profile.reorderDelayMs }
        let duplicate = duplicateDraw * 100 < profile.duplicatePercent ? delay + 10 * duplicateDelayDraw : nil
        return Decision(delayMs: delay, duplicateDelayMs: duplicate)
    }
}

/// A UDP relay that impairs traffic, in-process and seeded: for tests, benchmarks and
/// `voicecall` with `--loss` and `--jitter-ms`.
///
/// A client sends to ``listenAddress``; the relay forwards to the target (and to any
/// extra targets, with the very same delays and losses) from its own socket, applying
/// the forward profile. What the target sends back to that socket goes to the last
/// client, with the backward profile.
///
/// Thread safety: ``start()`` and ``stop()`` from one control thread; ``statistics``
/// from any thread. The relay runs on its own thread.
public final class ImpairmentRelay: Sendable {
    /// Counters per direction.
    public struct Statistics: Sendable, Equatable {
        public var forwarded = 0, dropped = 0, duplicated = 0
        public var returned = 0, returnDropped = 0
        /// The 95th percentile of the forward delays applied, minus the smallest one, in
        /// milliseconds: the jitter the relay added (from the first 65536 packets).
        public var jitterP95Ms = 0.0
    }

    /// Where clients send.
    public var listenAddress: SocketAddress { front.localAddress }
    private let front: UDPSocket
    private let back: UDPSocket
    private let worker: RelayWorker
    private let thread: LoopThread

    /// Binds the relay's sockets.
    ///
    /// - Parameters:
    ///   - listen: where clients send (port 0 picks a free port).
    ///   - targets: where packets go (the first is the one whose replies come back).
    public init(listen: SocketAddress, targets: [SocketAddress], forward: ImpairmentProfile,
                backward: ImpairmentProfile = .none, seed: UInt64) throws(SocketError) {
        precondition(!targets.isEmpty, "a relay needs a target")
        front = try UDPSocket(bindingTo: listen)
        // The outgoing socket: on the listening host when the families match, else on loopback.
        let local = targets[0].family == listen.family
            ? listen.with(port: 0)
            : try SocketAddress(host: targets[0].family == .ipv6 ? "::1" : "127.0.0.1", port: 0)
        back = try UDPSocket(bindingTo: local)
        worker = RelayWorker(front: front, back: back, targets: targets,
                             forward: ImpairmentModel(profile: forward, seed: seed),
                             backward: ImpairmentModel(profile: backward, seed: seed ^ 0x5DEE_CE66_D1CE_4E5B))
        thread = LoopThread(name: "callaudio-relay", worker)
    }

    deinit { stop() }

    /// Starts relaying.
    public func start() { thread.start() }

    /// Stops relaying; packets still held are dropped. Returns within about 10 ms.
    public func stop() { thread.stop() }

    /// What the relay did so far.
    public var statistics: Statistics { worker.statistics() }
}

/// The relay's thread.
final class RelayWorker: ThreadLoop, @unchecked Sendable {
    // @unchecked: the models, the queue and the client address are used only by the
    // relay thread; counters are atomic.
    private let front: UDPSocket
    private let back: UDPSocket
    private let targets: [SocketAddress]
    private var forward: ImpairmentModel
    private var backward: ImpairmentModel
    private var client: SocketAddress?
    /// The counters of ``ImpairmentRelay/Statistics``, one atomic cell each.
    private enum Cell: Int, CaseIterable {
        case forwarded, dropped, duplicated, returned, returnDropped, jitterP95Ms
    }
    private let counters = AtomicCells(count: Cell.allCases.count)
    /// Forward delays applied, for the jitter percentile (bounded).
    private var delays: [Double] = []

    private struct Pending {
        var due: UInt64
        var order: Int
        var bytes: [UInt8]
        var toTargets: Bool
    }
    /// A binary min-heap on (due, order): equal due times keep arrival order.
    private var queue: [Pending] = []
    private var order = 0
    private static let maxQueued = 8192

    init(front: UDPSocket, back: UDPSocket, targets: [SocketAddress], forward: ImpairmentModel, backward: ImpairmentModel) {
        self.front = front
        self.back = back
        self.targets = targets
        self.forward = forward
        self.backward = backward
    }

    @inline(__always) private func count(_ c: Cell) { counters.add(c.rawValue, 1) }
    @inline(__always) private func int(_ c: Cell) -> Int { counters.int(c.rawValue) }

    func statistics() -> ImpairmentRelay.Statistics {
        .init(forwarded: int(.forwarded), dropped: int(.dropped), duplicated: int(.duplicated), returned: int(.returned),
              returnDropped: int(.returnDropped), jitterP95Ms: counters.double(Cell.jitterP95Ms.rawValue))
    }

    func run(stopping: borrowing Atomic<Bool>) {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 65536, alignment: 16)
        defer { buffer.deallocate() }
        while !stopping.load(ordering: .acquiring) {
            let now = MonotonicClock.nanoseconds()
            deliverDue(now)
            var wait = 10
            if let first = queue.first {
                wait = first.due <= now ? 0 : min(10, Int((first.due - now + 999_999) / 1_000_000))
            }
            let (frontReady, backReady) = UDPSocket.waitReadable(front, back, timeoutMs: wait)
            if frontReady {
                while case let .datagram(length, source, _) = front.receiveNow(into: buffer) {
                    client = source
                    let decision = forward.next()
                    enqueue(decision, Array(buffer[0..<length]), toTargets: true, dropCounter: .dropped)
                }
            }
            if backReady {
                while case let .datagram(length, source, _) = back.receiveNow(into: buffer) {
                    guard source == targets[0], client != nil else { continue }
                    let decision = backward.next()
                    enqueue(decision, Array(buffer[0..<length]), toTargets: false, dropCounter: .returnDropped)
                }
            }
        }
    }

    private func enqueue(_ decision: ImpairmentModel.Decision, _ bytes: [UInt8], toTargets: Bool, dropCounter: Cell) {
        guard let delay = decision.delayMs else {
            count(dropCounter)
            return
        }
        if toTargets, delays.count < 65536 {
            delays.append(delay)
            if delays.count % 64 == 0 || delays.count < 64 {
                let sorted = delays.sorted()
                counters.store(Cell.jitterP95Ms.rawValue, sorted[min(sorted.count - 1, sorted.count * 95 / 100)] - sorted[0])
            }
        }
        let now = MonotonicClock.nanoseconds()
        push(Pending(due: now + UInt64(delay * 1e6), order: order, bytes: bytes, toTargets: toTargets))
        order += 1
        if let duplicate = decision.duplicateDelayMs {
            push(Pending(due: now + UInt64(duplicate * 1e6), order: order, bytes: bytes, toTargets: toTargets))
            order += 1
            if toTargets { count(.duplicated) }
        }
    }

    private func deliverDue(_ now: UInt64) {
        while let first = queue.first, first.due <= now {
            let packet = popFirst()
            if packet.toTargets {
                for target in targets { back.send(packet.bytes, to: target) }
                count(.forwarded)
            } else if let client {
                front.send(packet.bytes, to: client)
                count(.returned)
            }
        }
    }

    // MARK: Heap

    private func before(_ a: Pending, _ b: Pending) -> Bool { a.due != b.due ? a.due < b.due : a.order < b.order }

    private func push(_ p: Pending) {
        guard queue.count < Self.maxQueued else {
            count(p.toTargets ? .dropped : .returnDropped)
            return
        }
        queue.append(p)
        var i = queue.count - 1
        while i > 0 {
            let parent = (i - 1) / 2
            guard before(queue[i], queue[parent]) else { break }
            queue.swapAt(i, parent)
            i = parent
        }
    }

    private func popFirst() -> Pending {
        let first = queue[0]
        let last = queue.removeLast()
        if !queue.isEmpty {
            queue[0] = last
            var i = 0
            while true {
                let l = 2 * i + 1, r = l + 1
                var smallest = i
                if l < queue.count, before(queue[l], queue[smallest]) { smallest = l }
                if r < queue.count, before(queue[r], queue[smallest]) { smallest = r }
                if smallest == i { break }
                queue.swapAt(i, smallest)
                i = smallest
            }
        }
        return first
    }
}
