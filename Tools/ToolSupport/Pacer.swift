#if canImport(Glibc)
import Glibc
#endif
import Platform

/// Periodic work on the monotonic clock with absolute deadlines (no drift), as a sound card paces.
package enum Pacer {
    /// Sleeps until `deadline` (monotonic nanoseconds, ``Platform/MonotonicClock/nanoseconds()``).
    package static func sleep(until deadline: UInt64) {
        var ts = timespec(tv_sec: Int(deadline / 1_000_000_000), tv_nsec: Int(deadline % 1_000_000_000))
        while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nil) == EINTR {}
    }

    /// Calls `body(tick, now)` every `periodMs` for `seconds`; returns the nanoseconds it took.
    package static func run(seconds: Double, periodMs: Int, _ body: (Int, UInt64) -> Void) -> UInt64 {
        let period = UInt64(periodMs) * 1_000_000
        let ticks = Int((seconds * 1000 / Double(periodMs)).rounded(.up))
        let start = MonotonicClock.nanoseconds()
        for tick in 0..<ticks {
            sleep(until: start + UInt64(tick) * period)
            body(tick, MonotonicClock.nanoseconds())
        }
        return MonotonicClock.nanoseconds() - start
    }
}
