import Platform
public import AudioIO

public import WAV
import AudioAnalysis
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A full-duplex device that is a room instead of a sound card: what is played goes
/// through an ``Simulation/EchoPath`` (room response, bulk delay, loudspeaker
/// nonlinearity, clock drift) and comes back on capture, added to near-end speech and
/// noise. It runs as fast as possible or paced in real time, and records what was
/// played and captured.
///
/// Device latency is modelled like a sound card's: playback goes through a queue of
/// `prefillPeriods` periods before it reaches the loudspeaker, so the round trip it
/// reports (``IOTiming/roundTripFrames``) is exactly `prefillPeriods` periods, plus the
/// echo path's own (unreported) bulk delay.
///
/// Thread safety: configure on a control thread; the ``DuplexDevice`` methods are then
/// called by the I/O engine's thread only, and never allocate. ``recording`` may be
/// read after the engine has stopped.
public final class SimulatedRoomDevice: DuplexDevice, @unchecked Sendable {
    // @unchecked: the buffers are used by the I/O thread between start() and stop(),
    // and by the control thread only before start() or after stop().

    /// What the room is made of.
    public struct Configuration: Sendable {
        /// Frames per second.
        public var sampleRate: Int
        /// Frames per period.
        public var periodFrames: Int
        /// Playback periods queued ahead of the loudspeaker.
        public var prefillPeriods: Int
        /// The loudspeaker-to-microphone echo.
        public var echoPath: EchoPathConfiguration
        /// The near-end talker at the microphone, at `sampleRate` (nominally in [-1, 1]).
        public var nearSpeech: [Float]
        /// Whether the near-end speech starts over when it ends (else silence follows).
        public var loopNearSpeech: Bool
        /// Microphone self-noise, RMS relative to full scale.
        public var noiseRMS: Double
        /// Whether reads wait for real time, as a sound card would.
        public var paced: Bool
        /// The longest recording kept of what was played and captured, in seconds.
        public var recordSeconds: Double
        /// Seed of the noise.
        public var seed: UInt64

        public init(sampleRate: Int = 16000, periodFrames: Int = 320, prefillPeriods: Int = 2,
                    echoPath: EchoPathConfiguration, nearSpeech: [Float] = [], loopNearSpeech: Bool = true,
                    noiseRMS: Double = 0.0003, paced: Bool = false, recordSeconds: Double = 60, seed: UInt64 = 1) {
            self.sampleRate = sampleRate
            self.periodFrames = periodFrames
            self.prefillPeriods = prefillPeriods
            self.echoPath = echoPath
            self.nearSpeech = nearSpeech
            self.loopNearSpeech = loopNearSpeech
            self.noiseRMS = noiseRMS
            self.paced = paced
            self.recordSeconds = recordSeconds
            self.seed = seed
        }
    }

    public let name: String
    public let format: IOFormat
    public var xrunCount: Int { 0 }
    private let configuration: Configuration
    private let echoPath: EchoPath
    private let queue: UnsafeMutableBufferPointer<Int16>       // playback periods waiting for the loudspeaker
    private var queueStart = 0, queuedPeriods = 0
    private let speaker: UnsafeMutableBufferPointer<Float>      // the period reaching the loudspeaker
    private let echo: UnsafeMutableBufferPointer<Float>
    private let near: UnsafeMutableBufferPointer<Float>
    private var nearPosition = 0
    private var noise: SeededRandom
    private let played: UnsafeMutableBufferPointer<Float>       // recording: loudspeaker signal
    private let captured: UnsafeMutableBufferPointer<Float>     // recording: microphone signal
    private let echoRecord: UnsafeMutableBufferPointer<Float>   // recording: the echo alone (ground truth)
    private var recorded = 0
    private var nextDeadline: UInt64 = 0
    private let started = Atomic<UInt64>(0)

    /// When the device started (monotonic nanoseconds): sample `i` of the recording, and of the
    /// near-end speech, belongs to `startTime + i / sampleRate`.
    public var startTimeNanoseconds: UInt64 { started.load(ordering: .acquiring) }

    /// Builds the room.
    /// - Throws: ``Simulation/EchoPathError`` for an invalid echo path.
    public init(_ configuration: Configuration, name: String = "simulated room") throws(EchoPathError) {
        precondition(configuration.periodFrames > 0 && configuration.prefillPeriods >= 1)
        self.configuration = configuration
        self.name = name
        var echoConfig = configuration.echoPath
        echoConfig.sampleRate = configuration.sampleRate
        echoPath = try EchoPath(echoConfig)
        let p = configuration.periodFrames
        format = IOFormat(sampleRate: configuration.sampleRate, periodFrames: p, bufferFrames: p * (configuration.prefillPeriods + 1))
        queue = .allocate(capacity: p * (configuration.prefillPeriods + 1))
        queue.initialize(repeating: 0)
        speaker = .allocate(capacity: p); speaker.initialize(repeating: 0)
        echo = .allocate(capacity: p); echo.initialize(repeating: 0)
        near = .allocate(capacity: max(1, configuration.nearSpeech.count))
        _ = near.initialize(from: configuration.nearSpeech.isEmpty ? [0] : configuration.nearSpeech)
        noise = SeededRandom(seed: configuration.seed)
        let capacity = Int(configuration.recordSeconds * Double(configuration.sampleRate))
        played = Self.zeroed(capacity)
        captured = Self.zeroed(capacity)
        echoRecord = Self.zeroed(capacity)
    }

    /// A zeroed buffer: `memset`, not an element loop, which took 8 to 12 s in a debug build for
    /// the 10 minutes `voicecall phone` records (and held the call controller meanwhile).
    private static func zeroed(_ count: Int) -> UnsafeMutableBufferPointer<Float> {
        let buffer = UnsafeMutableBufferPointer<Float>.allocate(capacity: max(1, count))
        memset(buffer.baseAddress!, 0, buffer.count * MemoryLayout<Float>.stride)
        return buffer
    }

    deinit {
        for buffer in [speaker, echo, near, played, captured, echoRecord] { buffer.deallocate() }
        queue.deallocate()
    }

    // MARK: DuplexDevice (I/O thread)

    public func start() throws(IOError) {
        queue.update(repeating: 0)
        queueStart = 0
        queuedPeriods = configuration.prefillPeriods
        nextDeadline = MonotonicClock.nanoseconds()
        if started.load(ordering: .relaxed) == 0 { started.store(nextDeadline, ordering: .releasing) }
    }

    public func readCapture(_ buffer: UnsafeMutableBufferPointer<Int16>) throws(IOError) -> Int {
        let p = format.periodFrames
        if configuration.paced { waitForNextPeriod() }
        // The oldest queued playback period reaches the loudspeaker now.
        if queuedPeriods > 0 {
            let slot = queueStart * p
            for i in 0..<p { speaker[i] = Float(queue[slot + i]) / 32768 }
            queueStart = (queueStart + 1) % (configuration.prefillPeriods + 1)
            queuedPeriods -= 1
        } else {
            speaker.update(repeating: 0)  // playback ran dry: the loudspeaker is silent
        }
        echoPath.process(render: UnsafeBufferPointer(speaker), echo: echo)
        let speech = configuration.nearSpeech.count
        for i in 0..<p {
            var s: Float = 0
            if speech > 0, nearPosition < speech || configuration.loopNearSpeech {
                s = near[nearPosition % speech]
            }
            nearPosition += 1
            let mic = s + echo[i] + Float(noise.gaussian() * configuration.noiseRMS)
            buffer[i] = WAVAudio.int16(mic)
            if recorded + i < played.count {
                played[recorded + i] = speaker[i]
                captured[recorded + i] = Float(buffer[i]) / 32768
                echoRecord[recorded + i] = echo[i]
            }
        }
        recorded = min(recorded + p, played.count)
        return 0
    }

    public func playbackDelay() -> Int { queuedPeriods * format.periodFrames }

    public func writePlayback(_ buffer: UnsafeBufferPointer<Int16>) throws(IOError) {
        let p = format.periodFrames
        let slots = configuration.prefillPeriods + 1
        guard queuedPeriods < slots else { return }  // queue full: the period is dropped, as on overrun
        let slot = ((queueStart + queuedPeriods) % slots) * p
        for i in 0..<p { queue[slot + i] = buffer[i] }
        queuedPeriods += 1
    }

    public func stop() {}

    /// Sleeps until the next period boundary on the monotonic clock.
    private func waitForNextPeriod() {
        nextDeadline &+= UInt64(format.periodDuration * 1e9)
        var ts = timespec(tv_sec: Int(nextDeadline / 1_000_000_000), tv_nsec: Int(nextDeadline % 1_000_000_000))
        while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nil) == EINTR {}
    }

    // MARK: Recording (control thread, engine stopped)

    /// The near-end talker's speech as spoken into the microphone, aligned with ``recording``.
    public var spokenNearSpeech: [Float] {
        let speech = configuration.nearSpeech
        guard !speech.isEmpty else { return [Float](repeating: 0, count: recorded) }
        return (0..<recorded).map { $0 < speech.count || configuration.loopNearSpeech ? speech[$0 % speech.count] : 0 }
    }

    /// What the loudspeaker played, what the microphone captured, and the echo alone,
    /// from the start to now (up to `recordSeconds`).
    public var recording: (played: [Float], captured: [Float], echo: [Float]) {
        (Array(played[0..<recorded]), Array(captured[0..<recorded]), Array(echoRecord[0..<recorded]))
    }

    /// Writes `played.wav`, `captured.wav`, `echo.wav` and `spoken.wav` (the near-end talker) into `directory`.
    public func writeRecording(to directory: String) throws(WAVError) {
        let r = recording
        for (name, samples) in [("played", r.played), ("captured", r.captured), ("echo", r.echo), ("spoken", spokenNearSpeech)] {
            try WAV.write(WAVAudio(sampleRate: format.sampleRate, samples: samples), to: "\(directory)/\(name).wav")
        }
    }
}
