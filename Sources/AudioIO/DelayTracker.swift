/// The device round trip, smoothed: the median over the last second of
/// (period + playback delay + capture delay), held until it really moves.
///
/// Per-period delay readings jitter on servers that move audio in blocks (PulseAudio's
/// reports scatter by +-2.5 ms around a round trip that is in fact constant; the `pulse`
/// plugin on pipewire-pulse reports a sawtooth of +-5 ms whose median wanders by +-10 ms
/// while clicks come back after a constant delay), while the round trip itself changes
/// only on a device switch, an xrun or a server that restarts its stream. A running
/// median removes the fast jitter; the value reported moves only when the median leaves
/// a band of twice the readings' interquartile range (at least ``minimumBand`` frames)
/// around it, so a wandering report does not drag an echo canceller's alignment along.
///
/// A device whose readings are exact (the last second's, but for a tenth at either end, within
/// an eighth of ``minimumBand``: PipeWire's own plugin, whose readings differ by a frame) has a
/// real step followed within a tenth of a second: readings that all leave
/// that band on the same side, for ``stepReadings`` in a row, start the window over from them.
/// Waiting for the median would take over half a window, and longer for a small step: the
/// readings on both sides of it widen the interquartile range, and with it the band. A
/// PipeWire graph whose quantum shrinks under the stream (another client asking for a shorter
/// latency) moves the round trip by 5 ms; followed after 0.7 s, the echo came before the echo
/// canceller's reference for that long. Readings that scatter keep the median's rule: what
/// moves there is mostly the server's estimate (PulseAudio's wandered by 15 ms after an xrun
/// on a loaded machine while the clicks came back after a constant delay). Within a whole
/// ``minimumBand`` is not exact enough: the `pulse` plugin on pipewire-pulse has had a second of
/// readings that close while its median wandered by 3 ms, and followed as steps the report
/// moved 38 times in 10 s. The ends are left out because an I/O thread preempted between its
/// two delay calls reads the time it lost into one of them: PipeWire's plugin has had single
/// readings 10 frames off in an idle second, and on a loaded CI machine a quantum change was
/// followed only after 0.8 s, as one such reading in the second before it makes it. The
/// central 80 % of a second's readings spread by 1 frame through PipeWire's plugin, and by 21
/// frames or more through the `pulse` plugin.
///
/// Thread safety: used by the I/O thread only; no method allocates after init.
struct DelayTracker: ~Copyable {
    private let window: UnsafeMutableBufferPointer<Int>
    private let scratch: UnsafeMutableBufferPointer<Int>
    private var count = 0
    private var next = 0
    /// Readings that make up a second at the current period (at most the capacity).
    private var length: Int
    /// The round trip reported, and the spread of the readings behind it (interquartile, and
    /// of the central 80 %).
    private var held: Int?
    private(set) var jitter = 0
    private var spread = 0
    /// The narrowest band the median may move in without moving the report, in frames.
    let minimumBand: Int
    /// The most the last second's central readings may spread for the device to count as exact.
    private let exactSpread: Int
    /// Readings in a row outside the band, on one side, that make a step: a tenth of a second.
    private var stepReadings: Int
    /// Readings in a row that have left the band, and the side they left it on.
    private var run = 0
    private var runSide = 0

    /// - Parameters:
    ///   - capacity: readings kept (one per period).
    ///   - minimumBand: frames the median may move without moving the report (a millisecond or so).
    init(capacity: Int, minimumBand: Int = 48) {
        length = max(1, capacity)
        self.minimumBand = minimumBand
        exactSpread = max(2, minimumBand / 8)
        stepReadings = Self.stepReadings(length: max(1, capacity))
        window = .allocate(capacity: max(1, capacity))
        window.initialize(repeating: 0)
        scratch = .allocate(capacity: max(1, capacity))
        scratch.initialize(repeating: 0)
    }

    deinit {
        window.deallocate()
        scratch.deallocate()
    }

    /// Forgets all readings (after an xrun).
    mutating func reset() {
        count = 0
        next = 0
        held = nil
        jitter = 0
        run = 0
    }

    /// Forgets all readings and keeps a second of them at the new period (after a device switch;
    /// a device with shorter periods than the first gets what the capacity holds).
    mutating func reset(periodDuration: Double) {
        reset()
        length = min(window.count, max(1, Int((1 / periodDuration).rounded())))
        stepReadings = Self.stepReadings(length: length)
    }

    /// A tenth of the window (a second), and never fewer than three readings (nor more than the window).
    private static func stepReadings(length: Int) -> Int { min(length, max(3, length / 10)) }

    /// Adds a reading and returns the round trip: the median of the readings kept, once it has
    /// left the band around the value returned before (see the type's description).
    mutating func add(_ frames: Int) -> Int {
        window[next] = frames
        next = (next + 1) % length
        count = min(count + 1, length)
        if countStep(frames) { restart(keepingLast: run) }
        sortWindow()
        let median = scratch[count / 2]
        jitter = scratch[count * 3 / 4] - scratch[count / 4]
        spread = scratch[count - 1 - count / 10] - scratch[count / 10]
        // Until a whole window is in, the median itself: a first reading may be an outlier.
        if count == length, let current = held, abs(median - current) <= max(minimumBand, 2 * jitter) { return current }
        held = median
        return median
    }

    /// Counts `frames` into the run of readings that leave an exact device's band around the
    /// report; true once the run is a step.
    private mutating func countStep(_ frames: Int) -> Bool {
        // The spread is the last whole window's, before this reading.
        guard let current = held, count == length, run > 0 || spread <= exactSpread else { return false }
        let side = frames > current + minimumBand ? 1 : frames < current - minimumBand ? -1 : 0
        if side == 0 || (run > 0 && side != runSide) {
            run = 0
            return false
        }
        runSide = side
        run += 1
        return run >= stepReadings
    }

    /// Keeps only the last `kept` readings (the step's), as the window's first.
    private mutating func restart(keepingLast kept: Int) {
        for k in 0..<kept { scratch[k] = window[(next - kept + k + length) % length] }
        for k in 0..<kept { window[k] = scratch[k] }
        count = kept
        next = kept % length
        run = 0
    }

    /// Sorts the readings kept into `scratch`: an insertion sort of at most a second of
    /// readings, with no allocation, and cheap at 50 elements.
    private func sortWindow() {
        for i in 0..<count {
            let v = window[i]
            var j = i
            while j > 0, scratch[j - 1] > v {
                scratch[j] = scratch[j - 1]
                j -= 1
            }
            scratch[j] = v
        }
    }
}
