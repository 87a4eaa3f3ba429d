public import SpeexDSP

/// A linear echo canceller: removes from each microphone block the echo of an aligned
/// loudspeaker (reference) block.
///
/// The voice-processing unit aligns the reference (device delay, estimated residual delay,
/// clock drift) before calling ``cancel(capture:reference:output:)``, so a backend only has to
/// model the room. Backends: ``SpeexMDFEchoCanceller`` (SpeexDSP's MDF, the default) and
/// ``PassthroughEchoCanceller`` (no cancellation, for benches and as a reference point), in
/// the spirit of PipeWire's `aec-null`.
///
/// Thread safety: backends are used by the I/O thread only; the unit never calls them from
/// two threads. ``cancel(capture:reference:output:)`` and ``reset()`` must not allocate,
/// lock or log.
public protocol EchoCanceller: AnyObject {
    /// Samples per block.
    var blockSize: Int { get }
    /// Sampling rate in Hz.
    var sampleRate: Int { get }
    /// Writes `capture` minus the echo of `reference` to `output` (each ``blockSize`` samples;
    /// `output` does not alias the inputs).
    func cancel(capture: UnsafeBufferPointer<Int16>, reference: UnsafeBufferPointer<Int16>,
                output: UnsafeMutableBufferPointer<Int16>)
    /// Forgets the echo path (after a change too large to track, or a realignment).
    func reset()
}

/// SpeexDSP's multidelay block frequency-domain (MDF) canceller behind ``EchoCanceller``.
///
/// Thread safety: see ``EchoCanceller``.
public final class SpeexMDFEchoCanceller: EchoCanceller {
    /// The wrapped canceller (the unit attaches it to its preprocessor for residual echo suppression).
    public let canceller: SpeexEchoCanceller
    public var blockSize: Int { canceller.frameSize }
    public var sampleRate: Int { canceller.sampleRate }

    /// - Parameters:
    ///   - blockSize: samples per block.
    ///   - tailLength: the longest echo the filter can model, in samples.
    ///   - sampleRate: in Hz.
    public init(blockSize: Int, tailLength: Int, sampleRate: Int) throws(SpeexError) {
        canceller = try SpeexEchoCanceller(frameSize: blockSize, filterLength: tailLength, sampleRate: sampleRate)
    }

    public func cancel(capture: UnsafeBufferPointer<Int16>, reference: UnsafeBufferPointer<Int16>,
                       output: UnsafeMutableBufferPointer<Int16>) {
        canceller.cancel(capture: capture, reference: reference, output: output)
    }

    public func reset() { canceller.reset() }
}

/// A canceller that cancels nothing: the output is the capture.
///
/// Thread safety: see ``EchoCanceller``.
public final class PassthroughEchoCanceller: EchoCanceller {
    public let blockSize: Int
    public let sampleRate: Int

    public init(blockSize: Int, sampleRate: Int) {
        self.blockSize = blockSize
        self.sampleRate = sampleRate
    }

    public func cancel(capture: UnsafeBufferPointer<Int16>, reference: UnsafeBufferPointer<Int16>,
                       output: UnsafeMutableBufferPointer<Int16>) {
        _ = output.update(fromContentsOf: capture)
    }

    public func reset() {}
}
