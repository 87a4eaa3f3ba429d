import Synchronization

/// A lock-free single-producer single-consumer ring of `Element`s.
///
/// Capacity is a power of two. The indices only grow (wrapping at `UInt.max`); the
/// fill level is their difference, so the ring is never ambiguous between full
/// and empty (the scheme of PipeWire's `spa_ringbuffer`). Writes publish with
/// release ordering and reads observe with acquire ordering, so the consumer
/// never sees an element before it was written.
///
/// Writes that do not fit and reads that find too little are counted as
/// ``overruns`` and ``underruns``.
///
/// Thread safety: exactly one thread may call the producer methods (``write(_:)``,
/// ``availableToWrite``) and exactly one other thread the consumer methods
/// (``read(into:)``, ``discard(_:)``, ``availableToRead``), at the same time. The
/// counters may be read from any thread. No method allocates, locks or blocks.
public final class SPSCRing<Element: BitwiseCopyable>: @unchecked Sendable {
    // @unchecked: the storage is shared between the two sides, and the atomics below
    // order every access to it (each slot is touched by one side at a time).
    private let storage: UnsafeMutableBufferPointer<Element>
    private let mask: UInt
    private let writeIndex = Atomic<UInt>(0)
    private let readIndex = Atomic<UInt>(0)
    private let overrunCount = Atomic<Int>(0)
    private let underrunCount = Atomic<Int>(0)

    /// Elements the ring holds at most.
    public let capacity: Int

    /// Creates a ring holding at least `minimumCapacity` elements (rounded up to a power of two).
    public init(minimumCapacity: Int, zero: Element) {
        precondition(minimumCapacity > 0, "a ring needs room for at least one element")
        var capacity = 1
        while capacity < minimumCapacity { capacity <<= 1 }
        self.capacity = capacity
        mask = UInt(capacity - 1)
        storage = .allocate(capacity: capacity)
        storage.initialize(repeating: zero)
    }

    deinit { storage.deallocate() }

    // MARK: Producer side

    /// Free slots: how many elements a write can take now (producer side).
    public var availableToWrite: Int {
        capacity - Int(writeIndex.load(ordering: .relaxed) &- readIndex.load(ordering: .acquiring))
    }

    /// Appends as many of `elements` as fit; counts an overrun if not all did (producer side).
    /// - Returns: the number written.
    @discardableResult
    public func write(_ elements: UnsafeBufferPointer<Element>) -> Int {
        let w = writeIndex.load(ordering: .relaxed)
        let free = capacity - Int(w &- readIndex.load(ordering: .acquiring))
        let n = min(free, elements.count)
        if n < elements.count { overrunCount.add(1, ordering: .relaxed) }
        guard n > 0 else { return 0 }
        let start = Int(w & mask)
        let first = min(n, capacity - start)
        _ = UnsafeMutableBufferPointer(rebasing: storage[start..<(start + first)])
            .update(fromContentsOf: UnsafeBufferPointer(rebasing: elements[0..<first]))
        if first < n {
            _ = UnsafeMutableBufferPointer(rebasing: storage[0..<(n - first)])
                .update(fromContentsOf: UnsafeBufferPointer(rebasing: elements[first..<n]))
        }
        writeIndex.store(w &+ UInt(n), ordering: .releasing)
        return n
    }

    // MARK: Consumer side

    /// Elements ready to read (consumer side).
    public var availableToRead: Int {
        Int(writeIndex.load(ordering: .acquiring) &- readIndex.load(ordering: .relaxed))
    }

    /// Takes up to `buffer.count` elements; counts an underrun if fewer were ready (consumer side).
    /// - Returns: the number read; the rest of `buffer` is left as it was.
    @discardableResult
    public func read(into buffer: UnsafeMutableBufferPointer<Element>) -> Int {
        let r = readIndex.load(ordering: .relaxed)
        let ready = Int(writeIndex.load(ordering: .acquiring) &- r)
        let n = min(ready, buffer.count)
        if n < buffer.count { underrunCount.add(1, ordering: .relaxed) }
        guard n > 0 else { return 0 }
        let start = Int(r & mask)
        let first = min(n, capacity - start)
        _ = UnsafeMutableBufferPointer(rebasing: buffer[0..<first])
            .update(fromContentsOf: UnsafeBufferPointer(rebasing: storage[start..<(start + first)]))
        if first < n {
            _ = UnsafeMutableBufferPointer(rebasing: buffer[first..<n])
                .update(fromContentsOf: UnsafeBufferPointer(rebasing: storage[0..<(n - first)]))
        }
        readIndex.store(r &+ UInt(n), ordering: .releasing)
        return n
    }

    /// Drops up to `count` elements without reading them (consumer side).
    /// - Returns: the number dropped.
    @discardableResult
    public func discard(_ count: Int) -> Int {
        let r = readIndex.load(ordering: .relaxed)
        let n = min(count, Int(writeIndex.load(ordering: .acquiring) &- r))
        readIndex.store(r &+ UInt(max(n, 0)), ordering: .releasing)
        return max(n, 0)
    }

    // MARK: Counters (any thread)

    /// Writes that did not fit whole.
    public var overruns: Int { overrunCount.load(ordering: .relaxed) }
    /// Reads that found fewer elements than asked for.
    public var underruns: Int { underrunCount.load(ordering: .relaxed) }
}
