import Foundation

/// Measurements the codec tests share: tones, levels, SNR, correlation and alignment over
/// 16-bit samples (AudioAnalysis works in Float and this target keeps to its three dependencies).
/// The sums run over buffer pointers: the lag search covers 30 s of speech 64 times, which an
/// unoptimised build makes slow through generic slices.
enum Signals {
    /// A sine of `frequency` Hz whose level is `dBFS` relative to a full-scale sine (AES17:
    /// a sine peaking at 32767 is 0 dBFS), starting at `phase` radians.
    static func sine(frequency: Double, sampleRate: Int, count: Int, dBFS: Double, phase: Double = 0) -> [Int16] {
        let amplitude = 32767 * pow(10, dBFS / 20)
        return (0..<count).map { n in
            Int16((amplitude * sin(2 * .pi * frequency * Double(n) / Double(sampleRate) + phase)).rounded())
        }
    }

    /// Sums of x·x, y·y and x·y over `count` samples of `a` from `i` and of `b` from `j`.
    private static func sums(_ a: [Int16], _ i: Int, _ b: [Int16], _ j: Int, count: Int) -> (xx: Double, yy: Double, xy: Double) {
        precondition(i + count <= a.count && j + count <= b.count)
        return a.withUnsafeBufferPointer { x in
            b.withUnsafeBufferPointer { y in
                var xx: Int64 = 0, yy: Int64 = 0, xy: Int64 = 0
                for k in 0..<count {
                    let p = Int64(x[i + k]), q = Int64(y[j + k])
                    xx &+= p * p; yy &+= q * q; xy &+= p * q
                }
                return (Double(xx), Double(yy), Double(xy))
            }
        }
    }

    /// `x`'s level in dB relative to `reference`'s (mean power over the whole of each).
    static func levelDB(_ x: [Int16], relativeTo reference: [Int16]) -> Double {
        let a = sums(x, 0, x, 0, count: x.count).xx / Double(x.count)
        let b = sums(reference, 0, reference, 0, count: reference.count).xx / Double(reference.count)
        return 10 * log10(a / b)
    }

    /// Signal power over error power, in dB: `reference[n]` is the signal, `test[n + lag] -
    /// reference[n]` the error, over the stretch both cover.
    static func snr(reference: [Int16], test: [Int16], lag: Int = 0) -> Double {
        let s = sums(reference, 0, test, lag, count: min(reference.count, test.count - lag))
        return 10 * log10(s.xx / (s.xx + s.yy - 2 * s.xy))
    }

    /// Normalised correlation (cosine similarity, -1 ... 1) of `a[n]` with `b[n + lag]`, over
    /// the stretch both cover.
    static func correlation(_ a: [Int16], _ b: [Int16], lag: Int = 0) -> Double {
        let s = sums(a, 0, b, lag, count: min(a.count, b.count - lag))
        return s.xx > 0 && s.yy > 0 ? s.xy / (s.xx * s.yy).squareRoot() : 0
    }

    /// The lag in `lags` at which `output[n + lag]` correlates best with `input[n]` (over the
    /// stretch both cover), and that correlation.
    static func bestLag(input: [Int16], output: [Int16], lags: Range<Int>) -> (lag: Int, correlation: Double) {
        var best = (lag: lags.lowerBound, correlation: -2.0)
        for lag in lags {
            let c = correlation(input, output, lag: lag)
            if c > best.correlation { best = (lag, c) }
        }
        return best
    }
}
