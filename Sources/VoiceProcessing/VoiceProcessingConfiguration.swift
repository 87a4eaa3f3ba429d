/// The session modes the unit distinguishes: it processes in the two chat modes and is
/// transparent (leaves the capture untouched) in every other.
///
/// Thread safety: a value type; safe from any thread.
public enum VoiceProcessingMode: UInt8, Sendable, CaseIterable {
    /// A voice call (echo cancellation, noise suppression, AGC).
    case voiceChat
    /// A video call: processed like ``voiceChat``.
    case videoChat
    /// Any other mode: the unit passes the capture through bit-exactly.
    case other

    /// Whether the unit processes in this mode.
    public var isProcessing: Bool { self != .other }
}

/// How much other audio (not the call) is turned down while voice processing runs, as on
/// Apple's voice-processing unit.
///
/// Thread safety: a value type; safe from any thread.
public enum DuckingLevel: UInt8, Sendable, CaseIterable {
    /// The historical amount: -20 dB.
    case `default`
    /// The least ducking: -6 dB.
    case min
    /// Medium: -14 dB.
    case mid
    /// The most: -30 dB.
    case max

    /// The gain applied to other audio, in dB.
    public var gainDB: Double {
        switch self {
        case .default: -20
        case .min: -6
        case .mid: -14
        case .max: -30
        }
    }
}

/// Ducking of other audio: a level, and whether to duck only while someone talks.
///
/// Thread safety: a value type; safe from any thread.
public struct OtherAudioDucking: Sendable, Equatable {
    /// With advanced ducking, other audio is ducked only while either side of the call talks
    /// (and for half a second after); otherwise it is ducked for as long as processing runs.
    public var isAdvanced: Bool
    public var level: DuckingLevel

    public init(isAdvanced: Bool = false, level: DuckingLevel = .default) {
        self.isAdvanced = isAdvanced
        self.level = level
    }
}

/// How the unit places the loudspeaker reference against the echo.
///
/// Thread safety: a value type; safe from any thread.
public enum EchoDelayMode: Sendable, Equatable {
    /// The device delay from ``VoiceProcessingTiming``, refined by the delay estimator.
    case automatic
    /// A fixed delay in seconds from the loudspeaker signal to its echo; device delays and
    /// the estimator are ignored (for benches and known setups).
    case fixed(seconds: Double)
}

/// Which echo canceller the unit runs.
///
/// Thread safety: a value type; safe from any thread.
public enum EchoCancellerBackend: Sendable, Equatable {
    /// SpeexDSP's MDF canceller with this tail, in seconds.
    case speex(tailSeconds: Double)
    /// No cancellation (alignment, suppression and the rest still run).
    case passthrough
}

/// Setup-time configuration of a ``VoiceProcessingUnit``.
///
/// Thread safety: a value type; safe from any thread.
public struct VoiceProcessingConfiguration: Sendable, Equatable {
    /// The device's sampling rate (capture and playback), in Hz.
    public var deviceSampleRate: Int
    /// The rate the canceller and preprocessor run at: 16000 (default) or 48000 Hz.
    public var processingSampleRate: Int
    /// Device frames per ``VoiceProcessingUnit/process(capture:render:timing:)`` call, at most.
    public var maximumFramesPerPeriod: Int
    /// The processing block in milliseconds: 10 (default) or 20.
    public var blockMilliseconds: Int
    public var echoCanceller: EchoCancellerBackend
    public var delay: EchoDelayMode
    /// Whether clock drift between playback and capture is estimated and compensated.
    public var compensatesDrift: Bool
    /// The longest echo delay searched beyond the device delay, in seconds.
    public var maximumEchoDelaySeconds: Double
    /// Residual echo suppression after the linear canceller (SpeexDSP preprocessor).
    public var suppressesResidualEcho: Bool
    /// Noise suppression (SpeexDSP preprocessor).
    public var suppressesNoise: Bool
    /// Whether AGC starts on (it can be switched at run time).
    public var agcEnabled: Bool
    public var mode: VoiceProcessingMode
    public var ducking: OtherAudioDucking
    /// The numbers every stage of the chain works with; the default is the shipped tuning.
    /// Out-of-range values make ``VoiceProcessingUnit/init(configuration:canceller:)`` throw.
    public var tuning: VoiceProcessingTuning

    public init(deviceSampleRate: Int = 16000, processingSampleRate: Int = 16000, maximumFramesPerPeriod: Int = 4096,
                blockMilliseconds: Int = 10, echoCanceller: EchoCancellerBackend = .speex(tailSeconds: 0.256),
                delay: EchoDelayMode = .automatic, compensatesDrift: Bool = true, maximumEchoDelaySeconds: Double = 0.5,
                suppressesResidualEcho: Bool = true, suppressesNoise: Bool = true, agcEnabled: Bool = true,
                mode: VoiceProcessingMode = .voiceChat, ducking: OtherAudioDucking = OtherAudioDucking(),
                tuning: VoiceProcessingTuning = VoiceProcessingTuning()) {
        self.deviceSampleRate = deviceSampleRate
        self.processingSampleRate = processingSampleRate
        self.maximumFramesPerPeriod = maximumFramesPerPeriod
        self.blockMilliseconds = blockMilliseconds
        self.echoCanceller = echoCanceller
        self.delay = delay
        self.compensatesDrift = compensatesDrift
        self.maximumEchoDelaySeconds = maximumEchoDelaySeconds
        self.suppressesResidualEcho = suppressesResidualEcho
        self.suppressesNoise = suppressesNoise
        self.agcEnabled = agcEnabled
        self.mode = mode
        self.ducking = ducking
        self.tuning = tuning
    }
}

/// What the I/O thread knows about the device timing of one period.
///
/// Thread safety: a value type; safe from any thread.
public struct VoiceProcessingTiming: Sendable, Equatable {
    /// Sample frames from writing a loudspeaker sample to reading it back from capture,
    /// before the acoustic path: the period, the playback queue and the capture queue
    /// (`AudioIO/IOTiming/roundTripFrames`, from `snd_pcm_delay` on both streams).
    public var deviceDelayFrames: Int

    public init(deviceDelayFrames: Int = 0) {
        self.deviceDelayFrames = deviceDelayFrames
    }

    /// No known device delay (offline processing).
    public static let zero = VoiceProcessingTiming()
}

/// An invalid voice-processing configuration, or a backend that failed to start.
public struct VoiceProcessingError: Error, Sendable, Equatable, CustomStringConvertible {
    public let message: String
    public init(_ message: String) { self.message = message }
    public var description: String { "voice processing: \(message)" }
}
