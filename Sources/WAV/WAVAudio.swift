/// How samples are stored in a WAV file.
///
/// Thread safety: a value type; safe to use from any thread.
public enum WAVSampleFormat: String, Sendable, Equatable, CaseIterable {
    /// Linear PCM, signed 16-bit little-endian (`WAVE_FORMAT_PCM`, 16 bits).
    case int16
    /// IEEE 754 32-bit float little-endian (`WAVE_FORMAT_IEEE_FLOAT`, 32 bits).
    case float32

    /// Bytes one sample of one channel takes.
    public var bytesPerSample: Int {
        switch self {
        case .int16: 2
        case .float32: 4
        }
    }
}

/// Audio read from or to be written to a WAV file: interleaved samples in [-1, 1].
///
/// Samples are kept as `Float` whatever the file's format, so 16-bit audio
/// round-trips exactly (`Int16(x) / 32768` is representable and converts back
/// without loss).
///
/// Thread safety: a value type; safe to use from any thread.
public struct WAVAudio: Sendable, Equatable {
    /// Frames per second.
    public var sampleRate: Int
    /// Interleaved channels (1 or 2).
    public var channels: Int
    /// The format read from the file, or the one to write.
    public var format: WAVSampleFormat
    /// Interleaved samples, nominally in [-1, 1].
    public var samples: [Float]

    /// Creates audio from interleaved float samples.
    public init(sampleRate: Int, channels: Int = 1, format: WAVSampleFormat = .int16, samples: [Float]) {
        self.sampleRate = sampleRate
        self.channels = channels
        self.format = format
        self.samples = samples
    }

    /// Creates 16-bit audio from interleaved `Int16` samples.
    public init(sampleRate: Int, channels: Int = 1, int16Samples: [Int16]) {
        self.init(sampleRate: sampleRate, channels: channels, format: .int16,
                  samples: int16Samples.map { Float($0) / 32768 })
    }

    /// Number of frames (samples per channel).
    public var frameCount: Int { channels > 0 ? samples.count / channels : 0 }

    /// Duration in seconds.
    public var duration: Double { sampleRate > 0 ? Double(frameCount) / Double(sampleRate) : 0 }

    /// The samples as 16-bit integers, rounded and clipped.
    public var int16Samples: [Int16] { samples.map(WAVAudio.int16) }

    /// The first channel only (the audio itself if mono).
    public var mono: [Float] {
        guard channels > 1 else { return samples }
        return stride(from: 0, to: samples.count - channels + 1, by: channels).map { samples[$0] }
    }

    /// Converts one float sample to 16 bits, rounding to nearest and clipping.
    @inlinable
    public static func int16(_ x: Float) -> Int16 {
        let scaled = (x * 32768).rounded()
        return Int16(max(-32768, min(32767, scaled)))
    }
}
