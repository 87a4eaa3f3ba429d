/// The shape of the audio an I/O engine moves: mono 16-bit frames at one rate,
/// one period at a time.
///
/// Thread safety: a value type; safe to use from any thread.
public struct IOFormat: Sendable, Equatable, CustomStringConvertible {
    /// Frames per second.
    public var sampleRate: Int
    /// Frames per period: the I/O buffer duration.
    public var periodFrames: Int
    /// Frames the playback buffer holds (a few periods).
    public var bufferFrames: Int

    public init(sampleRate: Int, periodFrames: Int, bufferFrames: Int) {
        self.sampleRate = sampleRate
        self.periodFrames = periodFrames
        self.bufferFrames = bufferFrames
    }

    /// The format a session's hardware values ask for: periods of `ioBufferDuration` (at least
    /// 16 frames), and a playback buffer of `periods` of them.
    public init(sampleRate: Int, ioBufferDuration: Double, periods: Int = 4) {
        let period = max(16, Int((ioBufferDuration * Double(sampleRate)).rounded()))
        self.init(sampleRate: sampleRate, periodFrames: period, bufferFrames: period * periods)
    }

    /// Period duration in seconds.
    public var periodDuration: Double { Double(periodFrames) / Double(sampleRate) }

    public var description: String { "\(sampleRate) Hz, period \(periodFrames), buffer \(bufferFrames)" }
}

/// When the audio of one period was captured and when its playback will be heard,
/// as the device reported it in that period.
///
/// Thread safety: a value type; safe to use from any thread.
public struct IOTiming: Sendable, Equatable {
    /// Periods completed before this one since the engine started.
    public var periodIndex: Int
    /// Frames queued in the playback device ahead of this period's first frame when it was
    /// written: that frame is heard `playbackDelayFrames` later (`snd_pcm_delay` before the write).
    public var playbackDelayFrames: Int
    /// Frames captured after this period's last frame and still waiting in the capture
    /// device when it was read (`snd_pcm_delay` after the read).
    public var captureDelayFrames: Int
    /// The engine's estimate of the frames from a frame being written for playback to the
    /// same frame being read back from capture through an acoustic loopback (period +
    /// playback delay + capture delay, median over the last second): the device part of
    /// the echo delay, which an echo canceller's reference should be delayed by.
    public var roundTripFrames: Int
    /// How much the device's round-trip readings scatter over the last second (their
    /// interquartile range): how far ``roundTripFrames`` may be from the truth on a device
    /// whose reports wander (the `pulse` plugin on pipewire-pulse), 0 on one that is exact.
    public var roundTripJitterFrames: Int
    /// Monotonic time (nanoseconds) when the capture read returned.
    public var hostTimeNanoseconds: UInt64
    /// Xruns recovered so far, capture and playback together.
    public var xruns: Int

    public init(periodIndex: Int = 0, playbackDelayFrames: Int = 0, captureDelayFrames: Int = 0,
                roundTripFrames: Int = 0, roundTripJitterFrames: Int = 0, hostTimeNanoseconds: UInt64 = 0, xruns: Int = 0) {
        self.periodIndex = periodIndex
        self.playbackDelayFrames = playbackDelayFrames
        self.captureDelayFrames = captureDelayFrames
        self.roundTripFrames = roundTripFrames
        self.roundTripJitterFrames = roundTripJitterFrames
        self.hostTimeNanoseconds = hostTimeNanoseconds
        self.xruns = xruns
    }
}

/// One period handed to the processing callback: the capture just read and the
/// playback buffer to fill, both preallocated mono 16-bit.
///
/// The buffers are valid only during the call. `capture` may be modified in place
/// (it is not written anywhere by the engine afterwards).
///
/// Thread safety: passed on the I/O thread; do not keep or share it.
public struct IOCycle {
    public let capture: UnsafeMutableBufferPointer<Int16>
    public let playback: UnsafeMutableBufferPointer<Int16>
    public let timing: IOTiming
}

/// Why an I/O engine or device failed.
///
/// Thread safety: a value type; safe to use from any thread.
public enum IOError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The PCM name does not exist; `available` lists the PCMs the system defines.
    case noSuchPCM(name: String, available: [String])
    /// alsa-lib failed (code and message) while doing `context`.
    case alsa(code: Int32, message: String, context: String)
    /// Capture and playback could not agree on a format (e.g. different granted rates).
    case formatMismatch(String)
    /// The engine is already running / not running.
    case invalidState(String)
    /// The real-time thread could not be created.
    case threadCreation(Int32)

    public var description: String {
        switch self {
        case let .noSuchPCM(name, available):
            return "no ALSA PCM named '\(name)'; available: \(available.isEmpty ? "(none)" : available.joined(separator: ", "))"
        case let .alsa(code, message, context):
            return "ALSA error \(code) (\(message)) in \(context)"
        case let .formatMismatch(detail):
            return "capture and playback formats differ: \(detail)"
        case let .invalidState(detail):
            return "invalid engine state: \(detail)"
        case let .threadCreation(code):
            return "cannot create the I/O thread (errno \(code))"
        }
    }
}
