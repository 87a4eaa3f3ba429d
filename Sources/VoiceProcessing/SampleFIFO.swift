import DSP

/// A first-in first-out queue of samples with a fixed capacity, for carrying audio between
/// the device's period and the processing block (and across sampling rates).
///
/// Thread safety: not thread-safe; used by the I/O thread only. Nothing allocates after `init`.
final class SampleFIFO<Sample: BitwiseCopyable & AdditiveArithmetic> {
    let capacity: Int
    private let storage: UnsafeMutablePointer<Sample>
    private var head = 0
    /// Samples queued.
    private(set) var count = 0

    init(capacity: Int) {
        precondition(capacity > 0)
        self.capacity = capacity
        storage = .allocate(capacity: capacity)
        storage.initialize(repeating: .zero, count: capacity)
    }

    deinit { storage.deallocate() }

    /// Free space.
    var space: Int { capacity - count }

    /// Appends `n` samples. - Precondition: `n <= space`.
    func push(_ samples: UnsafePointer<Sample>, _ n: Int) {
        precondition(n <= space, "FIFO overflow")
        var tail = (head + count) % capacity
        for i in 0..<n {
            storage[tail] = samples[i]
            tail += 1
            if tail == capacity { tail = 0 }
        }
        count += n
    }

    /// Appends `n` zeros. - Precondition: `n <= space`.
    func pushZeros(_ n: Int) {
        precondition(n <= space, "FIFO overflow")
        var tail = (head + count) % capacity
        for _ in 0..<n {
            storage[tail] = .zero
            tail += 1
            if tail == capacity { tail = 0 }
        }
        count += n
    }

    /// Removes the `n` oldest samples into `destination`. - Precondition: `n <= count`.
    func pop(into destination: UnsafeMutablePointer<Sample>, _ n: Int) {
        precondition(n <= count, "FIFO underflow")
        for i in 0..<n {
            destination[i] = storage[head]
            head += 1
            if head == capacity { head = 0 }
        }
        count -= n
    }

    /// Empties the queue.
    func removeAll() {
        head = 0
        count = 0
    }
}


/// The loudspeaker signal kept for echo cancellation: a ring indexed by absolute sample
/// number (an ``InterpolatingRing``, the same delay line as the simulated room's), read back at
/// any (fractional) delay.
///
/// Thread safety: not thread-safe; used by the I/O thread only. Nothing allocates after `init`.
final class ReferenceRing {
    private let history: InterpolatingRing

    /// A ring holding at least `span` samples of history.
    init(span: Int) {
        history = InterpolatingRing(minimumCapacity: max(64, span + SincKernel.taps))
    }

    func write(_ samples: UnsafePointer<Float>, _ n: Int) {
        history.write(samples, n)
    }

    /// Reads `count` samples starting at absolute position `start` (fractional), advancing by
    /// `step` per sample (1 + drift). Whole positions are copied; others interpolated.
    func read(from start: Double, step: Double, count: Int, into output: UnsafeMutablePointer<Float>) {
        if step == 1, start == start.rounded() {
            let first = Int(start)
            history.copy(from: first, count: count, into: output)
            return
        }
        for i in 0..<count {
            output[i] = history.interpolated(at: start + Double(i) * step)
        }
    }

    func reset() {
        history.reset()
    }
}
