import Glibc

/// Silence suppression with comfort noise (RFC 3389) for G.711 and G.722, whose encoders have
/// no DTX of their own: while the microphone carries only background noise, the frames are not
/// sent; a silence descriptor (the noise level in -dBov) goes at the start of the silence and
/// again every half second or when the level moves, so the peer plays noise at that level
/// instead of dead air. As pjsua's VAD and Asterisk's, by level: a frame is speech when it is
/// over ``speechThresholdDBov``, and a silence begins only after ``hangoverFrames`` quiet frames,
/// so the ends of words are sent.
///
/// Thread safety: a value type owned by the sending (I/O) thread; does not allocate.
public struct SilenceSuppressor: Sendable {
    /// What to do with one frame.
    public enum Decision: Sendable, Equatable {
        /// Send the frame's audio.
        case speech
        /// Send a silence descriptor with this level (-dBov, 0 ... 127) in place of the frame.
        case descriptor(level: Int)
        /// Send nothing: the peer goes on with its comfort noise.
        case skip
    }

    /// A frame louder than this (RMS, dB under full scale) is speech. Background noise after
    /// the voice processing's noise suppression sits far below it; quiet speech above it.
    public static let speechThresholdDBov = -50.0
    /// Quiet frames sent before a silence begins (200 ms of 20 ms frames).
    public static let hangoverFrames = 10
    /// Frames between two descriptors in a silence (half a second of 20 ms frames).
    public static let refreshFrames = 25
    /// A level change that sends a descriptor at once, in dB.
    public static let levelStepDB = 3

    private var quietFrames = 0
    private var lastLevel: Int?
    private var framesSinceDescriptor = 0

    public init() {}

    /// The decision for `pcm`, one frame of 16-bit samples.
    public mutating func decide(_ pcm: UnsafeBufferPointer<Int16>) -> Decision {
        let level = Self.levelDBov(pcm)
        guard -Double(level) <= Self.speechThresholdDBov else {
            quietFrames = 0
            lastLevel = nil
            return .speech
        }
        quietFrames += 1
        guard quietFrames > Self.hangoverFrames else { return .speech }
        framesSinceDescriptor += 1
        if let last = lastLevel, abs(last - level) < Self.levelStepDB, framesSinceDescriptor < Self.refreshFrames { return .skip }
        lastLevel = level
        framesSinceDescriptor = 0
        return .descriptor(level: level)
    }

    /// The frame's RMS level in -dBov as RFC 3389 writes it (0: full scale, 127: digital silence).
    static func levelDBov(_ pcm: UnsafeBufferPointer<Int16>) -> Int {
        guard !pcm.isEmpty else { return 127 }
        var energy = 0.0
        for sample in pcm { energy += Double(sample) * Double(sample) }
        let rms = (energy / Double(pcm.count)).squareRoot()
        guard rms >= 1 else { return 127 }
        return min(127, max(0, Int((-20 * log10(rms / 32767)).rounded())))
    }
}
