import CSpeexDSP

/// SpeexDSP's preprocessor: noise suppression, automatic gain control, voice
/// activity detection, dereverberation, and residual echo suppression when an
/// echo canceller is attached.
///
/// Thread safety: not thread-safe; use from one thread at a time (normally the I/O
/// thread, after the echo canceller). `process(_:)` does not allocate.
public struct SpeexPreprocessor: ~Copyable {
    private let handle: OpaquePointer
    /// Keeps an attached canceller's state alive for as long as this preprocessor reads it.
    private var echo: EchoState?
    /// Samples per frame.
    public let frameSize: Int
    /// Sampling rate in Hz.
    public let sampleRate: Int

    /// Creates a preprocessor with SpeexDSP's defaults (denoise on, AGC off, VAD off).
    ///
    /// The corresponding C function is `speex_preprocess_state_init`.
    public init(frameSize: Int, sampleRate: Int) throws(SpeexError) {
        guard frameSize > 0, frameSize <= 8192 else { throw .invalid("frame size \(frameSize)") }
        guard (1000...192_000).contains(sampleRate) else { throw .invalid("sample rate \(sampleRate) Hz") }
        guard let handle = speex_preprocess_state_init(Int32(frameSize), Int32(sampleRate)) else { throw .allocationFailed }
        self.handle = handle
        self.frameSize = frameSize
        self.sampleRate = sampleRate
    }

    deinit { speex_preprocess_state_destroy(handle) }

    /// Processes one frame in place.
    ///
    /// - Returns: whether the frame holds speech (meaningful with ``isVADEnabled``; otherwise always `true`).
    /// The corresponding C function is `speex_preprocess_run`.
    @discardableResult
    public func process(_ frame: UnsafeMutableBufferPointer<Int16>) -> Bool {
        precondition(frame.count == frameSize, "preprocessor frames must hold frameSize samples")
        return speex_preprocess_run(handle, frame.baseAddress) != 0
    }

    /// Array convenience for `process(_:)` (for tools and tests).
    @discardableResult
    public func process(_ frame: inout [Int16]) -> Bool {
        frame.withUnsafeMutableBufferPointer { process($0) }
    }

    /// Updates the noise and reverberation estimates from a frame without changing it
    /// (for frames that are not sent). The corresponding C function is `speex_preprocess_estimate_update`.
    public func estimateUpdate(_ frame: UnsafeMutableBufferPointer<Int16>) {
        precondition(frame.count == frameSize, "preprocessor frames must hold frameSize samples")
        speex_preprocess_estimate_update(handle, frame.baseAddress)
    }

    /// Attaches an echo canceller for residual echo suppression (`SPEEX_PREPROCESS_SET_ECHO_STATE`).
    ///
    /// The canceller must run on each frame before the preprocessor. The preprocessor keeps
    /// the canceller's state alive, so the two may be released in any order.
    public mutating func attach(_ canceller: borrowing SpeexEchoCanceller) {
        echo = canceller.state
        _ = callaudio_speex_preprocess_set_echo_state(handle, canceller.state.handle)
    }

    /// Detaches the echo canceller.
    public mutating func detachEchoCanceller() {
        _ = callaudio_speex_preprocess_set_echo_state(handle, nil)
        echo = nil
    }

    // MARK: Noise suppression

    /// Whether noise suppression is on.
    public var isDenoiseEnabled: Bool { int(SPEEX_PREPROCESS_GET_DENOISE) != 0 }
    /// Turns noise suppression on or off (`SPEEX_PREPROCESS_SET_DENOISE`).
    public func setDenoise(_ on: Bool) throws(SpeexError) { try set(SPEEX_PREPROCESS_SET_DENOISE, on ? 1 : 0, "denoise") }

    /// Maximum noise attenuation in dB (negative, e.g. -15).
    public var noiseSuppressDB: Int { int(SPEEX_PREPROCESS_GET_NOISE_SUPPRESS) }
    /// Sets the maximum noise attenuation in dB, a negative number (`SPEEX_PREPROCESS_SET_NOISE_SUPPRESS`).
    public func setNoiseSuppress(dB: Int) throws(SpeexError) {
        guard dB <= 0 else { throw .invalid("noise suppression \(dB) dB must be <= 0") }
        try set(SPEEX_PREPROCESS_SET_NOISE_SUPPRESS, dB, "noise suppression")
    }

    // MARK: Gain control

    /// Whether automatic gain control is on.
    public var isAGCEnabled: Bool { int(SPEEX_PREPROCESS_GET_AGC) != 0 }
    /// Turns AGC on or off (`SPEEX_PREPROCESS_SET_AGC`).
    public func setAGC(_ on: Bool) throws(SpeexError) { try set(SPEEX_PREPROCESS_SET_AGC, on ? 1 : 0, "AGC") }

    /// The AGC's target level, in 16-bit sample units (RMS-like, e.g. 8000).
    public var agcTarget: Int { int(SPEEX_PREPROCESS_GET_AGC_TARGET) }
    /// Sets the AGC's target level in 16-bit sample units, 1 ... 32767 (`SPEEX_PREPROCESS_SET_AGC_TARGET`).
    public func setAGCTarget(_ level: Int) throws(SpeexError) {
        guard (1...32767).contains(level) else { throw .invalid("AGC target \(level) must be in 1...32767") }
        try set(SPEEX_PREPROCESS_SET_AGC_TARGET, level, "AGC target")
    }

    /// The most gain the AGC may apply, in dB.
    public var agcMaxGainDB: Int { int(SPEEX_PREPROCESS_GET_AGC_MAX_GAIN) }
    /// Sets the most gain the AGC may apply, in dB (`SPEEX_PREPROCESS_SET_AGC_MAX_GAIN`).
    public func setAGCMaxGain(dB: Int) throws(SpeexError) {
        guard dB >= 0 else { throw .invalid("AGC max gain \(dB) dB must be >= 0") }
        try set(SPEEX_PREPROCESS_SET_AGC_MAX_GAIN, dB, "AGC max gain")
    }

    /// The gain the AGC applies now, in dB.
    public var agcGainDB: Int { int(SPEEX_PREPROCESS_GET_AGC_GAIN) }

    // MARK: Voice activity

    /// Whether voice activity detection is on.
    public var isVADEnabled: Bool { int(SPEEX_PREPROCESS_GET_VAD) != 0 }
    /// Turns VAD on or off (`SPEEX_PREPROCESS_SET_VAD`).
    public func setVAD(_ on: Bool) throws(SpeexError) { try set(SPEEX_PREPROCESS_SET_VAD, on ? 1 : 0, "VAD") }

    /// Probability (0 ... 100) above which a silent frame turns to speech.
    public var speechProbabilityStart: Int { int(SPEEX_PREPROCESS_GET_PROB_START) }
    /// Sets the speech start probability, 0 ... 100 (`SPEEX_PREPROCESS_SET_PROB_START`).
    public func setSpeechProbabilityStart(_ percent: Int) throws(SpeexError) {
        guard (0...100).contains(percent) else { throw .invalid("speech start probability \(percent)") }
        try set(SPEEX_PREPROCESS_SET_PROB_START, percent, "speech start probability")
    }

    /// Probability (0 ... 100) above which a speech frame stays speech.
    public var speechProbabilityContinue: Int { int(SPEEX_PREPROCESS_GET_PROB_CONTINUE) }
    /// Sets the speech continue probability, 0 ... 100 (`SPEEX_PREPROCESS_SET_PROB_CONTINUE`).
    public func setSpeechProbabilityContinue(_ percent: Int) throws(SpeexError) {
        guard (0...100).contains(percent) else { throw .invalid("speech continue probability \(percent)") }
        try set(SPEEX_PREPROCESS_SET_PROB_CONTINUE, percent, "speech continue probability")
    }

    /// The last frame's speech probability, 0 ... 100.
    public var speechProbability: Int { int(SPEEX_PREPROCESS_GET_PROB) }

    // MARK: Dereverberation

    /// Whether dereverberation is on.
    public var isDereverbEnabled: Bool { int(SPEEX_PREPROCESS_GET_DEREVERB) != 0 }
    /// Turns dereverberation on or off (`SPEEX_PREPROCESS_SET_DEREVERB`).
    public func setDereverb(_ on: Bool) throws(SpeexError) { try set(SPEEX_PREPROCESS_SET_DEREVERB, on ? 1 : 0, "dereverb") }

    // MARK: Residual echo

    /// Maximum attenuation of residual echo in dB (negative), when a canceller is attached.
    public var echoSuppressDB: Int { int(SPEEX_PREPROCESS_GET_ECHO_SUPPRESS) }
    /// Sets the residual echo attenuation in dB, a negative number (`SPEEX_PREPROCESS_SET_ECHO_SUPPRESS`).
    public func setEchoSuppress(dB: Int) throws(SpeexError) {
        guard dB <= 0 else { throw .invalid("echo suppression \(dB) dB must be <= 0") }
        try set(SPEEX_PREPROCESS_SET_ECHO_SUPPRESS, dB, "echo suppression")
    }

    /// Maximum residual echo attenuation in dB while near-end speech is active (negative).
    public var echoSuppressActiveDB: Int { int(SPEEX_PREPROCESS_GET_ECHO_SUPPRESS_ACTIVE) }
    /// Sets the residual echo attenuation during near-end speech (`SPEEX_PREPROCESS_SET_ECHO_SUPPRESS_ACTIVE`).
    public func setEchoSuppressActive(dB: Int) throws(SpeexError) {
        guard dB <= 0 else { throw .invalid("active echo suppression \(dB) dB must be <= 0") }
        try set(SPEEX_PREPROCESS_SET_ECHO_SUPPRESS_ACTIVE, dB, "active echo suppression")
    }

    // MARK: Plumbing

    private func int(_ request: Int32) -> Int {
        var value: Int32 = 0
        _ = callaudio_speex_preprocess_get_int(handle, request, &value)
        return Int(value)
    }

    private func set(_ request: Int32, _ value: Int, _ what: String) throws(SpeexError) {
        guard let v = Int32(exactly: value) else { throw .invalid("\(what) \(value) out of range") }
        if callaudio_speex_preprocess_set_int(handle, request, v) != 0 {
            throw SpeexError(code: -1, message: "\(what) \(value) rejected")
        }
    }
}

// A preprocessor may be handed to the I/O thread: it is non-copyable, so one owner uses it at a time;
// the echo state it shares is used only by the canceller on that same thread.
extension SpeexPreprocessor: @unchecked Sendable {}
