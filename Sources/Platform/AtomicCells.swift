import Synchronization

/// A fixed set of 64-bit atomic cells in one allocation: counters and measurements
/// one thread publishes and any thread reads, without locks or allocation.
///
/// Each cell is atomic on its own; a reader may see cells from two different
/// publications (a snapshot is not one instant), which is fine for statistics.
package final class AtomicCells: @unchecked Sendable {
    // @unchecked: the memory is only reached through `Atomic` operations.
    private let base: UnsafeMutablePointer<Atomic<UInt64>>
    package let count: Int

    package init(count: Int) {
        self.count = count
        base = .allocate(capacity: count)
        for i in 0..<count { (base + i).initialize(to: Atomic<UInt64>(0)) }
    }

    deinit {
        base.deinitialize(count: count)
        base.deallocate()
    }

    @inline(__always) package func store(_ index: Int, _ value: Int) {
        base[index].store(UInt64(bitPattern: Int64(value)), ordering: .relaxed)
    }

    @inline(__always) package func store(_ index: Int, _ value: Double) {
        base[index].store(value.bitPattern, ordering: .relaxed)
    }

    @inline(__always) package func add(_ index: Int, _ value: Int) {
        base[index].add(UInt64(bitPattern: Int64(value)), ordering: .relaxed)
    }

    @inline(__always) package func int(_ index: Int) -> Int { Int(Int64(bitPattern: base[index].load(ordering: .relaxed))) }

    @inline(__always) package func double(_ index: Int) -> Double { Double(bitPattern: base[index].load(ordering: .relaxed)) }

    /// Stores with release ordering: a reader that sees it with ``loadAcquiring(_:)`` sees every store before it.
    @inline(__always) package func storeReleasing(_ index: Int, _ value: Int) {
        base[index].store(UInt64(bitPattern: Int64(value)), ordering: .releasing)
    }

    @inline(__always) package func loadAcquiring(_ index: Int) -> Int {
        Int(Int64(bitPattern: base[index].load(ordering: .acquiring)))
    }
}
