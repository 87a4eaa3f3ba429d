import AudioAnalysis

/// A delay line whose delay changes linearly with time: a bulk delay plus the slow slide of a
/// capture clock that runs `ppm` parts per million faster than the playback clock.
///
/// Output sample `n` (capture clock) reads the input (playback clock) at position
/// `n / (1 + ppm * 1e-6) - bulk`, so the delay is `bulk + n * ppm / (1e6 + ppm)` samples.
/// A whole-sample delay with no drift is an exact copy; otherwise the input is interpolated
/// with ``SincKernel``, which needs a delay of at least 16 samples (smaller delays are raised).
///
/// A real device pair cannot drift forever: its buffers overrun or underrun and the stream
/// slips. When the drifting delay leaves `bulk +- maximumExcursion`, it slips back by
/// `maximumExcursion` at once (``slips`` counts them), which is what an xrun does to an echo.
///
/// Thread safety: not thread-safe; one owner at a time. ``process(_:_:count:)`` does not allocate.
final class DriftingDelay {
    let bulkDelay: Double
    let ppm: Double
    let maximumExcursion: Double
    private let rate: Double
    private let exact: Int?
    private let kernel: SincKernel?
    private let capacity: Int
    private let mask: Int
    private let ring: UnsafeMutablePointer<Float>
    /// Input samples written so far (also the index of the next output sample).
    private(set) var written = 0
    /// Sum of the slips applied, in samples.
    private var slipOffset = 0.0
    /// How many times the delay slipped back into range.
    private(set) var slips = 0
    /// Contiguous copy of the ring around the read position, so the kernel reads linear memory.
    private let window: UnsafeMutablePointer<Float>

    /// - Parameters:
    ///   - delay: bulk delay in samples (>= 0).
    ///   - ppm: capture clock minus playback clock, in parts per million.
    ///   - maximumExcursion: how far the drift may move the delay before it slips, in samples.
    init(delay: Double, ppm: Double, maximumExcursion: Double) {
        precondition(delay >= 0 && delay < 10_000_000, "delay out of range")
        self.ppm = ppm
        self.maximumExcursion = max(1, maximumExcursion)
        rate = ppm / (1e6 + ppm)
        let whole = delay.rounded()
        if ppm == 0 && abs(delay - whole) < 1e-9 {
            exact = Int(whole)
            kernel = nil
            bulkDelay = whole
        } else {
            exact = nil
            kernel = SincKernel()
            bulkDelay = max(delay, Double(SincKernel.taps / 2))
        }
        let span = Int(bulkDelay + self.maximumExcursion) + SincKernel.taps + 2
        var size = 16
        while size < span { size <<= 1 }
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

    /// The delay in samples that output sample `n` sees.
    func delay(at n: Int) -> Double { bulkDelay + Double(n) * rate + slipOffset }

    /// Delays `count` samples; `output` may be the same memory as `input`.
    func process(_ input: UnsafePointer<Float>, _ output: UnsafeMutablePointer<Float>, count: Int) {
        for i in 0..<count {
            let n = written
            ring[n & mask] = input[i]
            written += 1
            if let exact {
                output[i] = n >= exact ? ring[(n - exact) & mask] : 0
                continue
            }
            var d = delay(at: n)
            if d > bulkDelay + maximumExcursion || d < bulkDelay - maximumExcursion
                || d < Double(SincKernel.taps / 2) {
                slipOffset += d > bulkDelay ? -maximumExcursion : maximumExcursion
                slips += 1
                d = delay(at: n)
            }
            let position = Double(n) - d
            let whole = position.rounded(.down)
            let index = Int(whole)
            // Copy the kernel's span out of the ring (zeros before the stream began).
            let first = index - (SincKernel.taps / 2 - 1)
            for k in 0..<SincKernel.taps {
                let j = first + k
                window[k] = j >= 0 ? ring[j & mask] : 0
            }
            output[i] = kernel!.interpolate(window + (SincKernel.taps / 2 - 1), fraction: position - whole)
        }
    }

    /// Forgets the input, as if just created.
    func reset() {
        ring.update(repeating: 0, count: capacity)
        written = 0
        slipOffset = 0
        slips = 0
    }
}
