#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The one monotonic clock of the stack (`CLOCK_MONOTONIC`, in nanoseconds): the I/O thread's
/// cycle times, packet arrival times, playout and pacing all read it, so their instants compare.
///
/// Thread safety: stateless; safe from any thread; does not allocate (real-time safe).
public enum MonotonicClock {
    @inline(__always)
    public static func nanoseconds() -> UInt64 { read(CLOCK_MONOTONIC) }
}

/// The wall clock (`CLOCK_REALTIME`, nanoseconds since the Unix epoch): only for timestamps
/// another host reads, such as NTP times in RTCP sender reports. Never for durations.
///
/// Thread safety: stateless; safe from any thread; does not allocate (real-time safe).
public enum WallClock {
    public static func nanoseconds() -> UInt64 { read(CLOCK_REALTIME) }
}

@inline(__always)
private func read(_ clock: clockid_t) -> UInt64 {
    var ts = timespec()
    clock_gettime(clock, &ts)
    return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
}
