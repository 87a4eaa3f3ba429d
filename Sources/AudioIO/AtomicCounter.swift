import Synchronization

/// An integer one thread updates and any thread reads, without locks.
///
/// Thread safety: safe from any thread; no method allocates or blocks.
final class AtomicCounter: Sendable {
    private let storage = Atomic<Int>(0)

    init() {}

    var value: Int { storage.load(ordering: .relaxed) }

    func set(_ newValue: Int) { storage.store(newValue, ordering: .relaxed) }

    func add(_ delta: Int) { storage.add(delta, ordering: .relaxed) }
}
