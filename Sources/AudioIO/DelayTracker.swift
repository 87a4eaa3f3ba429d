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
/// around it, so a wandering report does not drag an echo canceller's alignment along,
/// and a real step is followed within half a window.
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

    /// - Parameters:
    ///   - capacity: readings kept (one per period).
    ///   - minimumBand: frames the median may move without moving the report (a millisecond or so).
    init(capacity: Int, minimumBand: Int = 48) {
        length = max(1, capacity)
        self.minimumBand = minimumBand
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
    }

    /// Forgets all readings and keeps a second of them at the new period (after a device switch;
    /// a device with shorter periods than the first gets what the capacity holds).
    mutating func reset(periodDuration: Double) {
        reset()
        length = min(window.count, max(1, Int((1 / periodDuration).rounded())))
    }

    /// Adds a reading and returns the round trip: the median of the readings kept, once it has
    /// left the band around the value returned before (see the type's description).
    mutating func add(_ frames: Int) -> Int {
        window[next] = frames
        next = (next + 1) % length
        count = min(count + 1, length)
        // Insertion sort of at most a second of readings: no allocation, and cheap at 50 elements.
        for i in 0..<count {
            let v = window[i]
            var j = i
            while j > 0, scratch[j - 1] > v {
                scratch[j] = scratch[j - 1]
                j -= 1
            }
            scratch[j] = v
        }
        let median = scratch[count / 2]
        jitter = scratch[count * 3 / 4] - scratch[count / 4]
        // Until a whole window is in, the median itself: a first reading may be an outlier.
        if count == length, let current = held, abs(median - current) <= max(minimumBand, 2 * jitter) { return current }
        held = median
        return median
    }
}
