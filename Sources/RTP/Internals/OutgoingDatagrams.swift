import Platform
import Synchronization

/// RTP datagrams the I/O thread hands to the network thread to protect (SRTP) and send: a
/// lock-free single-producer single-consumer ring of preallocated slots, each with room for the
/// SRTP trailer.
///
/// Why not protect on the I/O thread: Debian's libsrtp2 runs its ciphers through NSS, which
/// allocates and locks on every packet (Docs/srtp.md). The I/O thread copies the packet into a
/// slot and wakes the network thread, as WebRTC's send path moves packets to its network thread.
///
/// Indices only grow, as in ``RTPPacketRing``; a push into a full ring fails and the packet is
/// lost (the caller counts it): the I/O thread never waits.
///
/// Thread safety: ``push(_:to:)`` from one producer thread (the I/O thread), ``pop(_:)`` from
/// one consumer thread (the network thread). Neither allocates, locks or blocks.
final class OutgoingDatagrams: Sendable {
    let slotSize: Int
    let capacity: Int
    private nonisolated(unsafe) let bytes: UnsafeMutableRawBufferPointer
    private nonisolated(unsafe) let lengths: UnsafeMutableBufferPointer<Int>
    private nonisolated(unsafe) let destinations: UnsafeMutableBufferPointer<SocketAddress?>
    private let head = Atomic<Int>(0)  // next slot to pop (consumer's)
    private let tail = Atomic<Int>(0)  // next slot to push (producer's)
    /// Wakes the network thread when a datagram is queued.
    let wake: WakeEvent

    /// - Parameter capacity: slots, a power of two.
    /// - Parameter slotSize: bytes per slot: the largest packet plus the trailer protection adds.
    init(capacity: Int = 32, slotSize: Int) throws(SocketError) {
        precondition(capacity > 0 && capacity & (capacity - 1) == 0, "capacity must be a power of two")
        self.capacity = capacity
        // Slots start 16-byte aligned: libsrtp reads headers as 32-bit words.
        self.slotSize = (slotSize + 15) & ~15
        bytes = .allocate(byteCount: capacity * self.slotSize, alignment: 16)
        lengths = .allocate(capacity: capacity)
        lengths.initialize(repeating: 0)
        destinations = .allocate(capacity: capacity)
        destinations.initialize(repeating: nil)
        wake = try WakeEvent()
    }

    deinit {
        bytes.deallocate()
        lengths.deallocate()
        destinations.deinitialize()
        destinations.deallocate()
    }

    private func slot(_ index: Int) -> UnsafeMutableRawBufferPointer {
        let start = (index & (capacity - 1)) * slotSize
        return UnsafeMutableRawBufferPointer(rebasing: bytes[start..<(start + slotSize)])
    }

    /// Queues `datagram` for `destination` and wakes the network thread; false when the ring is
    /// full or the datagram does not fit a slot (nothing queued).
    func push(_ datagram: UnsafeRawBufferPointer, to destination: SocketAddress) -> Bool {
        let t = tail.load(ordering: .relaxed)
        guard datagram.count <= slotSize, t - head.load(ordering: .acquiring) < capacity else { return false }
        let target = slot(t)
        target.copyMemory(from: datagram)
        lengths[t & (capacity - 1)] = datagram.count
        destinations[t & (capacity - 1)] = destination
        tail.store(t + 1, ordering: .releasing)
        wake.signal()
        return true
    }

    /// Hands the oldest datagram (its slot, its length and destination) to `body`, which may
    /// change it in place, then frees the slot; false when the ring is empty.
    func pop(_ body: (UnsafeMutableRawBufferPointer, Int, SocketAddress) -> Void) -> Bool {
        let h = head.load(ordering: .relaxed)
        guard h < tail.load(ordering: .acquiring) else { return false }
        if let destination = destinations[h & (capacity - 1)] { body(slot(h), lengths[h & (capacity - 1)], destination) }
        head.store(h + 1, ordering: .releasing)
        return true
    }
}
