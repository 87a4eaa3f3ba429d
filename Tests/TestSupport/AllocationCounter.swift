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
