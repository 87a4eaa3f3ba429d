// A fractional-delay kernel and a dot product shared by the simulation (drifting echo paths)
// and VoiceProcessing (drift compensation of the echo reference), through `package` access.

/// A 32-tap Kaiser-windowed sinc (beta 8) tabulated at 256 fractional positions, interpolated
/// linearly between them: a fractional delay that stays below -80 dB error up to 0.8 of Nyquist.
///
/// The table is the same for every user, so there is one, ``shared`` (33 KB, built on first use).
///
/// Thread safety: immutable after `init`; safe to share for reading from any thread.
package final class SincKernel: @unchecked Sendable {
    package static let taps = 32
    /// Taps on each side of the interpolated point; also the smallest delay a causal read can use.
    package static let halfTaps = taps / 2
    package static let phases = 256
    /// The one table. Read it where the user is created (not first on an audio thread): it allocates once.
    package static let shared = SincKernel()
    private let table: UnsafeMutablePointer<Float>

    private init() {
        let taps = Self.taps, phases = Self.phases, half = Double(Self.halfTaps)
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
    package func interpolate(_ x: UnsafePointer<Float>, fraction: Double) -> Float {
        let position = fraction * Double(Self.phases)
        let row = min(Int(position), Self.phases - 1)
        let mix = Float(position - Double(row))
        let start = x - (Self.halfTaps - 1)
        let lower = dot(table + row * Self.taps, start, Self.taps)
        let upper = dot(table + (row + 1) * Self.taps, start, Self.taps)
        return lower + mix * (upper - lower)
    }
}

/// Dot product of `count` floats, eight lanes at a time.
@inline(__always)
package func dot(_ a: UnsafePointer<Float>, _ b: UnsafePointer<Float>, _ count: Int) -> Float {
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
