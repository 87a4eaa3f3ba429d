import Synchronization

/// A single-producer, single-consumer ring of mono samples for the uplink: a playback's task
/// writes what the peer should hear next, the I/O thread takes a period's worth each cycle
/// and mixes it into (or puts it in place of) the microphone. Made with the call, so the I/O
/// thread never allocates for it.
///
/// Thread safety: ``pull(into:)`` on the I/O thread only; ``write(_:)`` and ``flush()`` on one
/// other thread at a time (one playback's task, then the next's); the rest from any thread.
final class CallPlaybackRing: @unchecked Sendable {
    // @unchecked: `samples` is written only by the producer ahead of `written` and read only by
    // the consumer behind it; the indexes are atomics (release/acquire).
    private let samples: UnsafeMutableBufferPointer<Int16>
    private let written = Atomic<Int>(0)  // samples written, ever
    private let read = Atomic<Int>(0)     // samples taken, ever
    /// Whether the I/O thread takes from the ring (a playback runs), and how.
    let isOn = Atomic<Bool>(false)
    let replaces = Atomic<Bool>(false)
    /// Set by a new or stopped playback to what was written then: the I/O thread drops what is
    /// queued up to it (it owns `read`), and keeps what is written after.
    private let flushedUpTo = Atomic<Int>(0)
    /// Periods in which the ring had less than a period while a playback ran (the task fell behind).
    let shortPeriods = Atomic<Int>(0)

    init(frames: Int) {
        samples = .allocate(capacity: max(1, frames))
        samples.initialize(repeating: 0)
    }

    deinit { samples.deallocate() }

    var capacity: Int { samples.count }
    /// Samples queued and not yet taken.
    var queued: Int { written.load(ordering: .acquiring) - read.load(ordering: .acquiring) }

    /// Asks the I/O thread to drop what is queued now, at its next period (the producer's call).
    func flush() { flushedUpTo.store(written.load(ordering: .relaxed), ordering: .releasing) }

    /// Writes as much of `source` as fits; returns how many samples it took.
    func write(_ source: ArraySlice<Int16>) -> Int {
        let w = written.load(ordering: .relaxed), r = read.load(ordering: .acquiring)
        let n = min(source.count, samples.count - (w - r))
        guard n > 0 else { return 0 }
        var index = source.startIndex
        for i in 0..<n {
            samples[(w + i) % samples.count] = source[index]
            index += 1
        }
        written.store(w + n, ordering: .releasing)
        return n
    }

    /// Puts the next period of the playback into `capture` (I/O thread; no allocation, no lock).
    func pull(into capture: UnsafeMutableBufferPointer<Int16>) {
        let mark = flushedUpTo.load(ordering: .acquiring)
        if mark > read.load(ordering: .relaxed) { read.store(mark, ordering: .releasing) }
        guard isOn.load(ordering: .relaxed) else { return }
        let r = read.load(ordering: .relaxed), w = written.load(ordering: .acquiring)
        let n = min(capture.count, w - r)
        if n < capture.count { shortPeriods.add(1, ordering: .relaxed) }
        let replacing = replaces.load(ordering: .relaxed)
        for i in 0..<capture.count {
            let sample = i < n ? samples[(r + i) % samples.count] : 0
            let at = capture.startIndex + i
            capture[at] = replacing ? sample : Int16(clamping: Int32(capture[at]) + Int32(sample))
        }
        read.store(r + n, ordering: .releasing)
    }
}

/// A playback into a call (``Call/play(_:mix:loops:)``): a task that keeps the call's ring
/// topped up from the rendered source (half a second ahead), until the source is over and
/// the peer has been sent all of it, or it is stopped.
///
/// Thread safety: safe from any thread.
public final class CallPlayback: Sendable {
    /// Set to stop (a class: the task shares it, and an `Atomic` cannot be captured).
    private final class Flag: Sendable { let on = Atomic<Bool>(false) }

    private let stopping = Flag()
    private let task: Task<Void, Never>

    init(samples: [Int16], loops: Bool, ring: CallPlaybackRing, mix: CallAudioMix, rate: Int) {
        ring.flush()
        ring.replaces.store(mix == .replacesMicrophone, ordering: .relaxed)
        ring.isOn.store(true, ordering: .releasing)
        let ahead = min(ring.capacity, rate / 2)
        let stopping = self.stopping
        task = Task.detached {
            var position = 0
            while !stopping.on.load(ordering: .acquiring) {
                if position == samples.count {
                    guard loops else {
                        if ring.queued == 0 { break }  // sent to the peer
                        try? await Task.sleep(for: .milliseconds(10))
                        continue
                    }
                    position = 0
                }
                let room = ahead - ring.queued
                if room > 0 { position += ring.write(samples[position..<min(samples.count, position + room)]) }
                if room <= 0 || position == samples.count && !loops { try? await Task.sleep(for: .milliseconds(20)) }
            }
            if stopping.on.load(ordering: .acquiring) { ring.flush() }
            ring.isOn.store(false, ordering: .releasing)
        }
    }

    /// Stops the playback: the peer hears the microphone again from the next period.
    public func stop() { stopping.on.store(true, ordering: .releasing) }

    /// Waits until the playback is over: played to the end (the last sample sent to the peer)
    /// or stopped. A looping playback ends only when stopped.
    public func finished() async { await task.value }
}
