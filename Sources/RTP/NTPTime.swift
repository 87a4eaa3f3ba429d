import Platform
import Glibc
import Opus

/// A 64-bit NTP timestamp (RFC 3550 section 4): seconds since 1 January 1900 and a
/// binary fraction of a second.
///
/// Thread safety: a value type; safe to use from any thread.
public struct NTPTimestamp: Sendable, Equatable, Hashable {
    /// Seconds from 1900 to the Unix epoch (1970).
    public static let unixEpochOffset: UInt64 = 2_208_988_800

    public var seconds: UInt32
    public var fraction: UInt32

    public init(seconds: UInt32, fraction: UInt32) {
        self.seconds = seconds
        self.fraction = fraction
    }

    /// The timestamp of a Unix time in nanoseconds.
    public init(unixNanoseconds: UInt64) {
        let secs = unixNanoseconds / 1_000_000_000
        let nanos = unixNanoseconds % 1_000_000_000
        seconds = UInt32(truncatingIfNeeded: secs + Self.unixEpochOffset)
        fraction = UInt32((nanos << 32) / 1_000_000_000)
    }

    /// The 64 bits as one number.
    public var rawValue: UInt64 { UInt64(seconds) << 32 | UInt64(fraction) }

    /// The middle 32 bits (16.16 fixed point seconds), as in LSR and DLSR.
    public var middle32: UInt32 { UInt32(truncatingIfNeeded: rawValue >> 16) }

    /// The wall clock now (`CLOCK_REALTIME`).
    ///
    /// Thread safety: safe from any thread; does not allocate.
    public static func now() -> NTPTimestamp { NTPTimestamp(unixNanoseconds: WallClock.nanoseconds()) }
}

/// Round-trip time from a report block (RFC 3550 section 6.4.1).
///
/// Thread safety: stateless; safe from any thread.
public enum RoundTripTime {
    /// `arrival - LSR - DLSR`, all in 1/65536 s (the middle 32 bits of NTP timestamps).
    ///
    /// - Parameters:
    ///   - arrival: when the report block arrived, as the middle 32 bits of an NTP timestamp.
    ///   - lastSenderReport: the block's LSR: the middle 32 bits of our last SR's NTP timestamp.
    ///   - delaySinceLastSenderReport: the block's DLSR, in 1/65536 s.
    /// - Returns: the round trip in 1/65536 s; `nil` when no SR was received yet (LSR 0)
    ///   or the result would be negative (clocks inconsistent).
    public static func compute(arrival: UInt32, lastSenderReport: UInt32, delaySinceLastSenderReport: UInt32) -> UInt32? {
        guard lastSenderReport != 0 else { return nil }
        let sinceSent = arrival &- lastSenderReport
        guard sinceSent < 0x8000_0000, sinceSent >= delaySinceLastSenderReport else { return nil }
        return sinceSent - delaySinceLastSenderReport
    }

    /// Converts 1/65536 s units to seconds.
    public static func seconds(_ units: UInt32) -> Double { Double(units) / 65536 }
}

/// Conversions between the stack's clocks and RTP clock units.
///
/// Thread safety: stateless; safe from any thread; does not allocate (real-time safe).
public enum RTPClock {
    /// Milliseconds in `units` of the Opus RTP clock (``OpusCallConfiguration/rtpClockRate``):
    /// statistics and delays count in those units.
    @inline(__always)
    static func milliseconds(rtpUnits units: Int) -> Double {
        Double(units) / Double(OpusCallConfiguration.rtpClockRate / 1000)
    }

    /// A time in nanoseconds expressed in an RTP clock at `rate` Hz, modulo 2^32.
    public static func rtpUnits(nanoseconds: UInt64, rate: Int) -> UInt32 {
        let product = nanoseconds.multipliedFullWidth(by: UInt64(rate))
        let (quotient, _) = UInt64(1_000_000_000).dividingFullWidth(product)
        return UInt32(truncatingIfNeeded: quotient)
    }
}
