/// A real-input FFT of a fixed power-of-two size that never allocates after `init`.
///
/// The forward transform takes `size` real samples and returns the `size / 2 + 1` bins of the
/// half spectrum (the DC and Nyquist bins have zero imaginary parts); the inverse undoes it,
/// including the `1 / size` scale, so `inverse(forward(x)) == x` up to rounding.
/// It packs the even and odd samples into one complex FFT of `size / 2` points and splits the
/// result (the textbook "two real FFTs for the price of one" step).
///
/// Thread safety: not thread-safe (the scratch buffers are shared); one instance per thread.
/// Shared by the simulation (its convolver) and VoiceProcessing (delay estimation) through
/// `package` access: not public API.
/// ``forward(_:real:imaginary:)`` and ``inverse(real:imaginary:_:)`` do not allocate.
package final class RealFFT {
    /// Real samples per transform.
    package let size: Int
    /// Complex points of the inner FFT (`size / 2`).
    private let half: Int
    /// Twiddles of the inner FFT, stage by stage so each stage reads them contiguously: the
    /// stage of butterfly span `h` uses e^(-2 pi i k / 2h), k < h, stored from index `h - 1`.
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
        // Spans 1, 2, 4 ... half / 2 fill slots 0 ..< half - 1.
        twiddleRe = .allocate(capacity: half - 1)
        twiddleIm = .allocate(capacity: half - 1)
        splitRe = .allocate(capacity: half)
        splitIm = .allocate(capacity: half)
        bitReversed = .allocate(capacity: half)
        workRe = .allocate(capacity: half)
        workIm = .allocate(capacity: half)
        var span = 1
        while span < half {
            for k in 0..<span {
                let angle = -Double.pi * Double(k) / Double(span)
                twiddleRe[span - 1 + k] = Float(Math.cos(angle))
                twiddleIm[span - 1 + k] = Float(Math.sin(angle))
            }
            span <<= 1
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
    ///
    /// The first two stages, whose twiddles are 1 and -i, run fused without multiplications;
    /// stages of span 8 and more run eight butterflies at a time on SIMD lanes.
    private func complexTransform(inverse: Bool) {
        let n = half
        let re = workRe, im = workIm
        let sign: Float = inverse ? -1 : 1
        var span = 1
        if n >= 4 {
            var s = 0
            while s < n {
                let a0r = re[s] + re[s + 1], a0i = im[s] + im[s + 1]
                let a1r = re[s] - re[s + 1], a1i = im[s] - im[s + 1]
                let b0r = re[s + 2] + re[s + 3], b0i = im[s + 2] + im[s + 3]
                let b1r = re[s + 2] - re[s + 3], b1i = im[s + 2] - im[s + 3]
                // b1 times -i (forward) or +i (inverse)
                let tr = sign * b1i, ti = -sign * b1r
                re[s] = a0r + b0r; im[s] = a0i + b0i
                re[s + 2] = a0r - b0r; im[s + 2] = a0i - b0i
                re[s + 1] = a1r + tr; im[s + 1] = a1i + ti
                re[s + 3] = a1r - tr; im[s + 3] = a1i - ti
                s += 4
            }
            span = 4
        }
        while span < n {
            let wRe = twiddleRe + (span - 1), wIm = twiddleIm + (span - 1)
            var start = 0
            while start < n {
                let a = start, b = start + span
                if span >= 8 {
                    let lanes = SIMD8<Float>(repeating: sign)
                    var k = 0
                    while k < span {
                        let wr = Self.load(wRe + k), wi = Self.load(wIm + k) * lanes
                        let br = Self.load(re + b + k), bi = Self.load(im + b + k)
                        let tr = br * wr - bi * wi, ti = br * wi + bi * wr
                        let ar = Self.load(re + a + k), ai = Self.load(im + a + k)
                        Self.store(ar - tr, re + b + k); Self.store(ai - ti, im + b + k)
                        Self.store(ar + tr, re + a + k); Self.store(ai + ti, im + a + k)
                        k += 8
                    }
                } else {
                    for k in 0..<span {
                        let wr = wRe[k], wi = sign * wIm[k]
                        let tr = re[b + k] * wr - im[b + k] * wi
                        let ti = re[b + k] * wi + im[b + k] * wr
                        re[b + k] = re[a + k] - tr
                        im[b + k] = im[a + k] - ti
                        re[a + k] += tr
                        im[a + k] += ti
                    }
                }
                start += 2 * span
            }
            span <<= 1
        }
    }

    @inline(__always)
    private static func load(_ p: UnsafeMutablePointer<Float>) -> SIMD8<Float> {
        UnsafeRawPointer(p).loadUnaligned(as: SIMD8<Float>.self)
    }

    @inline(__always)
    private static func store(_ v: SIMD8<Float>, _ p: UnsafeMutablePointer<Float>) {
        UnsafeMutableRawPointer(p).storeBytes(of: v, as: SIMD8<Float>.self)
    }
}
