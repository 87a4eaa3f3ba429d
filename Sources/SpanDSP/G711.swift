import CSpanDSP

/// The companding law of a G.711 stream.
///
/// Thread safety: a value type; safe to use from any thread.
public enum G711Law: Sendable, Hashable, CaseIterable {
    /// μ-law (PCMU, RTP payload type 0): North America and Japan.
    case mulaw
    /// A-law (PCMA, RTP payload type 8): everywhere else.
    case alaw
}

/// G.711 (ITU-T G.711) encoding and decoding: 8 kHz audio, one byte per sample, in either law.
///
/// The conversions are spandsp's inline `linear_to_ulaw`, `ulaw_to_linear`, `linear_to_alaw`
/// and `alaw_to_linear`, which compute each code (no table, no state), so G.711 needs no codec
/// object and the buffer calls never allocate: they may run on a real-time audio thread.
///
/// Samples are 16-bit linear; G.711 carries 14 (μ-law) or 13 (A-law) bits of them, so decoded
/// levels are multiples of 4 or 8, and full scale is 32124 (μ-law 0x80) or 32256 (A-law 0xAA).
///
/// Thread safety: stateless; every function is safe from any thread.
public enum G711 {
    /// The sampling rate G.711 is defined at, in Hz; the RTP clock runs at the same rate.
    ///
    /// Thread safety: a constant; safe from any thread.
    public static let sampleRate = 8000

    /// Encodes `pcm` into `bytes`, one byte per sample.
    ///
    /// - Parameters:
    ///   - pcm: 8 kHz linear samples.
    ///   - law: μ-law or A-law.
    ///   - bytes: room for at least `pcm.count` bytes (a precondition).
    /// - Returns: the bytes written, `pcm.count`.
    ///
    /// Does not allocate.
    ///
    /// Thread safety: safe from any thread, given buffers no other thread writes.
    ///
    /// The corresponding C functions are `linear_to_ulaw` and `linear_to_alaw`.
    public static func encode(_ pcm: UnsafeBufferPointer<Int16>, law: G711Law,
                              into bytes: UnsafeMutableRawBufferPointer) -> Int {
        precondition(bytes.count >= pcm.count, "G.711 needs a byte per sample: \(pcm.count) samples, \(bytes.count) bytes")
        // The law is chosen once per buffer, not per sample.
        switch law {
        case .mulaw: for i in pcm.indices { bytes[i] = linear_to_ulaw(Int32(pcm[i])) }
        case .alaw: for i in pcm.indices { bytes[i] = linear_to_alaw(Int32(pcm[i])) }
        }
        return pcm.count
    }

    /// Decodes `bytes` into `pcm`, one sample per byte.
    ///
    /// - Parameters:
    ///   - bytes: G.711 codes, as an RTP payload carries them.
    ///   - law: μ-law or A-law.
    ///   - pcm: room for at least `bytes.count` samples (a precondition).
    /// - Returns: the samples written, `bytes.count`.
    ///
    /// Does not allocate.
    ///
    /// Thread safety: safe from any thread, given buffers no other thread writes.
    ///
    /// The corresponding C functions are `ulaw_to_linear` and `alaw_to_linear`.
    public static func decode(_ bytes: UnsafeRawBufferPointer, law: G711Law,
                              into pcm: UnsafeMutableBufferPointer<Int16>) -> Int {
        precondition(pcm.count >= bytes.count, "G.711 gives a sample per byte: \(bytes.count) bytes, room for \(pcm.count)")
        switch law {
        case .mulaw: for i in bytes.indices { pcm[i] = ulaw_to_linear(bytes[i]) }
        case .alaw: for i in bytes.indices { pcm[i] = alaw_to_linear(bytes[i]) }
        }
        return bytes.count
    }

    /// Encodes one sample.
    ///
    /// Thread safety: safe from any thread.
    public static func encode(_ sample: Int16, law: G711Law) -> UInt8 {
        law == .mulaw ? linear_to_ulaw(Int32(sample)) : linear_to_alaw(Int32(sample))
    }

    /// Decodes one code.
    ///
    /// Thread safety: safe from any thread.
    public static func decode(_ byte: UInt8, law: G711Law) -> Int16 {
        law == .mulaw ? ulaw_to_linear(byte) : alaw_to_linear(byte)
    }

    /// Encodes `pcm` and returns the bytes (allocates; for tools and tests).
    ///
    /// Thread safety: safe from any thread.
    public static func encode(_ pcm: [Int16], law: G711Law) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: pcm.count) { bytes, count in
            count = pcm.withUnsafeBufferPointer { encode($0, law: law, into: UnsafeMutableRawBufferPointer(bytes)) }
        }
    }

    /// Decodes `bytes` and returns the samples (allocates; for tools and tests).
    ///
    /// Thread safety: safe from any thread.
    public static func decode(_ bytes: [UInt8], law: G711Law) -> [Int16] {
        [Int16](unsafeUninitializedCapacity: bytes.count) { pcm, count in
            count = bytes.withUnsafeBytes { decode($0, law: law, into: pcm) }
        }
    }
}
