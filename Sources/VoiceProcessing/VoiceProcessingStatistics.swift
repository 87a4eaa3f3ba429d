import Synchronization

/// A snapshot of what the unit measures, readable from any thread.
///
/// Thread safety: a value type; safe from any thread.
public struct VoiceProcessingStatistics: Sendable, Equatable {
    /// Delay from writing a loudspeaker sample to reading its echo, in milliseconds: the
    /// estimator's measurement when it has locked, else the device delay (nil before either).
    public var estimatedDelayMs: Double?
    /// The device delay reported through ``VoiceProcessingTiming``, smoothed, in milliseconds.
    public var deviceDelayMs: Double?
    /// The delay applied to the reference (includes the 4 ms placement margin), in milliseconds.
    public var referenceDelayMs: Double
    /// The clock drift being compensated (capture against playback, parts per million; positive:
    /// the capture clock is faster), nil until the drift estimator first trusts its slope.
    public var driftPPM: Double?
    /// Echo removed by the linear canceller, in dB, averaged over recent far-end activity
    /// (nil before any far-end activity).
    public var erleDB: Double?
    /// Whether the last block held near-end speech.
    public var isVoiceActive: Bool
    /// How many times the near end started talking while muted.
    public var speechWhileMutedEvents: Int
    /// Whether the near end is talking while muted now.
    public var isSpeakingWhileMuted: Bool
    public var isBypassed: Bool
    public var isInputMuted: Bool
    public var isAGCEnabled: Bool
    public var mode: VoiceProcessingMode
    /// The gain to apply to other audio now (ducking), linear.
    public var otherAudioGain: Float
    /// Times the canceller was reset: realignments, divergence, detected echo-path changes.
    public var cancellerResets: Int
    /// Jumps of the echo's delay the reference followed without a reset (found by the echo shift
    /// detector, or a step of the device's delay the echo confirmed).
    public var echoMoves: Int
    /// Whether the microphone hears the far end: while it is ``EchoPathState/absent`` the near end
    /// is neither gated nor suppressed.
    public var echoPath: EchoPathState
    /// Processing blocks run so far.
    public var blocksProcessed: Int
    /// Capture delay the unit adds (framing and rate conversion), in milliseconds.
    public var addedLatencyMs: Double
}

/// State shared between the I/O thread (writes stats, reads controls) and other threads.
///
/// Every field is an atomic: relaxed ordering is enough, because each value stands alone
/// (no reader needs two fields to agree). Doubles travel as bit patterns.
final class SharedState: Sendable {
    // Controls, written by any thread, read by the I/O thread.
    let bypass = Atomic<Bool>(false)
    let muted = Atomic<Bool>(false)
    let agc = Atomic<Bool>(true)
    let mode = Atomic<UInt8>(VoiceProcessingMode.voiceChat.rawValue)
    let duckingAdvanced = Atomic<Bool>(false)
    let duckingLevel = Atomic<UInt8>(DuckingLevel.default.rawValue)

    // Statistics, written by the I/O thread.
    let estimatedDelay = Atomic<UInt64>(Double.nan.bitPattern)
    let deviceDelay = Atomic<UInt64>(Double.nan.bitPattern)
    let referenceDelay = Atomic<UInt64>(0)
    let drift = Atomic<UInt64>(Double.nan.bitPattern)
    let erle = Atomic<UInt64>(Double.nan.bitPattern)
    let voiceActive = Atomic<Bool>(false)
    let mutedSpeechEvents = Atomic<Int>(0)
    let speakingWhileMuted = Atomic<Bool>(false)
    let otherAudioGain = Atomic<UInt32>(Float(1).bitPattern)
    let resets = Atomic<Int>(0)
    let echoMoves = Atomic<Int>(0)
    let echoPath = Atomic<UInt8>(EchoPathState.unknown.rawValue)
    let blocks = Atomic<Int>(0)
    let addedLatency = Atomic<UInt64>(0)

    @inline(__always) static func store(_ value: Double?, _ atomic: borrowing Atomic<UInt64>) {
        atomic.store((value ?? .nan).bitPattern, ordering: .relaxed)
    }

    @inline(__always) static func load(_ atomic: borrowing Atomic<UInt64>) -> Double? {
        let v = Double(bitPattern: atomic.load(ordering: .relaxed))
        return v.isNaN ? nil : v
    }
}
