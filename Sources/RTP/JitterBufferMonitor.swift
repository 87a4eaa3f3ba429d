import Platform

/// Publishes a ``JitterBuffer``'s statistics from the I/O thread to any other.
///
/// The buffer stores into it at the end of every ``JitterBuffer/pull(into:now:)``;
/// anyone reads ``snapshot``. Each field is atomic on its own.
///
/// Thread safety: one writer (the buffer's thread), any number of readers.
/// Publishing does not allocate or lock (real-time safe).
public final class JitterBufferMonitor: Sendable {
    /// One atomic cell per field of ``JitterBufferStatistics``.
    private enum Cell: Int, CaseIterable {
        case packetsInserted, late, duplicates, lost, fecRecovered, undecodable, overflows, resets, timestampJumps
        case concealedMs, concealedWithoutLossMs, comfortNoiseMs, droppedMs, stretchedMs, currentDelayMs, targetDelayMs, jitterQuantileMs
        case meanDelayMs, bufferedMs
    }

    private let cells = AtomicCells(count: Cell.allCases.count)

    public init() {}

    @inline(__always) private func set(_ c: Cell, _ v: Int) { cells.store(c.rawValue, v) }
    @inline(__always) private func set(_ c: Cell, _ v: Double) { cells.store(c.rawValue, v) }
    @inline(__always) private func int(_ c: Cell) -> Int { cells.int(c.rawValue) }
    @inline(__always) private func double(_ c: Cell) -> Double { cells.double(c.rawValue) }

    /// Stores `s` (the buffer's thread only).
    public func publish(_ s: JitterBufferStatistics) {
        set(.packetsInserted, s.packetsInserted)
        set(.late, s.late)
        set(.duplicates, s.duplicates)
        set(.lost, s.lost)
        set(.fecRecovered, s.fecRecovered)
        set(.undecodable, s.undecodable)
        set(.overflows, s.overflows)
        set(.resets, s.resets)
        set(.timestampJumps, s.timestampJumps)
        set(.concealedMs, s.concealedMs)
        set(.concealedWithoutLossMs, s.concealedWithoutLossMs)
        set(.comfortNoiseMs, s.comfortNoiseMs)
        set(.droppedMs, s.droppedMs)
        set(.stretchedMs, s.stretchedMs)
        set(.currentDelayMs, s.currentDelayMs)
        set(.targetDelayMs, s.targetDelayMs)
        set(.jitterQuantileMs, s.jitterQuantileMs)
        set(.meanDelayMs, s.meanDelayMs)
        set(.bufferedMs, s.bufferedMs)
    }

    /// The latest statistics published.
    public var snapshot: JitterBufferStatistics {
        var s = JitterBufferStatistics()
        s.packetsInserted = int(.packetsInserted)
        s.late = int(.late)
        s.duplicates = int(.duplicates)
        s.lost = int(.lost)
        s.fecRecovered = int(.fecRecovered)
        s.undecodable = int(.undecodable)
        s.overflows = int(.overflows)
        s.resets = int(.resets)
        s.timestampJumps = int(.timestampJumps)
        s.concealedMs = double(.concealedMs)
        s.concealedWithoutLossMs = double(.concealedWithoutLossMs)
        s.comfortNoiseMs = double(.comfortNoiseMs)
        s.droppedMs = double(.droppedMs)
        s.stretchedMs = double(.stretchedMs)
        s.currentDelayMs = double(.currentDelayMs)
        s.targetDelayMs = double(.targetDelayMs)
        s.jitterQuantileMs = double(.jitterQuantileMs)
        s.meanDelayMs = double(.meanDelayMs)
        s.bufferedMs = double(.bufferedMs)
        return s
    }
}
