/// The jitter buffer's packets, sorted by timestamp, their payloads in fixed slots: NetEq's
/// packet buffer. Memory is allocated once, in `init`.
///
/// Thread safety: not thread-safe; owned by its jitter buffer. Nothing after `init`
/// allocates, locks or blocks (real-time safe).
struct PacketStore: ~Copyable {
    /// One packet: where it sits on the timeline (48 kHz units, extended to 64 bits) and its payload's slot.
    struct Entry {
        var timestamp: Int64
        var sequence: Int64
        var duration: Int
        var frameDuration: Int
        var length: Int
        var slot: Int
        var hasFEC: Bool
    }

    let capacity: Int
    let maxPayloadSize: Int
    private let entries: UnsafeMutablePointer<Entry>
    private let freeSlots: UnsafeMutablePointer<Int>
    private var freeCount: Int
    private let payloads: UnsafeMutableRawPointer
    private(set) var count = 0

    init(capacity: Int, maxPayloadSize: Int) {
        precondition(capacity > 0 && maxPayloadSize > 0)
        self.capacity = capacity
        self.maxPayloadSize = maxPayloadSize
        entries = .allocate(capacity: capacity)
        freeSlots = .allocate(capacity: capacity)
        for i in 0..<capacity { freeSlots[i] = capacity - 1 - i }
        freeCount = capacity
        payloads = .allocate(byteCount: capacity * maxPayloadSize, alignment: 16)
    }

    deinit {
        entries.deallocate()
        freeSlots.deallocate()
        payloads.deallocate()
    }

    var isEmpty: Bool { count == 0 }
    /// The earliest packet. - Precondition: not empty.
    var first: Entry { entries[0] }
    /// The latest packet. - Precondition: not empty.
    var last: Entry { entries[count - 1] }

    /// Where a packet with this timestamp goes in timestamp order, or nil when one is stored
    /// already. Scans from the newest: packets mostly arrive in order.
    func insertionIndex(for timestamp: Int64) -> Int? {
        var index = count
        while index > 0, entries[index - 1].timestamp >= timestamp {
            if entries[index - 1].timestamp == timestamp { return nil }
            index -= 1
        }
        return index
    }

    /// Stores a packet at `index` (from ``insertionIndex(for:)``), copying its payload; false
    /// when every slot is taken.
    /// - Precondition: nothing was stored or removed since `index` was found; the payload fits a slot.
    mutating func insert(at index: Int, timestamp: Int64, sequence: Int64, duration: Int, frameDuration: Int,
                         hasFEC: Bool, payload: UnsafeRawBufferPointer) -> Bool {
        guard freeCount > 0 else { return false }
        freeCount -= 1
        let slot = freeSlots[freeCount]
        if let base = payload.baseAddress {
            (payloads + slot * maxPayloadSize).copyMemory(from: base, byteCount: payload.count)
        }
        (entries + index + 1).update(from: entries + index, count: count - index)
        entries[index] = Entry(timestamp: timestamp, sequence: sequence, duration: duration,
                               frameDuration: frameDuration, length: payload.count, slot: slot, hasFEC: hasFEC)
        count += 1
        return true
    }

    /// The stored payload of `entry`, valid until the entry is removed.
    func payload(of entry: Entry) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(start: payloads + entry.slot * maxPayloadSize, count: entry.length)
    }

    mutating func removeFirst() {
        release(0)
        count -= 1
        entries.update(from: entries + 1, count: count)
    }

    mutating func removeAll() {
        for i in 0..<count { release(i) }
        count = 0
    }

    private mutating func release(_ index: Int) {
        freeSlots[freeCount] = entries[index].slot
        freeCount += 1
    }
}
