import CSpeexDSP

/// SpeexDSP's resampler: integer or fractional rate ratios, quality 0 ... 10.
///
/// The ratio may be changed while running (``setRate(inputRate:outputRate:)`` or
/// ``setRatio(numerator:denominator:inputRate:outputRate:)``) without a glitch, which
/// is what drift compensation of an echo reference needs.
///
/// Thread safety: not thread-safe; use from one thread at a time. The buffer-based
/// `process(input:output:)` does not allocate.
public struct SpeexResampler: ~Copyable {
    private let handle: OpaquePointer
    /// Interleaved channels.
    public let channels: Int
    /// Quality, 0 (fast) ... 10 (best); 3 is SpeexDSP's VoIP default.
    public let quality: Int

    /// Creates a resampler from `inputRate` to `outputRate` Hz.
    /// The corresponding C function is `speex_resampler_init`.
    public init(channels: Int = 1, inputRate: Int, outputRate: Int, quality: Int = 5) throws(SpeexError) {
        try self.init(channels: channels, numerator: inputRate, denominator: outputRate,
                      inputRate: inputRate, outputRate: outputRate, quality: quality)
    }

    /// Creates a resampler with a fractional ratio `numerator / denominator` (input / output),
    /// nominally between `inputRate` and `outputRate`.
    ///
    /// For example 48000 -> 16000 corrected by +50 ppm is numerator 48_002_400, denominator 16_000_000.
    /// The corresponding C function is `speex_resampler_init_frac`.
    public init(channels: Int = 1, numerator: Int, denominator: Int, inputRate: Int, outputRate: Int,
                quality: Int = 5) throws(SpeexError) {
        guard (1...8).contains(channels) else { throw .invalid("\(channels) channels") }
        guard (0...10).contains(quality) else { throw .invalid("quality \(quality) must be in 0...10") }
        try Self.checkRatio(numerator, denominator, inputRate, outputRate)
        var error: Int32 = 0
        guard let handle = speex_resampler_init_frac(UInt32(channels), UInt32(numerator), UInt32(denominator),
                                                     UInt32(inputRate), UInt32(outputRate), Int32(quality), &error),
              error == 0
        else { throw .resampler(error, "speex_resampler_init_frac") }
        self.handle = handle
        self.channels = channels
        self.quality = quality
    }

    deinit { speex_resampler_destroy(handle) }

    /// Resamples interleaved `input` into `output`.
    ///
    /// - Returns: frames per channel consumed from `input` and produced into `output`.
    ///   Not all input is always consumed when `output` is too small.
    /// The corresponding C function is `speex_resampler_process_interleaved_int`.
    public func process(input: UnsafeBufferPointer<Int16>, output: UnsafeMutableBufferPointer<Int16>) -> (consumed: Int, produced: Int) {
        var inLen = UInt32(input.count / channels)
        var outLen = UInt32(output.count / channels)
        _ = speex_resampler_process_interleaved_int(handle, input.baseAddress, &inLen, output.baseAddress, &outLen)
        return (Int(inLen), Int(outLen))
    }

    /// Resamples interleaved float samples. The corresponding C function is
    /// `speex_resampler_process_interleaved_float`.
    public func process(input: UnsafeBufferPointer<Float>, output: UnsafeMutableBufferPointer<Float>) -> (consumed: Int, produced: Int) {
        var inLen = UInt32(input.count / channels)
        var outLen = UInt32(output.count / channels)
        _ = speex_resampler_process_interleaved_float(handle, input.baseAddress, &inLen, output.baseAddress, &outLen)
        return (Int(inLen), Int(outLen))
    }

    /// Resamples a whole signal, including the tail held back by the filter (allocates; for tools and tests).
    ///
    /// The output is shifted by ``outputLatency`` so it lines up with the input in time.
    public func resampleAll(_ input: [Float]) -> [Float] {
        let (num, den) = ratio
        let expected = Int((Double(input.count / channels) * Double(den) / Double(num)).rounded(.up))
        let latency = outputLatency
        let padding = [Float](repeating: 0, count: inputLatency * channels)
        let source = input + padding
        var output = [Float](repeating: 0, count: (expected + latency + 16) * channels)
        let produced = source.withUnsafeBufferPointer { i in
            output.withUnsafeMutableBufferPointer { o in process(input: i, output: o).produced }
        }
        let start = min(latency, produced)
        let end = min(produced, start + expected)
        return Array(output[(start * channels)..<(end * channels)])
    }

    /// A whole mono signal at `outputRate`: resampled (``resampleAll(_:)``) when the rates
    /// differ, `input` itself when they are equal (allocates; for tools and tests).
    ///
    /// Thread safety: safe from any thread (a resampler of its own).
    public static func resample(_ input: [Float], from inputRate: Int, to outputRate: Int, quality: Int = 5) throws(SpeexError) -> [Float] {
        guard inputRate != outputRate else { return input }
        return try SpeexResampler(inputRate: inputRate, outputRate: outputRate, quality: quality).resampleAll(input)
    }

    /// Changes the input and output rates (the ratio becomes their quotient).
    /// The corresponding C function is `speex_resampler_set_rate`.
    public func setRate(inputRate: Int, outputRate: Int) throws(SpeexError) {
        try setRatio(numerator: inputRate, denominator: outputRate, inputRate: inputRate, outputRate: outputRate)
    }

    /// Changes the ratio to `numerator / denominator` (input / output) while running.
    /// The corresponding C function is `speex_resampler_set_rate_frac`.
    public func setRatio(numerator: Int, denominator: Int, inputRate: Int, outputRate: Int) throws(SpeexError) {
        try Self.checkRatio(numerator, denominator, inputRate, outputRate)
        let r = speex_resampler_set_rate_frac(handle, UInt32(numerator), UInt32(denominator), UInt32(inputRate), UInt32(outputRate))
        if r != 0 { throw .resampler(r, "speex_resampler_set_rate_frac") }
    }

    /// The current ratio, reduced (input / output).
    public var ratio: (numerator: Int, denominator: Int) {
        var num: UInt32 = 0, den: UInt32 = 0
        speex_resampler_get_ratio(handle, &num, &den)
        return (Int(num), Int(den))
    }

    /// The nominal rates.
    public var rates: (input: Int, output: Int) {
        var i: UInt32 = 0, o: UInt32 = 0
        speex_resampler_get_rate(handle, &i, &o)
        return (Int(i), Int(o))
    }

    /// Delay the filter adds, in input frames.
    public var inputLatency: Int { Int(speex_resampler_get_input_latency(handle)) }
    /// Delay the filter adds, in output frames.
    public var outputLatency: Int { Int(speex_resampler_get_output_latency(handle)) }

    /// Makes the first output samples start at the first input sample instead of with the filter's delay.
    /// The corresponding C function is `speex_resampler_skip_zeros`.
    public func skipZeros() { _ = speex_resampler_skip_zeros(handle) }

    /// Clears the filter memory. The corresponding C function is `speex_resampler_reset_mem`.
    public func reset() { _ = speex_resampler_reset_mem(handle) }

    private static func checkRatio(_ num: Int, _ den: Int, _ inRate: Int, _ outRate: Int) throws(SpeexError) {
        let range = 1...Int(UInt32.max)
        guard range.contains(num), range.contains(den), (1...1_536_000).contains(inRate), (1...1_536_000).contains(outRate) else {
            throw .invalid("ratio \(num)/\(den) between \(inRate) and \(outRate) Hz")
        }
    }
}

// A resampler may be handed to another thread: it is non-copyable, so one owner uses it at a time.
extension SpeexResampler: @unchecked Sendable {}
