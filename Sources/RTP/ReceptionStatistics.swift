/// Sequence-number state of one source: RFC 3550 appendix A.1 (validity, probation,
/// wrap-around) and A.3 (expected, lost, fraction lost).
///
/// Create it when a source is first heard, then call ``update(_:)`` for every packet,
/// the first one included: a source is valid only after ``RTPSequenceState/minSequential``
/// packets in sequence; until then ``update(_:)`` returns false.
///
/// Thread safety: a value type; use from one thread. Does not allocate.
public struct RTPSequenceState: Sendable, Equatable {
    /// A jump of this many or more sequence numbers ahead is not accepted at once (A.1 `MAX_DROPOUT`).
    public static let maxDropout: UInt16 = 3000
    /// Packets this far behind the highest one are old duplicates or reordered (A.1 `MAX_MISORDER`).
    public static let maxMisorder: UInt16 = 100
    /// Packets in sequence a new source must send before it is valid (A.1 `MIN_SEQUENTIAL`).
    public static let minSequential = 2
    private static let sequenceModulus: UInt32 = 1 << 16

    /// Highest sequence number seen.
    public private(set) var maxSequence: UInt16
    /// Sequence-number wrap-arounds, shifted: a multiple of 65536.
    public private(set) var cycles: UInt32 = 0
    /// The first sequence number counted (after probation).
    public private(set) var baseSequence: UInt32
    private var badSequence: UInt32 = RTPSequenceState.sequenceModulus + 1
    /// Packets still needed in sequence before the source is valid.
    public private(set) var probation: Int
    /// Valid packets received (duplicates included, as in A.1).
    public private(set) var received: UInt32 = 0
    private var expectedPrior: UInt32 = 0
    private var receivedPrior: UInt32 = 0

    /// A source first heard with `sequence` (A.1: `init_seq`, `max_seq = seq - 1`, `probation = MIN_SEQUENTIAL`).
    public init(firstSequence sequence: UInt16, minSequential: Int = RTPSequenceState.minSequential) {
        maxSequence = sequence &- 1
        baseSequence = UInt32(sequence)
        probation = minSequential
    }

    private mutating func restart(at sequence: UInt16) {
        baseSequence = UInt32(sequence)
        maxSequence = sequence
        badSequence = Self.sequenceModulus + 1
        cycles = 0
        received = 0
        receivedPrior = 0
        expectedPrior = 0
    }

    /// Whether the source has passed probation.
    public var isValid: Bool { probation == 0 }

    /// A.1 `update_seq`: accounts for a packet and says whether it is valid.
    ///
    /// Returns false during probation and for a large jump, which is accepted only
    /// when the next packet follows it (the sender restarted).
    public mutating func update(_ sequence: UInt16) -> Bool {
        let delta = sequence &- maxSequence
        if probation > 0 {
            if sequence == maxSequence &+ 1 {
                probation -= 1
                maxSequence = sequence
                if probation == 0 {
                    restart(at: sequence)
                    received += 1
                    return true
                }
            } else {
                probation = Self.minSequential - 1
                maxSequence = sequence
            }
            return false
        } else if delta < Self.maxDropout {
            // In order, with a permissible gap.
            if sequence < maxSequence { cycles &+= Self.sequenceModulus }
            maxSequence = sequence
        } else if UInt32(delta) <= Self.sequenceModulus - UInt32(Self.maxMisorder) {
            // A very large jump: accept it only if the next packet follows it.
            if UInt32(sequence) == badSequence {
                restart(at: sequence)
            } else {
                badSequence = (UInt32(sequence) + 1) & (Self.sequenceModulus - 1)
                return false
            }
        } else {
            // A duplicate or a reordered packet.
        }
        received &+= 1
        return true
    }

    /// The extended highest sequence number received (A.3 `extended_max`).
    public var extendedMaxSequence: UInt32 { cycles &+ UInt32(maxSequence) }

    /// Extends `sequence` of a valid packet to 64 bits, relative to the highest seen:
    /// correct for packets within 32767 of it, reordered ones across a wrap included.
    public func extended(_ sequence: UInt16) -> Int64 {
        Int64(extendedMaxSequence) + Int64(Int16(bitPattern: sequence &- maxSequence))
    }

    /// Packets expected since the source became valid (A.3).
    public var expected: UInt32 { extendedMaxSequence &- baseSequence &+ 1 }

    /// Cumulative packets lost, clamped to the 24-bit signed range of a report block (A.3).
    public var cumulativeLost: Int32 {
        let lost = Int64(expected) - Int64(received)
        return Int32(max(-0x80_0000, min(0x7F_FFFF, lost)))
    }

    /// Fraction lost since the previous call, in 1/256 (A.3); also starts the next interval.
    public mutating func takeFractionLost() -> UInt8 {
        let expected = self.expected
        let expectedInterval = expected &- expectedPrior
        expectedPrior = expected
        let receivedInterval = received &- receivedPrior
        receivedPrior = received
        let lostInterval = Int64(expectedInterval) - Int64(receivedInterval)
        guard expectedInterval > 0, lostInterval > 0 else { return 0 }
        return UInt8(min(255, (lostInterval << 8) / Int64(expectedInterval)))
    }
}

/// Interarrival jitter, RFC 3550 appendix A.8 (the integer form, kept scaled by 16).
///
/// Thread safety: a value type; use from one thread. Does not allocate.
public struct RTPInterarrivalJitter: Sendable, Equatable {
    private var transit: Int32?
    /// The estimate times 16, in RTP timestamp units.
    public private(set) var scaled: UInt32 = 0

    public init() {}

    /// Accounts for a packet with RTP timestamp `timestamp` that arrived at `arrival`,
    /// both in RTP timestamp units (the arrival clock's origin does not matter).
    public mutating func update(arrival: UInt32, timestamp: UInt32) {
        let t = Int32(bitPattern: arrival &- timestamp)
        defer { transit = t }
        guard let previous = transit else { return }
        let d = Int64(t &- previous).magnitude
        // jitter += |D| - (jitter + 8) / 16, all scaled by 16.
        let next = Int64(scaled) + Int64(d) - ((Int64(scaled) + 8) >> 4)
        scaled = UInt32(clamping: max(0, next))
    }

    /// The jitter in RTP timestamp units, as it goes into a report block.
    public var jitter: UInt32 { scaled >> 4 }
}
