/// Sums of squares of a block of the capture, the reference and the canceller's output, in
/// 16-bit units. Thread safety: a pure function; nothing allocates.
@inline(__always)
func blockEnergies(_ capture: UnsafePointer<Int16>, _ reference: UnsafePointer<Int16>, _ output: UnsafePointer<Int16>,
                   count: Int) -> (capture: Double, reference: Double, output: Double) {
    var sd = 0.0, sx = 0.0, se = 0.0
    for i in 0..<count {
        let d = Double(capture[i]), x = Double(reference[i]), e = Double(output[i])
        sd += d * d
        sx += x * x
        se += e * e
    }
    return (sd, sx, se)
}
