import CSpanDSP

/// spandsp's generic packet loss concealment: fills a lost frame by repeating the last pitch
/// period of the audio before it, fading out.
///
/// Feed every frame that arrives to ``received(_:)-(UnsafeMutableBufferPointer<Int16>)`` (it
/// keeps the last 35 ms as history) and call ``conceal(_:)`` for each one that does not. The
/// concealer finds the pitch of the history (66 to 200 Hz), repeats one period, blended at both
/// ends, and fades it linearly to silence over ``fadeOutSamples`` (50 ms): the first concealed
/// frame already fades, and from 50 ms into the loss the output is silence. The first frame that
/// arrives after a loss is blended with the synthetic signal, in place.
///
/// The algorithm is designed for 8 kHz speech (G.711): its pitch range, history and fade are
/// counted in samples at ``sampleRate``. At 16 kHz it would still run, but look for pitch
/// between 133 and 400 Hz and fade in 25 ms; resample to 8 kHz, or use a codec's own
/// concealment (Opus has one), for wideband audio.
///
/// Thread safety: not thread-safe; one thread at a time. It may move between threads: it is
/// `Sendable` and non-copyable, so exactly one owner holds it.
public struct PacketLossConcealer: ~Copyable {
    /// The state; `nonisolated(unsafe)` because a pointer is not `Sendable`: the concealer is
    /// non-copyable and every use of the state is `mutating` or in `deinit`, so only the one
    /// owner ever reaches it, one thread at a time.
    nonisolated(unsafe) private let state: UnsafeMutablePointer<plc_state_t>

    /// The sampling rate the algorithm is designed for, in Hz.
    ///
    /// Thread safety: a constant; safe from any thread.
    public static let sampleRate = 8000
    /// Samples of concealment after which the output is silence: 400, 50 ms at 8 kHz
    /// (spandsp's attenuation is 0.0025 per sample).
    ///
    /// Thread safety: a constant; safe from any thread.
    public static let fadeOutSamples = 400

    /// Makes a concealer with no history: concealing before any frame arrived gives silence.
    ///
    /// - Throws: ``SpanDSPError/allocationFailed`` if spandsp cannot allocate the state.
    ///
    /// Thread safety: safe from any thread.
    ///
    /// The corresponding C function is `plc_init`.
    public init() throws(SpanDSPError) {
        guard let state = plc_init(nil) else { throw .allocationFailed }
        self.state = state
    }

    deinit { plc_free(state) }

    /// Forgets the history, as a new concealer would (a new stream).
    ///
    /// Does not allocate: the state is reinitialised in place.
    ///
    /// Thread safety: not thread-safe; one thread at a time.
    ///
    /// The corresponding C function is `plc_init`, given the existing state.
    public mutating func reset() {
        _ = plc_init(state)
    }

    /// Records a frame that arrived, as history for concealing a later loss.
    ///
    /// After a loss, the frame's first quarter pitch period is blended with the synthetic
    /// signal, in place, so the real audio resumes without a click: play `pcm` after this call.
    ///
    /// Does not allocate.
    ///
    /// Thread safety: not thread-safe; one thread at a time.
    ///
    /// The corresponding C function is `plc_rx`.
    public mutating func received(_ pcm: UnsafeMutableBufferPointer<Int16>) {
        precondition(pcm.count <= Int(Int32.max), "buffer too long for spandsp")
        guard let samples = pcm.baseAddress, !pcm.isEmpty else { return }
        _ = plc_rx(state, samples, Int32(pcm.count))
    }

    /// Fills `frame` with a synthetic continuation of the audio, for a frame that was lost.
    ///
    /// Consecutive calls continue the same loss and fade further; the fade reaches silence
    /// ``fadeOutSamples`` into the loss. The synthetic audio also becomes history.
    ///
    /// Does not allocate.
    ///
    /// Thread safety: not thread-safe; one thread at a time.
    ///
    /// The corresponding C function is `plc_fillin`.
    public mutating func conceal(_ frame: UnsafeMutableBufferPointer<Int16>) {
        precondition(frame.count <= Int(Int32.max), "buffer too long for spandsp")
        guard let samples = frame.baseAddress, !frame.isEmpty else { return }
        _ = plc_fillin(state, samples, Int32(frame.count))
    }

    /// Records a frame that arrived, blending it in place after a loss (for tools and tests).
    ///
    /// Thread safety: not thread-safe; one thread at a time.
    public mutating func received(_ pcm: inout [Int16]) {
        pcm.withUnsafeMutableBufferPointer { received($0) }
    }

    /// Conceals a lost frame of `count` samples and returns it (allocates; for tools and tests).
    ///
    /// Thread safety: not thread-safe; one thread at a time.
    public mutating func conceal(count: Int) -> [Int16] {
        var frame = [Int16](repeating: 0, count: count)
        frame.withUnsafeMutableBufferPointer { conceal($0) }
        return frame
    }
}

extension PacketLossConcealer: Sendable {}
