import DSP
import AudioAnalysis

/// Streaming convolution with a long impulse response, with no latency and no allocation per block.
///
/// The first `blockSize` taps run as a direct-form FIR, sample by sample; the rest of the
/// response is cut into partitions of `blockSize` taps and applied by uniformly partitioned
/// overlap-save convolution (one FFT of `2 * blockSize` per block, a frequency-domain delay line
/// of input spectra, one inverse FFT). The tail of each output block only needs input blocks
/// that are already complete, so it is computed at the block boundary and the output of every
/// sample is ready as soon as that sample arrives (Gardner's hybrid, in its simplest form).
///
/// The work done for a sample does not depend on how the input is split into calls, so any
/// chunking gives bit-identical output.
///
/// Thread safety: not thread-safe; one owner at a time. ``process(_:_:count:)`` does not allocate.
final class PartitionedConvolver {
    /// Partition size in samples (a power of two).
    let blockSize: Int
    /// The first `blockSize` taps, reversed, for the direct part.
    private let head: UnsafeMutablePointer<Float>
    /// Number of frequency-domain partitions after the head.
    private let partitions: Int
    private let bins: Int
    private let tailRe: UnsafeMutablePointer<Float>
    private let tailIm: UnsafeMutablePointer<Float>
    /// The last `partitions` input spectra, a ring; `newest` is the latest.
    private let spectraRe: UnsafeMutablePointer<Float>
    private let spectraIm: UnsafeMutablePointer<Float>
    private var newest = 0
    /// Previous block then current block of input.
    private let history: UnsafeMutablePointer<Float>
    /// Samples of the current block received so far.
    private var position = 0
    /// The partitions' contribution to the current block.
    private let tailOut: UnsafeMutablePointer<Float>
    private let accRe: UnsafeMutablePointer<Float>
    private let accIm: UnsafeMutablePointer<Float>
    private let scratch: UnsafeMutablePointer<Float>
    private let fft: RealFFT?

    /// Creates a convolver for `impulseResponse` with partitions of `blockSize` taps (a power of two >= 8).
    init(impulseResponse: [Float], blockSize: Int = 128) {
        precondition(blockSize >= 8 && blockSize & (blockSize - 1) == 0, "block size must be a power of two >= 8")
        self.blockSize = blockSize
        partitions = max(0, (impulseResponse.count + blockSize - 1) / blockSize - 1)
        bins = blockSize + 1
        head = .allocate(capacity: blockSize)
        head.initialize(repeating: 0, count: blockSize)
        for k in 0..<blockSize where blockSize - 1 - k < impulseResponse.count {
            head[k] = impulseResponse[blockSize - 1 - k]
        }
        let slots = max(1, partitions)
        tailRe = .allocate(capacity: slots * bins)
        tailIm = .allocate(capacity: slots * bins)
        spectraRe = .allocate(capacity: slots * bins)
        spectraIm = .allocate(capacity: slots * bins)
        tailRe.initialize(repeating: 0, count: slots * bins)
        tailIm.initialize(repeating: 0, count: slots * bins)
        spectraRe.initialize(repeating: 0, count: slots * bins)
        spectraIm.initialize(repeating: 0, count: slots * bins)
        history = .allocate(capacity: 2 * blockSize)
        history.initialize(repeating: 0, count: 2 * blockSize)
        tailOut = .allocate(capacity: blockSize)
        tailOut.initialize(repeating: 0, count: blockSize)
        accRe = .allocate(capacity: bins)
        accIm = .allocate(capacity: bins)
        scratch = .allocate(capacity: 2 * blockSize)
        scratch.initialize(repeating: 0, count: 2 * blockSize)
        fft = partitions > 0 ? RealFFT(size: 2 * blockSize) : nil
        if let fft {
            for p in 0..<partitions {
                scratch.update(repeating: 0, count: 2 * blockSize)
                let start = (p + 1) * blockSize
                for j in 0..<blockSize where start + j < impulseResponse.count {
                    scratch[j] = impulseResponse[start + j]
                }
                fft.forward(scratch, real: tailRe + p * bins, imaginary: tailIm + p * bins)
            }
        }
    }

    deinit {
        head.deallocate()
        tailRe.deallocate(); tailIm.deallocate()
        spectraRe.deallocate(); spectraIm.deallocate()
        history.deallocate(); tailOut.deallocate()
        accRe.deallocate(); accIm.deallocate(); scratch.deallocate()
    }

    /// Filters `count` samples; `output` may be the same memory as `input`.
    func process(_ input: UnsafePointer<Float>, _ output: UnsafeMutablePointer<Float>, count: Int) {
        var i = 0
        while i < count {
            let n = min(count - i, blockSize - position)
            for j in 0..<n { history[blockSize + position + j] = input[i + j] }
            for j in 0..<n {
                let t = position + j
                output[i + j] = dot(head, history + t + 1, blockSize) + tailOut[t]
            }
            position += n
            i += n
            if position == blockSize {
                finishBlock()
                position = 0
            }
        }
    }

    /// At a block boundary: transform the last two blocks, compute the partitions' share of the
    /// next block, and slide the history.
    private func finishBlock() {
        if let fft {
            newest = (newest + 1) % partitions
            fft.forward(history, real: spectraRe + newest * bins, imaginary: spectraIm + newest * bins)
            accRe.update(repeating: 0, count: bins)
            accIm.update(repeating: 0, count: bins)
            for p in 0..<partitions {
                // Partition p + 1 multiplies the spectrum of the block p blocks before the newest.
                let slot = (newest - p + partitions) % partitions
                let xr = spectraRe + slot * bins, xi = spectraIm + slot * bins
                let hr = tailRe + p * bins, hi = tailIm + p * bins
                for k in 0..<bins {
                    accRe[k] += xr[k] * hr[k] - xi[k] * hi[k]
                    accIm[k] += xr[k] * hi[k] + xi[k] * hr[k]
                }
            }
            fft.inverse(real: accRe, imaginary: accIm, scratch)
            tailOut.update(from: scratch + blockSize, count: blockSize)
        }
        history.update(from: history + blockSize, count: blockSize)
    }
}

