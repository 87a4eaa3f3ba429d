import CALSA

/// The direction of a PCM stream.
///
/// Thread safety: a value type; safe to use from any thread.
public enum PCMStream: String, Sendable, CaseIterable {
    case playback, capture

    var cValue: snd_pcm_stream_t { self == .playback ? SND_PCM_STREAM_PLAYBACK : SND_PCM_STREAM_CAPTURE }
}

/// Sample formats the wrapper negotiates (interleaved, little-endian).
public enum PCMSampleFormat: String, Sendable, CaseIterable {
    case int16, int32, float32

    /// Bytes per sample of one channel.
    public var bytesPerSample: Int { self == .int16 ? 2 : 4 }

    var cValue: snd_pcm_format_t {
        switch self {
        case .int16: SND_PCM_FORMAT_S16_LE
        case .int32: SND_PCM_FORMAT_S32_LE
        case .float32: SND_PCM_FORMAT_FLOAT_LE
        }
    }
}

/// Hardware parameters: what is asked for and, after negotiation, what the device granted.
///
/// Thread safety: a value type; safe to use from any thread.
public struct PCMParameters: Sendable, Equatable, CustomStringConvertible {
    /// Frames per second.
    public var sampleRate: Int
    /// Interleaved channels.
    public var channels: Int
    /// Sample format.
    public var format: PCMSampleFormat
    /// Frames per period: how much is moved per wake-up (the I/O buffer duration).
    public var periodFrames: Int
    /// Frames in the whole ring buffer (normally a few periods).
    public var bufferFrames: Int

    public init(sampleRate: Int = 48000, channels: Int = 1, format: PCMSampleFormat = .int16,
                periodFrames: Int = 960, bufferFrames: Int? = nil) {
        self.sampleRate = sampleRate
        self.channels = channels
        self.format = format
        self.periodFrames = periodFrames
        self.bufferFrames = bufferFrames ?? periodFrames * 4
    }

    /// Bytes per frame (all channels).
    public var bytesPerFrame: Int { channels * format.bytesPerSample }

    /// Period duration in seconds.
    public var periodDuration: Double { Double(periodFrames) / Double(sampleRate) }

    public var description: String {
        "\(sampleRate) Hz, \(channels) ch, \(format.rawValue), period \(periodFrames), buffer \(bufferFrames)"
    }
}

/// A PCM the ALSA configuration defines, as listed by `snd_device_name_hint`.
public struct PCMDeviceInfo: Sendable, Equatable {
    /// The name to open (`default`, `pulse`, `hw:CARD=...`).
    public var name: String
    /// ALSA's description, one line.
    public var description: String
    /// Directions it supports.
    public var streams: Set<PCMStream>
}
