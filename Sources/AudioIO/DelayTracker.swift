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
/// A real step is followed within a tenth of a second: readings that all leave that band on
/// the same side, for ``stepReadings`` in a row, start the window over from them. Waiting for
/// the median would take over half a window, and longer for a small step: the readings on
/// both sides of it widen the interquartile range, and with it the band. A PipeWire graph
/// whose quantum changes under the stream (another client asking for a shorter latency)
/// moves the round trip by a few milliseconds; followed after 0.7 s, the echo canceller's
/// reference sat before the echo for that long, and its filter took 4 s to recover.
///
/// Thread safety: used by the I/O thread only; no method allocates after init.
struct DelayTracker: ~Copyable {
    private let window: UnsafeMutableBufferPointer<Int>
    private let scratch: UnsafeMutableBufferPointer<Int>
    private var count = 0
    private var next = 0
    /// Readings that make up a second at the current period (at most the capacity).
    private var length: Int
    /// The round trip reported, and the spread of the readings behind it.
    private var held: Int?
    private(set) var jitter = 0
    /// The narrowest band the median may move in without moving the report, in frames.
    let minimumBand: Int
    /// Readings in a row outside the band, on one side, that make a step: a tenth of a second.
    private(set) var stepReadings: Int
    /// Readings in a row that have left the band, and the band they left (fixed while they
    /// come in: they widen the spread themselves).
    private var run = 0
    private var runBand = 0
    private var runSide = 0
    /// The band a step left, which holds the report until the window is whole again.
    private var refillBand: Int?

    /// - Parameters:
    ///   - capacity: readings kept (one per period).
    ///   - minimumBand: frames the median may move without moving the report (a millisecond or so).
    init(capacity: Int, minimumBand: Int = 48) {
        length = max(1, capacity)
        self.minimumBand = minimumBand
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
        refillBand = nil
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
        let stepped = countStep(frames)
        if stepped { restart(keepingLast: run) }
        sortWindow()
        let median = scratch[count / 2]
        jitter = scratch[count * 3 / 4] - scratch[count / 4]
        if count == length { refillBand = nil }
        if !stepped, let current = held {
            // Until a whole window is in again after a step, the band the step left holds the
            // report (the few readings since say little about their spread); at the start and
            // after a reset, the median itself: a first reading may be an outlier.
            if let band = count == length ? max(minimumBand, 2 * jitter) : refillBand, abs(median - current) <= band {
                return current
            }
        }
        held = median
        return median
    }

    /// Counts `frames` into the run of readings outside the band around the report; true once
    /// the run is a step.
    private mutating func countStep(_ frames: Int) -> Bool {
        // Only against a whole window's spread: a few readings say little about the jitter.
        guard let current = held, count == length else { return false }
        if run == 0 { runBand = max(minimumBand, 2 * jitter) }
        let side = frames > current + runBand ? 1 : frames < current - runBand ? -1 : 0
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
        refillBand = runBand
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
