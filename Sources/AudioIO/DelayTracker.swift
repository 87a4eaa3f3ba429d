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
/// A device whose readings are exact (PipeWire's own plugin, whose readings differ by a
/// frame) has a real step followed within a tenth or a fifth of a second: when
/// ``stepReadings`` of the last fifth of a second's readings leave the band on the same side
/// and lie within a frame of each other, on a device a third or more of whose readings lie
/// within a frame of the one before, the window starts over from them and holds them against
/// the band at once. Waiting for the median would take over half a window, and longer for a
/// small step, whose readings on both sides widen the interquartile range and with it the band. A PipeWire graph whose quantum
/// changes under the stream (another client asking for a shorter latency, or a loaded server
/// for a longer one) moves the round trip by 256 frames or more with no xrun, at times back
/// and forth within a second; while the report lags, the echo comes before the echo
/// canceller's reference. Only some of the recent readings need be at the new level, because
/// an I/O thread preempted between its two delay calls reads the time it lost into one of
/// them: through PipeWire's plugin a tenth to a third of the readings come out 10 to 600
/// frames long on a busy machine. Within a frame is strict enough that readings which scatter
/// or wander never make a step (PulseAudio's scatter by milliseconds at random; the `pulse`
/// plugin on pipewire-pulse ramps by a frame a reading or jumps by tens): there, what moves
/// is mostly the server's estimate, and the median's rule holds the report.
///
/// Thread safety: used by the I/O thread only; no method allocates after init.
struct DelayTracker: ~Copyable {
    private let window: UnsafeMutableBufferPointer<Int>
    private let scratch: UnsafeMutableBufferPointer<Int>
    private var count = 0
    private var next = 0
    /// Readings that make up a second at the current period (at most the capacity).
    private var length: Int
    /// The round trip reported, and the interquartile spread of the readings behind it.
    private var held: Int?
    private(set) var jitter = 0
    /// The narrowest band the median may move in without moving the report, in frames.
    let minimumBand: Int
    /// Whether the window started over from a step (its readings are then trusted from the first).
    private var stepped = false
    /// Readings at a new level that make a step: a tenth of a second's, found among the last
    /// fifth of a second's.
    private var stepReadings: Int

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
        stepped = false
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
        followStep(frames)
        sortWindow()
        let median = scratch[count / 2]
        jitter = scratch[count * 3 / 4] - scratch[count / 4]
        // Until a whole window is in, the median itself, as a first reading may be an outlier;
        // but a window started from a step's readings holds from the first.
        if count == length || stepped, let current = held, abs(median - current) <= max(minimumBand, 2 * jitter) { return current }
        held = median
        return median
    }

    /// Restarts the window from an exact device's step, if the readings up to `frames` make
    /// one (see the type's description).
    private mutating func followStep(_ frames: Int) {
        guard let current = held, abs(frames - current) > minimumBand, readingsAreExact(),
              let level = newLevel(around: current) else { return }
        // The step's readings, oldest first, become the window.
        var kept = 0
        for k in (0..<recent).reversed() {
            let v = reading(k)
            if level.contains(v) {
                scratch[kept] = v
                kept += 1
            }
        }
        for k in 0..<kept { window[k] = scratch[k] }
        count = kept
        next = kept % length
        stepped = true
    }

    /// Whether a third or more of the readings kept lie within a frame of the one before: an
    /// exact device's readings do (most of them, but for preempted ones), PulseAudio's, which
    /// repeat a value now and then, did in at most a quarter (of 160 windows measured).
    private func readingsAreExact() -> Bool {
        var steady = 0
        for k in 1..<max(1, count) where abs(reading(k) - reading(k - 1)) <= 1 { steady += 1 }
        return 3 * steady >= count - 1
    }

    /// Readings looked at for a step: the last fifth of a second's.
    private var recent: Int { min(count, 2 * stepReadings) }

    /// The `k`th reading back from the newest.
    private func reading(_ k: Int) -> Int { window[(next - 1 - k + 2 * length) % length] }

    /// The two frames holding the most recent readings outside the band around `current`, if
    /// they hold ``stepReadings`` of them or more.
    private func newLevel(around current: Int) -> ClosedRange<Int>? {
        var m = 0
        for k in 0..<recent where abs(reading(k) - current) > minimumBand {
            insertSorted(reading(k), count: m)
            m += 1
        }
        var best = 0, low = 0, j = 0
        for i in 0..<m {
            while j < m, scratch[j] - scratch[i] <= 1 { j += 1 }
            if j - i > best { (best, low) = (j - i, scratch[i]) }
        }
        return best >= stepReadings ? low...(low + 1) : nil
    }

    /// Inserts `value` into the first `count` entries of `scratch`, kept sorted (`scratch` is
    /// rebuilt by ``sortWindow()`` after each reading).
    private func insertSorted(_ value: Int, count: Int) {
        var j = count
        while j > 0, scratch[j - 1] > value {
            scratch[j] = scratch[j - 1]
            j -= 1
        }
        scratch[j] = value
    }

    /// Sorts the readings kept into `scratch`: an insertion sort of at most a second of
    /// readings, with no allocation, and cheap at 50 elements.
    private func sortWindow() {
        for i in 0..<count { insertSorted(window[i], count: i) }
    }
}
