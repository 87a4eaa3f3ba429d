public import SpeexDSP

/// A linear echo canceller: removes from each microphone frame the echo of an aligned
/// loudspeaker (reference) frame.
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
    /// Samples per frame.
    var frameSize: Int { get }
    /// Sampling rate in Hz.
    var sampleRate: Int { get }
    /// Writes `capture` minus the echo of `reference` to `output` (each ``frameSize`` samples;
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
    public var frameSize: Int { canceller.frameSize }
    public var sampleRate: Int { canceller.sampleRate }

    /// - Parameters:
    ///   - frameSize: samples per frame.
    ///   - tailLength: the longest echo the filter can model, in samples.
    ///   - sampleRate: in Hz.
    public init(frameSize: Int, tailLength: Int, sampleRate: Int) throws(SpeexError) {
        canceller = try SpeexEchoCanceller(frameSize: frameSize, filterLength: tailLength, sampleRate: sampleRate)
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
    public let frameSize: Int
    public let sampleRate: Int

    public init(frameSize: Int, sampleRate: Int) {
        self.frameSize = frameSize
        self.sampleRate = sampleRate
    }

    public func cancel(capture: UnsafeBufferPointer<Int16>, reference: UnsafeBufferPointer<Int16>,
                       output: UnsafeMutableBufferPointer<Int16>) {
        _ = output.update(fromContentsOf: capture)
    }

    public func reset() {}
}
