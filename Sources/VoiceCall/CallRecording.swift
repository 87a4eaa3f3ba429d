import Synchronization
import WAV

/// A single-producer, single-consumer ring of stereo frames (left: what we send, right: what
/// we play): the I/O thread pushes each period while a recording runs, the recording's writer
/// drains it to the file. Made with the call, so the I/O thread never allocates for it.
///
/// Thread safety: ``push(sent:played:)`` on the I/O thread only; ``drain(_:)`` on one other
/// thread at a time; the rest from any thread.
final class CallRecordingRing: @unchecked Sendable {
    // @unchecked: `samples` is written only by the producer ahead of `written` and read only by
    // the consumer behind it; the indexes are atomics (release/acquire).
    private let samples: UnsafeMutableBufferPointer<Int16>
    private let written = Atomic<Int>(0)  // samples pushed, ever
    private let read = Atomic<Int>(0)     // samples drained, ever
    /// Whether periods are pushed (a recording runs).
    let isOn = Atomic<Bool>(false)
    /// Frames that found the ring full (the writer fell behind by the ring's length).
    let droppedFrames = Atomic<Int>(0)

    /// A ring of `frames` stereo frames.
    init(frames: Int) {
        samples = .allocate(capacity: 2 * max(1, frames))
        samples.initialize(repeating: 0)
    }

    deinit { samples.deallocate() }

    /// Pushes a period (I/O thread; no allocation, no lock).
    func push(sent: UnsafeBufferPointer<Int16>, played: UnsafeBufferPointer<Int16>) {
        guard isOn.load(ordering: .relaxed) else { return }
        let n = min(sent.count, played.count), capacity = samples.count
        let w = written.load(ordering: .relaxed), r = read.load(ordering: .acquiring)
        guard w - r + 2 * n <= capacity else {
            droppedFrames.add(n, ordering: .relaxed)
            return
        }
        for i in 0..<n {
            samples[(w + 2 * i) % capacity] = sent[sent.startIndex + i]
            samples[(w + 2 * i + 1) % capacity] = played[played.startIndex + i]
        }
        written.store(w + 2 * n, ordering: .releasing)
    }

    /// Hands what was pushed since the last drain to `body` (in at most two pieces), then frees it.
    func drain(_ body: (UnsafeBufferPointer<Int16>) throws(WAVError) -> Void) throws(WAVError) {
        let r = read.load(ordering: .relaxed), w = written.load(ordering: .acquiring)
        guard w > r else { return }
        let capacity = samples.count, start = r % capacity, count = w - r
        let first = min(count, capacity - start)
        try body(UnsafeBufferPointer(rebasing: samples[start..<(start + first)]))
        if count > first { try body(UnsafeBufferPointer(rebasing: samples[0..<(count - first)])) }
        read.store(w, ordering: .releasing)
    }
}

/// A recording in progress: a task that drains the call's ring to a stereo WAV file every
/// 100 ms until it is stopped (``CallController`` stops it at the call's end).
///
/// Thread safety: safe from any thread.
final class CallRecordingJob: Sendable {
    /// The file, owned by the job's task (a box: a non-copyable value cannot be captured).
    private final class File: @unchecked Sendable {
        var writer: WAVStreamWriter
        init(_ writer: consuming WAVStreamWriter) { self.writer = writer }
    }

    /// Set to finish the file (a class: the task shares it).
    private final class Flag: Sendable { let on = Atomic<Bool>(false) }

    private let stopping = Flag()
    private let task: Task<Result<Int, WAVError>, Never>
    let path: String

    init(ring: CallRecordingRing, writer: consuming WAVStreamWriter) {
        path = writer.path
        let file = File(writer)
        ring.isOn.store(true, ordering: .relaxed)
        let stopping = self.stopping
        task = Task.detached {
            do throws(WAVError) {
                while !stopping.on.load(ordering: .acquiring) {
                    try? await Task.sleep(for: .milliseconds(100))
                    try ring.drain { (samples) throws(WAVError) in try file.writer.append(samples) }
                }
                ring.isOn.store(false, ordering: .relaxed)
                try ring.drain { (samples) throws(WAVError) in try file.writer.append(samples) }
                try file.writer.finish()
                return .success(file.writer.frames)
            } catch {
                ring.isOn.store(false, ordering: .relaxed)
                return .failure(error)
            }
        }
    }

    /// Asks the task to finish the file.
    func stop() { stopping.on.store(true, ordering: .releasing) }

    /// Stops and waits for the file: the frames written, or why it failed.
    func finish() async -> Result<Int, WAVError> {
        stop()
        return await task.value
    }
}
