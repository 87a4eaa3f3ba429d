import Synchronization

/// A received RTP packet's facts as the network thread hands them to the I/O thread.
///
/// Thread safety: a value type; safe to use from any thread.
public struct RTPReceivedPacket: Sendable, Equatable {
    /// The sequence number extended with its wrap-arounds (RFC 3550 A.1).
    public var sequenceNumber: Int64
    public var timestamp: UInt32
    public var marker: Bool
    public var ssrc: UInt32
    /// Arrival time on the monotonic clock, in nanoseconds.
    public var arrival: UInt64
    /// Increments each time the validated source changes (new SSRC or address):
    /// the jitter buffer starts over when it sees a new value.
    public var sourceGeneration: UInt32
    /// The payload is a telephone event (RFC 4733), not audio: it takes a sequence number of
    /// the stream but plays nothing.
    public var isTelephoneEvent: Bool
    /// The payload is a comfort-noise descriptor (RFC 3389): the sender's silence, at a level.
    public var isComfortNoise: Bool

    public init(sequenceNumber: Int64, timestamp: UInt32, marker: Bool = false, ssrc: UInt32 = 0, arrival: UInt64,
                sourceGeneration: UInt32 = 0, isTelephoneEvent: Bool = false, isComfortNoise: Bool = false) {
        self.sequenceNumber = sequenceNumber
        self.timestamp = timestamp
        self.marker = marker
        self.ssrc = ssrc
        self.arrival = arrival
        self.sourceGeneration = sourceGeneration
        self.isTelephoneEvent = isTelephoneEvent
        self.isComfortNoise = isComfortNoise
    }
}

/// A lock-free single-producer single-consumer ring of preallocated packet slots:
/// the network thread pushes validated packets, the I/O thread pops them into the
/// jitter buffer.
///
/// Indices only grow (as in PipeWire's `spa_ringbuffer`); the fill level is
/// `tail - head`. The producer publishes a slot with a release store of `tail`,
/// the consumer frees it with a release store of `head`. A push into a full ring
/// drops the packet and counts an overrun: the network side never waits.
///
/// Thread safety: ``push(_:payload:)`` from one producer thread, ``pop(_:)`` from one
/// consumer thread, the counters from any thread. Neither side allocates, locks or
/// blocks (real-time safe). Each side checks at run time that it is not entered by
/// two threads at once.
public final class RTPPacketRing: @unchecked Sendable {
    // @unchecked: the slots are plain memory shared between exactly two threads; the
    // acquire/release pairs on `head` and `tail` order every slot access, and the
    // `producing`/`consuming` flags trap if either side is used concurrently.

    /// Slots (a power of two).
    public let capacity: Int
    /// The largest payload a slot holds, in bytes.
    public let maxPayloadSize: Int

    private let packets: UnsafeMutablePointer<RTPReceivedPacket>
    private let lengths: UnsafeMutablePointer<Int>
    private let payloads: UnsafeMutableRawPointer
    private let head = Atomic<Int>(0)
    private let tail = Atomic<Int>(0)
    private let overrunCount = Atomic<Int>(0)
    private let producing = Atomic<Bool>(false)
    private let consuming = Atomic<Bool>(false)

    /// Creates a ring; allocates every slot now.
    ///
    /// - Precondition: `capacity` is a power of two, at least 2.
    public init(capacity: Int = 64, maxPayloadSize: Int = 1500) {
        precondition(capacity >= 2 && capacity & (capacity - 1) == 0, "capacity must be a power of two")
        precondition(maxPayloadSize > 0)
        self.capacity = capacity
        self.maxPayloadSize = maxPayloadSize
        packets = .allocate(capacity: capacity)
        packets.initialize(repeating: RTPReceivedPacket(sequenceNumber: 0, timestamp: 0, arrival: 0), count: capacity)
        lengths = .allocate(capacity: capacity)
        lengths.initialize(repeating: 0, count: capacity)
        payloads = .allocate(byteCount: capacity * maxPayloadSize, alignment: 16)
    }

    deinit {
        packets.deinitialize(count: capacity)
        packets.deallocate()
        lengths.deallocate()
        payloads.deallocate()
    }

    /// Packets waiting (a snapshot; exact on either side's own thread).
    public var count: Int { tail.load(ordering: .acquiring) - head.load(ordering: .acquiring) }

    /// Packets dropped because the ring was full.
    public var overruns: Int { overrunCount.load(ordering: .relaxed) }

    /// Copies a packet into the next free slot.
    ///
    /// - Returns: false, counting an overrun, when the ring is full.
    /// - Precondition: `payload.count <= maxPayloadSize`.
    ///
    /// Thread safety: producer side only.
    @discardableResult
    public func push(_ packet: RTPReceivedPacket, payload: UnsafeRawBufferPointer) -> Bool {
        precondition(!producing.exchange(true, ordering: .acquiring), "RTPPacketRing.push entered from two threads")
        defer { producing.store(false, ordering: .releasing) }
        precondition(payload.count <= maxPayloadSize, "payload larger than a slot")
        let t = tail.load(ordering: .relaxed)
        guard t - head.load(ordering: .acquiring) < capacity else {
            overrunCount.add(1, ordering: .relaxed)
            return false
        }
        let slot = t & (capacity - 1)
        packets[slot] = packet
        lengths[slot] = payload.count
        if let base = payload.baseAddress, payload.count > 0 {
            (payloads + slot * maxPayloadSize).copyMemory(from: base, byteCount: payload.count)
        }
        tail.store(t + 1, ordering: .releasing)
        return true
    }

    /// Hands the oldest packet to `body`, then frees its slot.
    ///
    /// The payload pointer is valid only inside `body`.
    /// - Returns: false when the ring is empty.
    ///
    /// Thread safety: consumer side only.
    @discardableResult
    public func pop<E: Error>(_ body: (RTPReceivedPacket, UnsafeRawBufferPointer) throws(E) -> Void) throws(E) -> Bool {
        precondition(!consuming.exchange(true, ordering: .acquiring), "RTPPacketRing.pop entered from two threads")
        defer { consuming.store(false, ordering: .releasing) }
        let h = head.load(ordering: .relaxed)
        guard tail.load(ordering: .acquiring) != h else { return false }
        let slot = h & (capacity - 1)
        defer { head.store(h + 1, ordering: .releasing) }
        try body(packets[slot], UnsafeRawBufferPointer(start: payloads + slot * maxPayloadSize, count: lengths[slot]))
        return true
    }
}
