/// Publishes a ``JitterBuffer``'s statistics from the I/O thread to any other.
///
/// The buffer stores into it at the end of every ``JitterBuffer/pull(into:now:)``;
/// anyone reads ``snapshot``. Each field is atomic on its own.
///
/// Thread safety: one writer (the buffer's thread), any number of readers.
/// Publishing does not allocate or lock (real-time safe).
public final class JitterBufferMonitor: Sendable {
    private let cells = AtomicCells(count: 18)

    public init() {}

    /// Stores `s` (the buffer's thread only).
    public func publish(_ s: JitterBufferStatistics) {
        cells.store(0, s.packetsInserted)
        cells.store(1, s.late)
        cells.store(2, s.duplicates)
        cells.store(3, s.lost)
        cells.store(4, s.fecRecovered)
        cells.store(5, s.undecodable)
        cells.store(6, s.overflows)
        cells.store(7, s.resets)
        cells.store(8, s.concealedMs)
        cells.store(9, s.comfortNoiseMs)
        cells.store(10, s.droppedMs)
        cells.store(11, s.stretchedMs)
        cells.store(12, s.currentDelayMs)
        cells.store(13, s.targetDelayMs)
        cells.store(14, s.jitterQuantileMs)
        cells.store(15, s.meanDelayMs)
        cells.store(16, s.bufferedMs)
        cells.store(17, s.timestampJumps)
    }

    /// The latest statistics published.
    public var snapshot: JitterBufferStatistics {
        var s = JitterBufferStatistics()
        s.packetsInserted = cells.int(0)
        s.late = cells.int(1)
        s.duplicates = cells.int(2)
        s.lost = cells.int(3)
        s.fecRecovered = cells.int(4)
        s.undecodable = cells.int(5)
        s.overflows = cells.int(6)
        s.resets = cells.int(7)
        s.concealedMs = cells.double(8)
        s.comfortNoiseMs = cells.double(9)
        s.droppedMs = cells.double(10)
        s.stretchedMs = cells.double(11)
        s.currentDelayMs = cells.double(12)
        s.targetDelayMs = cells.double(13)
        s.jitterQuantileMs = cells.double(14)
        s.meanDelayMs = cells.double(15)
        s.bufferedMs = cells.double(16)
        s.timestampJumps = cells.int(17)
        return s
    }
}
