import Glibc

/// Comfort noise as RFC 3389 carries it: a silence descriptor whose first byte is the noise
/// level in -dBov (0 to 127), followed by optional spectral coefficients.
///
/// Thread safety: stateless; safe from any thread; does not allocate (real-time safe).
public enum ComfortNoisePayload {
    /// The payload type RFC 3551 assigns comfort noise on an 8 kHz clock.
    public static let payloadType: UInt8 = 13
    /// The longest descriptor taken: the level and up to 63 coefficients (RFC 3389 section 3
    /// sets no limit; a descriptor longer than this is no codec's).
    public static let maximumLength = 64

    /// The level of a silence descriptor in -dBov, or nil when `payload` is not one.
    public static func level(_ payload: UnsafeRawBufferPointer) -> Int? {
        guard (1...maximumLength).contains(payload.count), payload[0] <= 127 else { return nil }
        return Int(payload[0])
    }
}

/// White noise at a level, for the silences a peer describes with comfort noise. The spectral
/// coefficients are not used: the noise is flat, at the descriptor's level.
///
/// Thread safety: a value type owned by one thread (the I/O thread); does not allocate.
struct NoiseGenerator {
    private var state: UInt32 = 0x1234_5678

    /// Fills `samples` with noise whose RMS is `level` dB under a full-scale sine's peak
    /// (0 dBov at 32767).
    mutating func fill(_ samples: UnsafeMutableBufferPointer<Int16>, levelDBov level: Int) {
        // Uniform on [-a, a] has an RMS of a / sqrt(3).
        let rms = 32767 * pow(10, -Double(level) / 20)
        let amplitude = min(32767, rms * 1.7320508)
        for i in samples.indices {
            state = state &* 1_664_525 &+ 1_013_904_223  // Numerical Recipes' LCG
            let unit = Double(state >> 8) / Double(1 << 24) * 2 - 1
            samples[i] = Int16(unit * amplitude)
        }
    }
}
