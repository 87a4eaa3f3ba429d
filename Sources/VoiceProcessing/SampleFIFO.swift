import AudioAnalysis
/// A first-in first-out queue of samples with a fixed capacity, for carrying audio between
/// the device's period and the processing frame (and across sampling rates).
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

/// A 32-tap Kaiser-windowed sinc (beta 8) tabulated at 256 fractional positions, interpolated
/// linearly between them: a fractional delay that stays below -80 dB error up to 0.8 of Nyquist.
///
/// Thread safety: immutable after `init`; safe to share for reading.
final class SincKernel {
    static let taps = 32
    static let phases = 256
    static var halfTaps: Int { taps / 2 }
    private let table: UnsafeMutablePointer<Float>

    init() {
        let taps = Self.taps, phases = Self.phases, half = Double(taps / 2)
        table = .allocate(capacity: (phases + 1) * taps)
        let beta = 8.0, i0Beta = Math.besselI0(beta)
        var row = [Double](repeating: 0, count: taps)
        for j in 0...phases {
            let fraction = Double(j) / Double(phases)
            var sum = 0.0
            for k in 0..<taps {
                let t = Double(k) - half + 1 - fraction
                let sinc = abs(t) < 1e-12 ? 1 : Math.sin(Double.pi * t) / (Double.pi * t)
                let r = t / half
                let window = abs(r) >= 1 ? 0 : Math.besselI0(beta * (1 - r * r).squareRoot()) / i0Beta
                row[k] = sinc * window
                sum += row[k]
            }
            for k in 0..<taps { table[j * taps + k] = Float(row[k] / sum) }
        }
    }

    deinit { table.deallocate() }

    /// The value between `x[0]` and `x[1]` at `fraction`; reads `x[-15] ... x[16]`.
    @inline(__always)
    func interpolate(_ x: UnsafePointer<Float>, fraction: Double) -> Float {
        let position = fraction * Double(Self.phases)
        let row = min(Int(position), Self.phases - 1)
        let mix = Float(position - Double(row))
        let start = x - (Self.taps / 2 - 1)
        let lower = dot(table + row * Self.taps, start, Self.taps)
        let upper = dot(table + (row + 1) * Self.taps, start, Self.taps)
        return lower + mix * (upper - lower)
    }
}

/// The loudspeaker signal kept for echo cancellation: a ring indexed by absolute sample
/// number, read back at any (fractional) delay.
///
/// Thread safety: not thread-safe; used by the I/O thread only. Nothing allocates after `init`.
final class ReferenceRing {
    private let capacity: Int
    private let mask: Int
    private let ring: UnsafeMutablePointer<Float>
    private let window: UnsafeMutablePointer<Float>
    private let kernel = SincKernel()
    /// Samples written so far: the index of the next one.
    private(set) var written = 0

    /// A ring holding at least `span` samples of history.
    init(span: Int) {
        var size = 64
        while size < span + SincKernel.taps { size <<= 1 }
        capacity = size
        mask = size - 1
        ring = .allocate(capacity: size)
        ring.initialize(repeating: 0, count: size)
        window = .allocate(capacity: SincKernel.taps)
        window.initialize(repeating: 0, count: SincKernel.taps)
    }

    deinit {
        ring.deallocate()
        window.deallocate()
    }

    /// How far back the ring reaches, in samples.
    var history: Int { capacity - SincKernel.taps }

    func write(_ samples: UnsafePointer<Float>, _ n: Int) {
        for i in 0..<n { ring[(written + i) & mask] = samples[i] }
        written += n
    }

    /// The sample at absolute index `index` (zero outside what the ring holds).
    @inline(__always)
    func sample(at index: Int) -> Float {
        index >= 0 && index < written && written - index <= capacity ? ring[index & mask] : 0
    }

    /// Reads `count` samples starting at absolute position `start` (fractional), advancing by
    /// `step` per sample (1 + drift). Whole positions are copied; others interpolated.
    func read(from start: Double, step: Double, count: Int, into output: UnsafeMutablePointer<Float>) {
        if step == 1, start == start.rounded() {
            let first = Int(start)
            for i in 0..<count { output[i] = sample(at: first + i) }
            return
        }
        for i in 0..<count {
            let position = start + Double(i) * step
            let whole = position.rounded(.down)
            let index = Int(whole)
            let first = index - (SincKernel.halfTaps - 1)
            for k in 0..<SincKernel.taps { window[k] = sample(at: first + k) }
            output[i] = kernel.interpolate(window + (SincKernel.halfTaps - 1), fraction: position - whole)
        }
    }

    func reset() {
        ring.update(repeating: 0, count: capacity)
        written = 0
    }
}

/// Dot product of `count` floats, eight lanes at a time.
@inline(__always)
func dot(_ a: UnsafePointer<Float>, _ b: UnsafePointer<Float>, _ count: Int) -> Float {
    var acc = SIMD8<Float>(repeating: 0)
    var k = 0
    let rawA = UnsafeRawPointer(a), rawB = UnsafeRawPointer(b)
    while k + 8 <= count {
        acc += rawA.loadUnaligned(fromByteOffset: k * 4, as: SIMD8<Float>.self)
            * rawB.loadUnaligned(fromByteOffset: k * 4, as: SIMD8<Float>.self)
        k += 8
    }
    var sum = acc.sum()
    while k < count {
        sum += a[k] * b[k]
        k += 1
    }
    return sum
}
