/// An in-place iterative radix-2 complex FFT over `Double`.
///
/// Used for convolution and cross-correlation of whole signals in tests and
/// tools; not for the audio thread (it allocates its twiddle table).
///
/// Thread safety: a value type; an instance may be shared read-only.
package struct FFT {
    package let size: Int
    private let cosTable: [Double]
    private let sinTable: [Double]

    /// Creates a transform for `size` points (a power of two).
    package init(size: Int) {
        precondition(size > 0 && size & (size - 1) == 0, "FFT size must be a power of two")
        self.size = size
        cosTable = (0..<max(1, size / 2)).map { Math.cos(2 * Double.pi * Double($0) / Double(size)) }
        sinTable = (0..<max(1, size / 2)).map { -Math.sin(2 * Double.pi * Double($0) / Double(size)) }
    }

    /// The smallest power of two >= n.
    package static func size(atLeast n: Int) -> Int {
        var s = 1
        while s < n { s <<= 1 }
        return s
    }

    /// Transforms (re, im) in place; `inverse` computes the unscaled inverse.
    package func transform(_ re: inout [Double], _ im: inout [Double], inverse: Bool = false) {
        let n = size
        var j = 0
        for i in 1..<n {
            var bit = n >> 1
            while j & bit != 0 { j ^= bit; bit >>= 1 }
            j |= bit
            if i < j { re.swapAt(i, j); im.swapAt(i, j) }
        }
        let sign: Double = inverse ? -1 : 1
        re.withUnsafeMutableBufferPointer { re in
            im.withUnsafeMutableBufferPointer { im in
                var len = 2
                while len <= n {
                    let step = n / len
                    let half = len / 2
                    var start = 0
                    while start < n {
                        for k in 0..<half {
                            let wr = cosTable[k * step], wi = sign * sinTable[k * step]
                            let a = start + k, b = a + half
                            let tr = re[b] * wr - im[b] * wi
                            let ti = re[b] * wi + im[b] * wr
                            re[b] = re[a] - tr; im[b] = im[a] - ti
                            re[a] += tr; im[a] += ti
                        }
                        start += len
                    }
                    len <<= 1
                }
            }
        }
    }
}
