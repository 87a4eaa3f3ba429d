import COpus

/// The coding mode an encoder is tuned for.
///
/// Thread safety: a value type; safe to use from any thread.
public enum OpusApplication: Sendable, CaseIterable {
    /// Best for most VoIP and videoconference applications (`OPUS_APPLICATION_VOIP`).
    case voip
    /// Best for broadcast and high-fidelity music (`OPUS_APPLICATION_AUDIO`).
    case audio
    /// Lowest achievable latency, no speech modes (`OPUS_APPLICATION_RESTRICTED_LOWDELAY`).
    case restrictedLowDelay

    var cValue: Int32 {
        switch self {
        case .voip: OPUS_APPLICATION_VOIP
        case .audio: OPUS_APPLICATION_AUDIO
        case .restrictedLowDelay: OPUS_APPLICATION_RESTRICTED_LOWDELAY
        }
    }
}

/// A hint about the signal being encoded.
public enum OpusSignal: Sendable, CaseIterable {
    case auto, voice, music

    var cValue: Int32 {
        switch self {
        case .auto: OPUS_AUTO
        case .voice: OPUS_SIGNAL_VOICE
        case .music: OPUS_SIGNAL_MUSIC
        }
    }

    init(cValue: Int32) {
        switch cValue {
        case OPUS_SIGNAL_VOICE: self = .voice
        case OPUS_SIGNAL_MUSIC: self = .music
        default: self = .auto
        }
    }
}

/// Audio bandwidth, from narrowband (4 kHz) to fullband (20 kHz).
public enum OpusBandwidth: Sendable, CaseIterable, Comparable {
    case narrowband, mediumband, wideband, superwideband, fullband

    var cValue: Int32 {
        switch self {
        case .narrowband: OPUS_BANDWIDTH_NARROWBAND
        case .mediumband: OPUS_BANDWIDTH_MEDIUMBAND
        case .wideband: OPUS_BANDWIDTH_WIDEBAND
        case .superwideband: OPUS_BANDWIDTH_SUPERWIDEBAND
        case .fullband: OPUS_BANDWIDTH_FULLBAND
        }
    }

    init?(cValue: Int32) {
        guard let match = Self.allCases.first(where: { $0.cValue == cValue }) else { return nil }
        self = match
    }
}

/// Sample rates and frame durations libopus accepts.
///
/// Thread safety: stateless; safe from any thread.
public enum OpusFormat {
    /// The rates an encoder or decoder can run at, in Hz.
    public static let sampleRates = [8000, 12000, 16000, 24000, 48000]

    /// Frame durations an encoder accepts, in tenths of a millisecond (2.5 ms ... 60 ms).
    public static let frameDurationsTenthsMs = [25, 50, 100, 200, 400, 600]

    /// The longest frame a decoder may be asked for (120 ms, the Opus maximum packet duration).
    public static let maxDecodeMilliseconds = 120

    /// Frames per channel in a frame of `tenthsMs` at `sampleRate`.
    public static func frames(tenthsMs: Int, sampleRate: Int) -> Int { sampleRate * tenthsMs / 10_000 }

    /// Whether `frames` samples per channel is a frame duration an encoder accepts at `sampleRate`.
    /// Called for every frame on the audio thread: arithmetic only, since walking
    /// ``frameDurationsTenthsMs`` allocates in unoptimised builds. The cases are that list
    /// (OpusTests checks that they agree).
    public static func isValidEncoderFrameCount(_ frames: Int, sampleRate: Int) -> Bool {
        let tenths = frames * 10_000
        guard sampleRate > 0, frames > 0, tenths % sampleRate == 0 else { return false }
        switch tenths / sampleRate {
        case 25, 50, 100, 200, 400, 600: return true
        default: return false
        }
    }

    static func checkRate(_ rate: Int) throws(OpusError) {
        guard sampleRates.contains(rate) else {
            throw OpusError(code: OPUS_BAD_ARG, detail: "sample rate \(rate) Hz is not one of 8000, 12000, 16000, 24000, 48000")
        }
    }

    static func checkChannels(_ channels: Int) throws(OpusError) {
        guard channels == 1 || channels == 2 else {
            throw OpusError(code: OPUS_BAD_ARG, detail: "\(channels) channels (1 or 2 are supported)")
        }
    }
}
