#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The few libm functions this module and the ones built on it (through `package` access) need,
/// so no other file imports libc.
///
/// Thread safety: stateless; safe from any thread.
package enum Math {
    @inline(__always) package static func cos(_ x: Double) -> Double { libmCos(x) }
    @inline(__always) package static func sin(_ x: Double) -> Double { libmSin(x) }
    @inline(__always) package static func exp(_ x: Double) -> Double { libmExp(x) }
    @inline(__always) package static func log(_ x: Double) -> Double { libmLog(x) }
    @inline(__always) package static func log10(_ x: Double) -> Double { libmLog10(x) }
    @inline(__always) package static func pow(_ x: Double, _ y: Double) -> Double { libmPow(x, y) }
    @inline(__always) package static func tan(_ x: Double) -> Double { libmTan(x) }
    @inline(__always) package static func tanh(_ x: Float) -> Float { libmTanh(x) }

    /// The zeroth-order modified Bessel function of the first kind (for the Kaiser window).
    package static func besselI0(_ x: Double) -> Double {
        var sum = 1.0, term = 1.0, k = 1.0
        let q = x * x / 4
        while term > 1e-12 * sum {
            term *= q / (k * k)
            sum += term
            k += 1
        }
        return sum
    }
}

@inline(__always) private func libmCos(_ x: Double) -> Double { cos(x) }
@inline(__always) private func libmSin(_ x: Double) -> Double { sin(x) }
@inline(__always) private func libmExp(_ x: Double) -> Double { exp(x) }
@inline(__always) private func libmLog(_ x: Double) -> Double { log(x) }
@inline(__always) private func libmLog10(_ x: Double) -> Double { log10(x) }
@inline(__always) private func libmPow(_ x: Double, _ y: Double) -> Double { pow(x, y) }
@inline(__always) private func libmTan(_ x: Double) -> Double { tan(x) }
@inline(__always) private func libmTanh(_ x: Float) -> Float { tanhf(x) }
