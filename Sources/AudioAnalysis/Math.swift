#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

// Thin aliases so the rest of the module does not import libc for three functions.
@inline(__always) func _log(_ x: Double) -> Double { log(x) }
@inline(__always) func _log10(_ x: Double) -> Double { log10(x) }
@inline(__always) func _cos(_ x: Double) -> Double { cos(x) }
@inline(__always) func _sin(_ x: Double) -> Double { sin(x) }
@inline(__always) func _exp(_ x: Double) -> Double { exp(x) }
@inline(__always) func _pow(_ x: Double, _ y: Double) -> Double { pow(x, y) }
