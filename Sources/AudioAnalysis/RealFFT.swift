/// A real-input FFT of a fixed power-of-two size that never allocates after `init`.
///
/// The forward transform takes `size` real samples and returns the `size / 2 + 1` bins of the
/// half spectrum (the DC and Nyquist bins have zero imaginary parts); the inverse undoes it,
/// including the `1 / size` scale, so `inverse(forward(x)) == x` up to rounding.
/// It packs the even and odd samples into one complex FFT of `size / 2` points and splits the
/// result (the textbook "two real FFTs for the price of one" step).
///
/// Thread safety: not thread-safe (the scratch buffers are shared); one instance per thread.
/// Shared by RoomAcoustics (its convolver) and VoiceProcessing (delay estimation) through
/// `package` access: not public API.
/// ``forward(_:real:imaginary:)`` and ``inverse(real:imaginary:_:)`` do not allocate.
package final class RealFFT {
    /// Real samples per transform.
    package let size: Int
    /// Complex points of the inner FFT (`size / 2`).
    private let half: Int
    /// Twiddles of the inner FFT, e^(-2 pi i k / half) for k < half / 2.
    private let twiddleRe: UnsafeMutablePointer<Float>
    private let twiddleIm: UnsafeMutablePointer<Float>
    /// Split twiddles, e^(-2 pi i k / size) for k < half.
    private let splitRe: UnsafeMutablePointer<Float>
    private let splitIm: UnsafeMutablePointer<Float>
    private let bitReversed: UnsafeMutablePointer<Int32>
    private let workRe: UnsafeMutablePointer<Float>
    private let workIm: UnsafeMutablePointer<Float>

    /// Creates a transform of `size` real points, a power of two >= 4.
    package init(size: Int) {
        precondition(size >= 4 && size & (size - 1) == 0, "RealFFT size must be a power of two >= 4")
        self.size = size
        half = size / 2
        twiddleRe = .allocate(capacity: max(1, half / 2))
        twiddleIm = .allocate(capacity: max(1, half / 2))
        splitRe = .allocate(capacity: half)
        splitIm = .allocate(capacity: half)
        bitReversed = .allocate(capacity: half)
        workRe = .allocate(capacity: half)
        workIm = .allocate(capacity: half)
        for k in 0..<max(1, half / 2) {
            let angle = -2 * Double.pi * Double(k) / Double(half)
            twiddleRe[k] = Float(Math.cos(angle))
            twiddleIm[k] = Float(Math.sin(angle))
        }
        for k in 0..<half {
            let angle = -2 * Double.pi * Double(k) / Double(size)
            splitRe[k] = Float(Math.cos(angle))
            splitIm[k] = Float(Math.sin(angle))
        }
        var bits = 0
        while 1 << bits < half { bits += 1 }
        for i in 0..<half {
            var r = 0
            for b in 0..<bits where i & (1 << b) != 0 { r |= 1 << (bits - 1 - b) }
            bitReversed[i] = Int32(r)
        }
    }

    deinit {
        twiddleRe.deallocate(); twiddleIm.deallocate()
        splitRe.deallocate(); splitIm.deallocate()
        bitReversed.deallocate()
        workRe.deallocate(); workIm.deallocate()
    }

    /// Forward transform of `size` samples into the `size / 2 + 1` bins of the half spectrum (unscaled).
    package func forward(_ input: UnsafePointer<Float>, real: UnsafeMutablePointer<Float>, imaginary: UnsafeMutablePointer<Float>) {
        for n in 0..<half {
            let j = Int(bitReversed[n])
            workRe[j] = input[2 * n]
            workIm[j] = input[2 * n + 1]
        }
        complexTransform(inverse: false)
        // X[k] = Ze[k] + W^k Zo[k], with Ze = (Z[k] + conj Z[M-k]) / 2, Zo = (Z[k] - conj Z[M-k]) / 2i.
        real[0] = workRe[0] + workIm[0]
        imaginary[0] = 0
        real[half] = workRe[0] - workIm[0]
        imaginary[half] = 0
        for k in 1..<half {
            let m = half - k
            let ar = workRe[k], ai = workIm[k], br = workRe[m], bi = -workIm[m]
            let er = 0.5 * (ar + br), ei = 0.5 * (ai + bi)
            // (a - b) / 2i = (ai - bi) / 2 - i (ar - br) / 2
            let or = 0.5 * (ai - bi), oi = -0.5 * (ar - br)
            let wr = splitRe[k], wi = splitIm[k]
            real[k] = er + wr * or - wi * oi
            imaginary[k] = ei + wr * oi + wi * or
        }
    }

    /// Inverse transform of the `size / 2 + 1` bins into `size` samples, scaled by `1 / size`.
    package func inverse(real: UnsafePointer<Float>, imaginary: UnsafePointer<Float>, _ output: UnsafeMutablePointer<Float>) {
        for k in 0..<half {
            let m = half - k
            let ar = real[k], ai = imaginary[k], br = real[m], bi = -imaginary[m]
            let er = 0.5 * (ar + br), ei = 0.5 * (ai + bi)
            let dr = 0.5 * (ar - br), di = 0.5 * (ai - bi)
            // Zo = (X[k] - conj X[M-k]) / 2 * W^-k, and W^-k = conj(W^k).
            let wr = splitRe[k], wi = -splitIm[k]
            let or = dr * wr - di * wi, oi = dr * wi + di * wr
            // Z = Ze + i Zo
            let j = Int(bitReversed[k])
            workRe[j] = er - oi
            workIm[j] = ei + or
        }
        complexTransform(inverse: true)
        let scale = 1 / Float(half)
        for n in 0..<half {
            output[2 * n] = workRe[n] * scale
            output[2 * n + 1] = workIm[n] * scale
        }
    }

    /// In-place iterative radix-2 transform of the bit-reversed work buffers (unscaled).
    private func complexTransform(inverse: Bool) {
        let n = half
        let sign: Float = inverse ? -1 : 1
        var length = 2
        while length <= n {
            let halfLength = length / 2
            let step = n / length
            var start = 0
            while start < n {
                for k in 0..<halfLength {
                    let wr = twiddleRe[k * step], wi = sign * twiddleIm[k * step]
                    let a = start + k, b = a + halfLength
                    let tr = workRe[b] * wr - workIm[b] * wi
                    let ti = workRe[b] * wi + workIm[b] * wr
                    workRe[b] = workRe[a] - tr
                    workIm[b] = workIm[a] - ti
                    workRe[a] += tr
                    workIm[a] += ti
                }
                start += length
            }
            length <<= 1
        }
    }
}
