import CSpanDSP

/// A G.722 (ITU-T G.722, sub-band ADPCM) encoder at 64 kb/s: 16 kHz audio, two samples per byte.
///
/// RTP quirk (RFC 3551, section 4.5.2): G.722 samples at 16 kHz, but its RTP clock runs at
/// 8000 Hz, an error in the original RFC 1890 kept for compatibility. A 20 ms packet holds 320
/// samples in 160 bytes and advances the RTP timestamp by 160, not 320: use ``rtpClockRate``
/// for timestamps and SDP (`a=rtpmap:9 G722/8000`), ``sampleRate`` for audio.
///
/// The codec is stateful (ADPCM predictors, the QMF filter bank), so a stream needs one encoder
/// for its life; bytes are unpacked, one 8-bit code per pair of samples.
///
/// Thread safety: not thread-safe; one thread at a time. It may move between threads: it is
/// `Sendable` and non-copyable, so exactly one owner holds it.
public struct G722Encoder: ~Copyable {
    /// The state. `nonisolated(unsafe)` because a pointer is not `Sendable`: the encoder is
    /// non-copyable and every use of the state is `mutating` or in `deinit`, so only the one
    /// owner ever reaches it, one thread at a time.
    nonisolated(unsafe) private let state: OpaquePointer

    /// The audio sampling rate, in Hz.
    ///
    /// Thread safety: a constant; safe from any thread.
    public static let sampleRate = 16000
    /// The RTP timestamp rate, in Hz: half the sampling rate (RFC 3551).
    ///
    /// Thread safety: a constant; safe from any thread.
    public static let rtpClockRate = 8000
    /// The bit rate, in bits per second (G.722 mode 1: 6 bits low band, 2 bits high band).
    ///
    /// Thread safety: a constant; safe from any thread.
    public static let bitRate = 64000

    /// Makes an encoder at 64 kb/s for 16 kHz audio.
    ///
    /// - Throws: ``SpanDSPError/allocationFailed`` if spandsp cannot allocate the state.
    ///
    /// Thread safety: safe from any thread.
    ///
    /// The corresponding C function is `g722_encode_init`.
    public init() throws(SpanDSPError) {
        // No G722_PACKED (it only matters at 56 and 48 kb/s) and no G722_SAMPLE_RATE_8000.
        guard let state = g722_encode_init(nil, Int32(Self.bitRate), 0) else { throw .allocationFailed }
        self.state = state
    }

    deinit { g722_encode_free(state) }

    /// Encodes `pcm` into `bytes`, one byte per two samples.
    ///
    /// - Parameters:
    ///   - pcm: 16 kHz linear samples, an even count (a precondition: spandsp reads samples in
    ///     pairs and would read past an odd buffer's end).
    ///   - bytes: room for at least `pcm.count / 2` bytes (a precondition).
    /// - Returns: the bytes written, `pcm.count / 2`.
    ///
    /// Does not allocate.
    ///
    /// Thread safety: not thread-safe; one thread at a time.
    ///
    /// The corresponding C function is `g722_encode`.
    public mutating func encode(_ pcm: UnsafeBufferPointer<Int16>, into bytes: UnsafeMutableRawBufferPointer) -> Int {
        precondition(pcm.count.isMultiple(of: 2), "G.722 encodes samples in pairs: \(pcm.count) samples")
        precondition(bytes.count >= pcm.count / 2, "G.722 needs a byte per two samples: \(pcm.count) samples, \(bytes.count) bytes")
        precondition(pcm.count <= Int(Int32.max), "buffer too long for spandsp")
        guard let input = pcm.baseAddress, let output = bytes.baseAddress, !pcm.isEmpty else { return 0 }
        return Int(g722_encode(state, output.assumingMemoryBound(to: UInt8.self), input, Int32(pcm.count)))
    }

    /// Encodes `pcm` and returns the bytes (allocates; for tools and tests).
    ///
    /// Thread safety: not thread-safe; one thread at a time.
    public mutating func encode(_ pcm: [Int16]) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: pcm.count / 2) { bytes, count in
            count = pcm.withUnsafeBufferPointer { encode($0, into: UnsafeMutableRawBufferPointer(bytes)) }
        }
    }
}

/// A G.722 decoder at 64 kb/s: one byte in, two 16 kHz samples out.
///
/// The RTP clock of a G.722 stream runs at 8000 Hz though the audio is 16 kHz (RFC 3551): see
/// ``G722Encoder``. The decoder is stateful, so a stream needs one for its life; there is no
/// concealment for a lost packet here (see ``PacketLossConcealer``, which works at 8 kHz).
///
/// Thread safety: not thread-safe; one thread at a time. It may move between threads: it is
/// `Sendable` and non-copyable, so exactly one owner holds it.
public struct G722Decoder: ~Copyable {
    /// The state; `nonisolated(unsafe)` for the reason ``G722Encoder`` gives.
    nonisolated(unsafe) private let state: OpaquePointer

    /// The audio sampling rate, in Hz.
    ///
    /// Thread safety: a constant; safe from any thread.
    public static let sampleRate = G722Encoder.sampleRate
    /// The RTP timestamp rate, in Hz: half the sampling rate (RFC 3551).
    ///
    /// Thread safety: a constant; safe from any thread.
    public static let rtpClockRate = G722Encoder.rtpClockRate
    /// The bit rate, in bits per second.
    ///
    /// Thread safety: a constant; safe from any thread.
    public static let bitRate = G722Encoder.bitRate

    /// Makes a decoder for 64 kb/s G.722 giving 16 kHz audio.
    ///
    /// - Throws: ``SpanDSPError/allocationFailed`` if spandsp cannot allocate the state.
    ///
    /// Thread safety: safe from any thread.
    ///
    /// The corresponding C function is `g722_decode_init`.
    public init() throws(SpanDSPError) {
        guard let state = g722_decode_init(nil, Int32(Self.bitRate), 0) else { throw .allocationFailed }
        self.state = state
    }

    deinit { g722_decode_free(state) }

    /// Forgets the stream so far, as a new decoder would (a new source, a restarted stream).
    ///
    /// Does not allocate: the state is reinitialised in place.
    ///
    /// Thread safety: not thread-safe; one thread at a time.
    ///
    /// The corresponding C function is `g722_decode_init`, given the existing state.
    public mutating func reset() {
        _ = g722_decode_init(state, Int32(Self.bitRate), 0)
    }

    /// Decodes `bytes` into `pcm`, two samples per byte.
    ///
    /// - Parameters:
    ///   - bytes: G.722 codes, as an RTP payload carries them.
    ///   - pcm: room for at least `2 * bytes.count` samples (a precondition).
    /// - Returns: the samples written, `2 * bytes.count`.
    ///
    /// Does not allocate.
    ///
    /// Thread safety: not thread-safe; one thread at a time.
    ///
    /// The corresponding C function is `g722_decode`.
    public mutating func decode(_ bytes: UnsafeRawBufferPointer, into pcm: UnsafeMutableBufferPointer<Int16>) -> Int {
        precondition(pcm.count / 2 >= bytes.count, "G.722 gives two samples per byte: \(bytes.count) bytes, room for \(pcm.count)")
        guard let input = bytes.baseAddress, let output = pcm.baseAddress, !bytes.isEmpty else { return 0 }
        return Int(g722_decode(state, output, input.assumingMemoryBound(to: UInt8.self), Int32(bytes.count)))
    }

    /// Decodes `bytes` and returns the samples (allocates; for tools and tests).
    ///
    /// Thread safety: not thread-safe; one thread at a time.
    public mutating func decode(_ bytes: [UInt8]) -> [Int16] {
        [Int16](unsafeUninitializedCapacity: bytes.count * 2) { pcm, count in
            count = bytes.withUnsafeBytes { decode($0, into: pcm) }
        }
    }
}

extension G722Encoder: Sendable {}
extension G722Decoder: Sendable {}
