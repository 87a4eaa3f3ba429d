/// The device round trip, smoothed: the median over the last second of
/// (period + playback delay + capture delay).
///
/// Per-period delay readings jitter by a few milliseconds on servers that move
/// audio in blocks (PulseAudio's reports scatter by +-2.5 ms around a round trip
/// that is in fact constant), while the round trip itself changes only on a
/// device switch or an xrun. A running median removes the jitter and follows a
/// real change within half a window.
///
/// Thread safety: used by the I/O thread only; no method allocates after init.
struct DelayTracker: ~Copyable {
    private let window: UnsafeMutableBufferPointer<Int>
    private let scratch: UnsafeMutableBufferPointer<Int>
    private var count = 0
    private var next = 0
    /// Readings that make up a second at the current period (at most the capacity).
    private var length: Int

    /// - Parameter capacity: readings kept (one per period).
    init(capacity: Int) {
        length = max(1, capacity)
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
    }

    /// Forgets all readings and keeps a second of them at the new period (after a device switch;
    /// a device with shorter periods than the first gets what the capacity holds).
    mutating func reset(periodDuration: Double) {
        reset()
        length = min(window.count, max(1, Int((1 / periodDuration).rounded())))
    }

    /// Adds a reading and returns the median of the readings kept.
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
        return scratch[count / 2]
    }
}
