import CAllocationCounter

/// Heap allocations counted by the test process's malloc interposer.
///
/// Thread safety: safe from any thread, including a real-time one: reading the
/// counters neither allocates nor locks.
public enum AllocationCounter {
    /// Allocations made so far by the calling thread.
    @inline(__always)
    public static var thisThread: UInt64 { callaudio_thread_allocation_count() }

    /// Whether the interposer is counting (it must be, or allocation tests prove nothing). It
    /// allocates once to find out: read it outside the stretch being counted.
    public static var isActive: Bool { callaudio_allocation_counter_active() != 0 }
}

extension AllocationCounter {
    /// The allocations `run` makes on this thread with a fresh subject from `make`, and that
    /// subject. A first subject runs every path once before: the runtime's one-time work (type
    /// metadata, in a debug build) is not the subject's, and depends on what other tests ran first.
    public static func counted<Subject>(_ make: () -> Subject, _ run: (Subject) -> Void) -> (allocations: UInt64, subject: Subject) {
        run(make())
        let subject = make()
        let before = thisThread
        run(subject)
        return (thisThread - before, subject)
    }
}
