import SpeexDSP

/// A SpeexDSP resampler in a class, so the unit can hold an optional one. Quality 3 (SpeexDSP's
/// VoIP setting): about 1.5 ms each way between 48 and 16 kHz, on the uplink's latency budget.
final class Resampler {
    let resampler: SpeexResampler

    init(from input: Int, to output: Int) throws(SpeexError) {
        resampler = try SpeexResampler(channels: 1, inputRate: input, outputRate: output, quality: 3)
    }

    /// Converts all of `input`; returns the samples written to `output`.
    func convert(_ input: UnsafePointer<Int16>, _ n: Int, into output: UnsafeMutablePointer<Int16>, capacity: Int) -> Int {
        var consumed = 0, produced = 0
        while consumed < n && produced < capacity {
            let r = resampler.process(input: UnsafeBufferPointer(start: input + consumed, count: n - consumed),
                                      output: UnsafeMutableBufferPointer(start: output + produced, count: capacity - produced))
            consumed += r.consumed
            produced += r.produced
            if r.consumed == 0 && r.produced == 0 { break }
        }
        return produced
    }

    var outputLatency: Int { resampler.outputLatency }
    func reset() { resampler.reset() }
}

extension Optional where Wrapped == Resampler {
    /// Converts `n` samples with the resampler, or copies them when there is none (equal rates).
    func convert(_ input: UnsafePointer<Int16>, _ n: Int, into output: UnsafeMutablePointer<Int16>, capacity: Int) -> Int {
        guard let resampler = self else {
            output.update(from: input, count: n)
            return n
        }
        return resampler.convert(input, n, into: output, capacity: capacity)
    }
}
