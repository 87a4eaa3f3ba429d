/// A history of samples indexed by absolute sample number, read back at whole positions or,
/// through ``SincKernel``, at fractional ones.
///
/// The delay line under the simulated drifting echo path and VoiceProcessing's echo reference
/// (through `package` access): both write a stream and read it back some (possibly drifting)
/// number of samples later, and must agree bit for bit on how.
///
/// The capacity is a power of two, so an index maps to its slot with a mask. Samples not yet
/// written, before the stream began, or older than the capacity (overwritten) read as zero.
///
/// Thread safety: not thread-safe; one owner at a time. Nothing allocates after `init`.
package final class InterpolatingRing {
    /// Samples the ring holds (a power of two).
    package let capacity: Int
    private let mask: Int
    private let ring: UnsafeMutablePointer<Float>
    /// The kernel's span copied out of the ring, so the kernel reads linear memory.
    private let window: UnsafeMutablePointer<Float>
    /// Held here so the shared table is built in `init`, not on the first read.
    private let kernel = SincKernel.shared
    /// Samples written so far: the index of the next one.
    package private(set) var written = 0

    /// A ring of at least `minimumCapacity` samples (and at least 16).
    package init(minimumCapacity: Int) {
        var size = 16
        while size < minimumCapacity { size <<= 1 }
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

    /// Appends one sample.
    @inline(__always)
    package func write(_ sample: Float) {
        ring[written & mask] = sample
        written += 1
    }

    /// Appends `count` samples.
    package func write(_ samples: UnsafePointer<Float>, _ count: Int) {
        for i in 0..<count { ring[(written + i) & mask] = samples[i] }
        written += count
    }

    /// The sample at absolute index `index` (zero outside what the ring holds).
    @inline(__always)
    package func sample(at index: Int) -> Float {
        index >= 0 && index < written && written - index <= capacity ? ring[index & mask] : 0
    }

    /// Copies the samples at absolute indices `first ..< first + count` into `output` (zeros
    /// where the ring holds none), in at most two runs: the bounds are checked once per call,
    /// not once per sample.
    @inline(__always)
    package func copy(from first: Int, count: Int, into output: UnsafeMutablePointer<Float>) {
        let end = written
        let start = max(first, end - capacity, 0)
        let stop = min(first + count, end)
        guard start < stop else {
            output.update(repeating: 0, count: count)
            return
        }
        output.update(repeating: 0, count: start - first)
        var index = start
        while index < stop {
            let slot = index & mask
            let run = min(stop - index, capacity - slot)
            (output + (index - first)).update(from: ring + slot, count: run)
            index += run
        }
        (output + (stop - first)).update(repeating: 0, count: first + count - stop)
    }

    /// The stream at fractional absolute position `position`, from the 32 samples around it,
    /// `floor(position) - 15 ... floor(position) + 16` (all written once `position` is at least
    /// ``SincKernel/halfTaps`` behind ``written``).
    @inline(__always)
    package func interpolated(at position: Double) -> Float {
        let whole = position.rounded(.down)
        let first = Int(whole) - (SincKernel.halfTaps - 1)
        copy(from: first, count: SincKernel.taps, into: window)
        return kernel.interpolate(window + (SincKernel.halfTaps - 1), fraction: position - whole)
    }

    /// Forgets the stream, as if just created.
    package func reset() {
        ring.update(repeating: 0, count: capacity)
        written = 0
    }
}
