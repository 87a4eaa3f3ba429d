import Platform
import DSP
import AudioIO
import Opus
import RTP
import Synchronization
import VoiceProcessing

/// The media of one call: the I/O engine on a device, voice processing on the uplink,
/// Opus over RTP both ways.
///
/// Per period, on the I/O thread (``process(_:)``): received packets move from the
/// network thread's ring into the jitter buffer, which fills the playback period; the
/// capture period is cleaned by the voice-processing unit against that playback (the
/// echo reference, aligned by the device's round trip); the sender cuts the uplink into
/// codec frames, encodes them and sends them with a non-blocking socket.
///
/// Thread safety: ``start()``, ``pauseAudio()``, ``resumeAudio()`` and ``stop()`` from the
/// call controller; ``process(_:)`` only on the I/O thread; the meters and counters from any thread.
final class CallMedia: @unchecked Sendable {
    // @unchecked: `sender` and `jitter` are touched only by the I/O thread
    // (engine running) or by the controller while the engine is stopped; shared values are atomics.
    let rtp: RTPSession
    let voice: VoiceProcessingUnit
    /// Nil while the call is held for another (``releaseDevice()``).
    private(set) var device: (any DuplexDevice)?
    private(set) var engine: AudioIOEngine?
    private let onDeviceFailure: AudioIOEngine.FailureHandler?
    private let sampleRate: UInt64
    /// The first device's period, in nanoseconds (for the CPU load).
    private let periodNanoseconds: Double
    /// The Opus encoder's lookahead, in milliseconds.
    let codecLookaheadMs: Double

    private var sender: RTPSender
    private var jitter: JitterBuffer
    private let capturesSilence: Atomic<Bool>
    /// The call is muted: what goes to the peer is silence, after the voice processing.
    private let muted = Atomic<Bool>(false)
    private let capturePower = Atomic<UInt32>(0)     // Float bits: mean square over the call so far (full scale 1)
    private let playbackPower = Atomic<UInt32>(0)
    private var captureEnergy = 0.0                  // sums of the periods' mean squares (I/O thread)
    private var playbackEnergy = 0.0
    private let busyNanoseconds = Atomic<UInt64>(0)  // time spent in process(_:)
    private let processedPeriods = Atomic<Int>(0)
    /// The processed uplink (after voice processing), kept for analysis when asked for.
    private let uplinkRecording: UnsafeMutableBufferPointer<Int16>
    private let uplinkRecorded = Atomic<Int>(0)
    /// The other call of a three-way conference this call hosts (see "Conference" below):
    /// set and cleared only while the engine is stopped.
    var member: CallMedia?
    /// The call's two directions for a recording (``CallRecordingJob``), pushed each period while one runs.
    let recording: CallRecordingRing
    /// What a playback sends the peer (``CallPlayback``), taken each period while one runs.
    let playback: CallPlaybackRing
    /// Three periods of scratch for the conference's mixes, made with the call.
    let mix: UnsafeMutableBufferPointer<Int16>
    /// The largest period the scratch holds.
    let mixFrames: Int

    /// Builds the pipeline; nothing runs until ``start()``.
    ///
    /// - Parameters:
    ///   - device: the full-duplex device; its rate must be an Opus rate (8, 12, 16, 24 or 48 kHz).
    ///   - rtp: the call's RTP session (bound, not started).
    ///   - voice: the voice-processing configuration (its device rate is taken from `device`).
    ///   - onDeviceFailure: told (on the stopped I/O thread) when a device error stops the audio.
    init(device: any DuplexDevice, rtp: RTPSession, voice configuration: VoiceProcessingConfiguration,
         capturesSilence: Bool, recordUplinkSeconds: Double = 0,
         onDeviceFailure: AudioIOEngine.FailureHandler? = nil) throws(CallError) {
        let rate = device.format.sampleRate
        guard rtp.configuration.opus.sampleRate == rate else {
            throw .media("device runs at \(rate) Hz but the codec at \(rtp.configuration.opus.sampleRate) Hz")
        }
        var vp = configuration
        vp.deviceSampleRate = rate
        vp.maximumFramesPerPeriod = max(vp.maximumFramesPerPeriod, device.format.periodFrames)
        do {
            voice = try VoiceProcessingUnit(configuration: vp)
            sender = try rtp.makeSender()
            jitter = try rtp.makeJitterBuffer()
        } catch {
            throw .media("\(error)")
        }
        self.device = device
        self.onDeviceFailure = onDeviceFailure
        self.rtp = rtp
        self.capturesSilence = Atomic(capturesSilence)
        sampleRate = UInt64(rate)
        periodNanoseconds = device.format.periodDuration * 1e9
        codecLookaheadMs = Double(sender.lookaheadFrames) * 1000 / Double(rate)
        uplinkRecording = .allocate(capacity: max(1, Int(recordUplinkSeconds * Double(rate))))
        uplinkRecording.initialize(repeating: 0)
        recording = CallRecordingRing(frames: 2 * rate)  // 2 s: the writer drains every 100 ms
        playback = CallPlaybackRing(frames: rate)  // 1 s: the playback keeps half a second queued
        mixFrames = vp.maximumFramesPerPeriod
        mix = .allocate(capacity: 3 * mixFrames)
        mix.initialize(repeating: 0)
    }

    deinit {
        engine?.stop()
        uplinkRecording.deallocate()
        mix.deallocate()
    }

    /// The processed uplink recorded so far (empty unless `recordUplinkSeconds` was given);
    /// sample `i` lines up with sample `i` of the device's capture.
    /// The device's rate (samples per second).
    var rate: Int { Int(sampleRate) }

    var recordedUplink: [Int16] { Array(uplinkRecording[0..<uplinkRecorded.load(ordering: .acquiring)]) }

    // MARK: Control

    /// Starts the network side and the audio.
    func start() throws(CallError) {
        rtp.start()
        try resumeAudio()
    }

    /// Stops capture and playout; the network side stays up (a held call).
    func pauseAudio() {
        notePause()
        engine?.stop()
    }

    /// When the audio last stopped (monotonic nanoseconds), for the RTP clock to move on by the gap.
    private var pausedAt: UInt64?

    private func notePause() {
        if engine?.isRunning == true, pausedAt == nil { pausedAt = MonotonicClock.nanoseconds() }
    }

    /// Stops capture and playout and closes the device, for another call to have the audio.
    func releaseDevice() {
        notePause()
        engine?.stop()
        engine = nil
        device = nil
    }

    /// Whether the call has a device (it has not been released).
    var hasDevice: Bool { device != nil }

    /// Starts (again) capture and playout on the device.
    func resumeAudio() throws(CallError) {
        guard let device else { throw .media("the call has no audio device") }
        if engine == nil {
            let unowned = Unmanaged.passUnretained(self)
            // The engine lives inside this object and is stopped before it goes away, so the
            // I/O thread may use it without retaining it (no reference counting per period).
            engine = AudioIOEngine(device: device, onFailure: onDeviceFailure) { cycle in
                unowned.takeUnretainedValue().process(cycle)
            }
        }
        guard let engine, !engine.isRunning else { return }
        sender.discardPartialFrame()
        if let pausedAt {
            sender.skip(nanoseconds: MonotonicClock.nanoseconds() &- pausedAt)
            self.pausedAt = nil
        }
        do { try engine.start() } catch { throw .media("\(error)") }
    }

    /// Runs the audio on `newDevice` from now on (the old one failed): same rate, a period no
    /// longer than the engine's largest.
    func restartAudio(on newDevice: any DuplexDevice) throws(CallError) {
        guard UInt64(newDevice.format.sampleRate) == sampleRate else {
            throw .media("the device reopened at \(newDevice.format.sampleRate) Hz, the call runs at \(sampleRate) Hz")
        }
        engine?.stop()
        do { try engine?.switchDevice(to: newDevice) } catch { throw .media("\(error)") }
        device = newDevice
        try resumeAudio()
    }

    /// Stops everything: audio, then the network side (which sends an RTCP BYE).
    func stop() {
        engine?.stop()
        rtp.stop()
    }

    /// Whether capture is replaced by silence (record permission denied).
    func setCapturesSilence(_ on: Bool) { capturesSilence.store(on, ordering: .relaxed) }

    /// Sends silence instead of the processed microphone (the processing itself goes on).
    func setMuted(_ on: Bool) { muted.store(on, ordering: .relaxed) }

    // MARK: Meters (any thread)

    /// The capture and playback levels over the call so far (mean power), in dBFS.
    var captureLevelDBFS: Double { Self.dBFS(power: capturePower) }
    var playbackLevelDBFS: Double { Self.dBFS(power: playbackPower) }
    /// Share of one core the I/O callback used, over the periods processed so far.
    var cpuLoad: Double {
        let periods = processedPeriods.load(ordering: .relaxed)
        guard periods > 0 else { return 0 }
        let audio = Double(periods) * periodNanoseconds
        return Double(busyNanoseconds.load(ordering: .relaxed)) / audio
    }
    var jitterBufferStatistics: JitterBufferStatistics { rtp.jitterMonitor.snapshot }

    // MARK: The I/O thread

    func process(_ cycle: IOCycle) {
        let started = MonotonicClock.nanoseconds()
        let timing = cycle.timing
        // Downlink: what arrived, through the jitter buffer, to the loudspeaker.
        let playAt = timing.hostTimeNanoseconds &+ UInt64(timing.playbackDelayFrames) * 1_000_000_000 / sampleRate
        jitter.receive(from: rtp.ring, availableAt: playAt)
        jitter.pull(into: cycle.playback, now: playAt)
        let conference = member != nil && cycle.playback.count <= mixFrames && cycle.capture.count <= mixFrames
        if conference { mixDownlinks(into: cycle.playback, playAt: playAt) }

        // Uplink: the microphone, cleaned against what is being played.
        if capturesSilence.load(ordering: .relaxed) { cycle.capture.update(repeating: 0) }
        voice.process(capture: cycle.capture, render: UnsafeBufferPointer(cycle.playback),
                      timing: VoiceProcessingTiming(deviceDelayFrames: timing.roundTripFrames))
        if muted.load(ordering: .relaxed) { cycle.capture.update(repeating: 0) }
        playback.pull(into: cycle.capture)  // after the voice processing: the canceller never sees it
        let recorded = uplinkRecorded.load(ordering: .relaxed)
        if recorded + cycle.capture.count <= uplinkRecording.count, uplinkRecording.count > 1 {
            _ = UnsafeMutableBufferPointer(rebasing: uplinkRecording[recorded..<(recorded + cycle.capture.count)])
                .update(fromContentsOf: cycle.capture)
            uplinkRecorded.store(recorded + cycle.capture.count, ordering: .releasing)
        }
        recording.push(sent: UnsafeBufferPointer(cycle.capture), played: UnsafeBufferPointer(cycle.playback))
        if conference {
            sendUplinks(cycle.capture, now: timing.hostTimeNanoseconds)
        } else {
            sender.send(period: UnsafeBufferPointer(cycle.capture), now: timing.hostTimeNanoseconds)
        }

        let periods = Double(processedPeriods.add(1, ordering: .relaxed).newValue)
        captureEnergy += Double(Self.meanSquare(cycle.capture))
        playbackEnergy += Double(Self.meanSquare(cycle.playback))
        capturePower.store(Float(captureEnergy / periods).bitPattern, ordering: .relaxed)
        playbackPower.store(Float(playbackEnergy / periods).bitPattern, ordering: .relaxed)
        busyNanoseconds.add(MonotonicClock.nanoseconds() &- started, ordering: .relaxed)
    }

    /// Mean square of a period, full scale 1 (the level's logarithm is taken by the reader, off this thread).
    private static func meanSquare(_ x: UnsafeMutableBufferPointer<Int16>) -> Float {
        var sum: Float = 0
        for s in x { let v = Float(s) / 32768; sum += v * v }
        return sum / Float(max(1, x.count))
    }

    /// A stored mean square in dBFS, floored at -100 (silence).
    private static func dBFS(power: borrowing Atomic<UInt32>) -> Double {
        10 * Math.log10(max(1e-10, Double(Float(bitPattern: power.load(ordering: .relaxed)))))
    }
}

// MARK: Conference

/// A local three-way conference, as a conference bridge mixes it: the host call's device plays
/// both peers, the microphone goes to both, and each peer also hears the other. The member
/// call has no device of its own: the host's I/O thread drives its jitter buffer and sender.
extension CallMedia {
    /// Mixes `other`'s call into this one's audio from now on (control thread; both calls
    /// set up, `other` without a device).
    func host(_ other: CallMedia) throws(CallError) {
        guard other !== self, !other.hasDevice, other.member == nil else {
            throw .invalidState("a conference joins two calls, one of them with the audio")
        }
        pauseAudio()
        other.enterAsMember()
        member = other
        try resumeAudio()
    }

    /// Takes the member out (control thread); the host goes on alone.
    func dismissMember() throws(CallError) {
        guard let other = member else { return }
        pauseAudio()
        member = nil
        other.notePauseAsMember()
        try resumeAudio()
    }

    /// A member's sender starts a new frame and its RTP clock moves on by the time it was held.
    private func enterAsMember() {
        sender.discardPartialFrame()
        if let pausedAt {
            sender.skip(nanoseconds: MonotonicClock.nanoseconds() &- pausedAt)
            self.pausedAt = nil
        }
    }

    private func notePauseAsMember() { pausedAt = MonotonicClock.nanoseconds() }

    /// The host's playback (its peer's audio, already pulled) plus the member's peer: our
    /// peer's and the member's downlinks are kept for the uplinks (I/O thread).
    fileprivate func mixDownlinks(into playback: UnsafeMutableBufferPointer<Int16>, playAt: UInt64) {
        guard let member else { return }
        let n = playback.count
        let ours = UnsafeMutableBufferPointer(rebasing: mix[0..<n])
        let theirs = UnsafeMutableBufferPointer(rebasing: mix[mixFrames..<(mixFrames + n)])
        _ = ours.update(fromContentsOf: playback)
        member.jitter.receive(from: member.rtp.ring, availableAt: playAt)
        member.jitter.pull(into: theirs, now: playAt)
        for i in 0..<n { playback[i] = Int16(clamping: Int32(ours[i]) + Int32(theirs[i])) }
    }

    /// The processed microphone to both peers, each with the other peer mixed in (I/O thread).
    fileprivate func sendUplinks(_ capture: UnsafeMutableBufferPointer<Int16>, now: UInt64) {
        guard let member else { return }
        let n = capture.count
        let ours = mix[0..<n], theirs = mix[mixFrames..<(mixFrames + n)]
        let out = UnsafeMutableBufferPointer(rebasing: mix[(2 * mixFrames)..<(2 * mixFrames + n)])
        for i in 0..<n { out[i] = Int16(clamping: Int32(capture[capture.startIndex + i]) + Int32(theirs[theirs.startIndex + i])) }
        sender.send(period: UnsafeBufferPointer(out), now: now)
        for i in 0..<n { out[i] = Int16(clamping: Int32(capture[capture.startIndex + i]) + Int32(ours[ours.startIndex + i])) }
        member.sender.send(period: UnsafeBufferPointer(out), now: now)
    }
}
