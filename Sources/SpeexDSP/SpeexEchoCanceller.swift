import CSpeexDSP

/// SpeexDSP's acoustic echo canceller (MDF, multidelay block frequency-domain filter).
///
/// Each call takes one frame of microphone signal and the frame of loudspeaker
/// signal (the reference) that its echo is aligned to, and returns the microphone
/// signal with the echo removed. Aligning the reference is the caller's job.
///
/// Thread safety: not thread-safe; use from one thread at a time (normally the I/O
/// thread). ``cancel(capture:reference:output:)`` does not allocate.
public struct SpeexEchoCanceller: ~Copyable {
    /// Owned state, shared by reference only with a ``SpeexPreprocessor`` it is attached to
    /// (the preprocessor reads it for residual echo suppression).
    let state: EchoState
    /// Samples per frame (per channel).
    public let frameSize: Int
    /// Length of the adaptive filter in samples: the longest echo path it can model.
    public let filterLength: Int
    /// Sampling rate in Hz.
    public let sampleRate: Int

    /// Creates a canceller.
    ///
    /// - Parameters:
    ///   - frameSize: samples per frame, typically 10 or 20 ms (a power of two is fastest, any size works).
    ///   - filterLength: tail length in samples, typically 100 to 500 ms of audio.
    ///   - sampleRate: in Hz.
    ///
    /// The corresponding C function is `speex_echo_state_init`.
    public init(frameSize: Int, filterLength: Int, sampleRate: Int) throws(SpeexError) {
        guard frameSize > 0, frameSize <= 8192 else { throw .invalid("frame size \(frameSize)") }
        guard filterLength >= frameSize, filterLength <= 1 << 16 else {
            throw .invalid("filter length \(filterLength) (must be >= frame size \(frameSize) and <= 65536)")
        }
        guard (1000...192_000).contains(sampleRate) else { throw .invalid("sample rate \(sampleRate) Hz") }
        guard let handle = speex_echo_state_init(Int32(frameSize), Int32(filterLength)) else { throw .allocationFailed }
        self.state = EchoState(handle)
        self.frameSize = frameSize
        self.filterLength = filterLength
        self.sampleRate = sampleRate
        _ = callaudio_speex_echo_set_int(handle, SPEEX_ECHO_SET_SAMPLING_RATE, Int32(sampleRate))
    }

    /// Creates a canceller from durations.
    public init(frameDuration: Double, tailDuration: Double, sampleRate: Int) throws(SpeexError) {
        try self.init(frameSize: Int((frameDuration * Double(sampleRate)).rounded()),
                      filterLength: Int((tailDuration * Double(sampleRate)).rounded()),
                      sampleRate: sampleRate)
    }

    /// Removes the echo of `reference` from `capture`, writing the result to `output`.
    ///
    /// All three buffers hold exactly ``frameSize`` samples. `output` may not alias the inputs.
    /// The corresponding C function is `speex_echo_cancellation`.
    public func cancel(capture: UnsafeBufferPointer<Int16>, reference: UnsafeBufferPointer<Int16>,
                       output: UnsafeMutableBufferPointer<Int16>) {
        precondition(capture.count == frameSize && reference.count == frameSize && output.count == frameSize,
                     "echo canceller frames must hold frameSize samples")
        speex_echo_cancellation(state.handle, capture.baseAddress, reference.baseAddress, output.baseAddress)
    }

    /// Array convenience for ``cancel(capture:reference:output:)`` (allocates; for tools and tests).
    public func cancel(capture: [Int16], reference: [Int16]) -> [Int16] {
        var out = [Int16](repeating: 0, count: frameSize)
        capture.withUnsafeBufferPointer { c in
            reference.withUnsafeBufferPointer { r in
                out.withUnsafeMutableBufferPointer { o in cancel(capture: c, reference: r, output: o) }
            }
        }
        return out
    }

    /// Resets the adaptive filter, as after an echo-path change too large to track.
    /// The corresponding C function is `speex_echo_state_reset`.
    public func reset() { speex_echo_state_reset(state.handle) }

    /// The filter's impulse response length in samples (`SPEEX_ECHO_GET_IMPULSE_RESPONSE_SIZE`):
    /// ``filterLength`` rounded up to whole frames.
    public var impulseResponseSize: Int {
        var n: Int32 = 0
        _ = callaudio_speex_echo_get_int(state.handle, SPEEX_ECHO_GET_IMPULSE_RESPONSE_SIZE, &n)
        return Int(n)
    }

    /// The current adaptive filter as an impulse response, in the library's fixed-point scale
    /// (`SPEEX_ECHO_GET_IMPULSE_RESPONSE`): useful to see where the echo path's energy lies.
    public var impulseResponse: [Int32] {
        var ir = [Int32](repeating: 0, count: impulseResponseSize)
        ir.withUnsafeMutableBufferPointer { _ = speex_echo_ctl(state.handle, SPEEX_ECHO_GET_IMPULSE_RESPONSE, $0.baseAddress) }
        return ir
    }
}

/// The one owner of a `SpeexEchoState`; a class so an attached preprocessor can keep it alive.
final class EchoState {
    let handle: OpaquePointer
    init(_ handle: OpaquePointer) { self.handle = handle }
    deinit { speex_echo_state_destroy(handle) }
}

// A canceller may be handed to the I/O thread: it is non-copyable, so one owner uses it at a time.
extension SpeexEchoCanceller: @unchecked Sendable {}
