import CALSA
import Platform
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// An open ALSA PCM: one direction of one device.
///
/// Owns its `snd_pcm_t` exactly once and closes it when it goes away. Reads and
/// writes recover from xruns (`snd_pcm_recover`), count them in ``xrunCount``,
/// and never fail because of one. They do not allocate, so they may run on a
/// real-time I/O thread.
///
/// Thread safety: not thread-safe; use a PCM from one thread at a time (it may be
/// moved between threads, e.g. opened on a control thread and run on the I/O thread).
public struct PCM: ~Copyable {
    private let handle: OpaquePointer
    /// A configuration tree the PCM was opened from, kept alive as long as the PCM.
    private let configuration: OpaquePointer?
    /// The name it was opened by.
    public let name: String
    /// Its direction.
    public let stream: PCMStream
    /// What the device granted in `configure(_:)` (or the request, before that).
    public private(set) var parameters: PCMParameters
    /// Underruns (playback) or overruns (capture) recovered since opening.
    public private(set) var xrunCount = 0
    /// How long a read or write on a non-blocking PCM waits for the device, from the first time
    /// it finds nothing ready, before it throws `-ETIMEDOUT`, in milliseconds; nil: it returns
    /// what was ready at once.
    /// (A blocking PCM blocks inside alsa-lib, as long as the device takes.)
    public var ioTimeoutMilliseconds: Int?
    /// When the last whole read or write ended: the timeout runs from there, so a stall that
    /// lets one direction trickle (a write that creeps in while the server stops) is still
    /// caught one timeout after the stream last moved, not one timeout per call.
    private var lastCompleted: UInt64?
    /// The waits of a non-blocking PCM, one `poll` at a time.
    private let poller = PCMPoll()

    /// Opens a PCM defined by the system's ALSA configuration (`default`, `pulse`, `hw:0,0`, `plughw:1`, ...).
    ///
    /// - Parameter name: the PCM's name.
    /// - Parameter stream: capture or playback.
    /// - Parameter nonBlocking: open with `SND_PCM_NONBLOCK`: reads and writes return what is ready.
    /// - Throws: ``ALSAError`` with ALSA's message and the name, e.g. for a PCM that does not exist.
    ///
    /// The corresponding C function is `snd_pcm_open`.
    public init(name: String, stream: PCMStream, nonBlocking: Bool = false) throws(ALSAError) {
        ALSALibrary.silenceErrorOutput()
        var pcm: OpaquePointer?
        let r = snd_pcm_open(&pcm, name, stream.cValue, nonBlocking ? SND_PCM_NONBLOCK : 0)
        guard r >= 0, let pcm else { throw ALSAError(code: r, context: "snd_pcm_open '\(name)' for \(stream.rawValue)") }
        self.handle = pcm
        self.configuration = nil
        self.name = name
        self.stream = stream
        self.parameters = PCMParameters()
    }

    /// Opens PCM `name` defined in `configuration`, ALSA configuration text such as
    /// `pcm.cap { type file slave.pcm null file "/dev/null" infile "in.raw" format "raw" }`.
    ///
    /// This is how tests use the `file` plugin without touching `~/.asoundrc`
    /// (see ``FilePCMConfiguration``).
    /// The corresponding C function is `snd_pcm_open_lconf`.
    public init(name: String, configuration text: String, stream: PCMStream, nonBlocking: Bool = false) throws(ALSAError) {
        ALSALibrary.silenceErrorOutput()
        let config = try ALSALibrary.parseConfiguration(text)
        var pcm: OpaquePointer?
        let r = snd_pcm_open_lconf(&pcm, name, stream.cValue, nonBlocking ? SND_PCM_NONBLOCK : 0, config)
        guard r >= 0, let pcm else {
            snd_config_delete(config)
            throw ALSAError(code: r, context: "snd_pcm_open_lconf '\(name)' for \(stream.rawValue)")
        }
        self.handle = pcm
        self.configuration = config
        self.name = name
        self.stream = stream
        self.parameters = PCMParameters()
    }

    deinit {
        snd_pcm_close(handle)
        if let configuration { snd_config_delete(configuration) }
    }

    // MARK: Negotiation

    /// Negotiates hardware and software parameters and prepares the stream.
    ///
    /// Rate, channels, period and buffer are set to the nearest values the device
    /// supports; the granted values are returned and kept in ``parameters``. The
    /// format must be supported exactly (use a `plug` PCM to convert).
    ///
    /// - Parameter requested: the rate, channels, format, period and buffer asked for.
    /// - Parameter startThreshold: frames queued before playback starts by itself
    ///   (default: the whole buffer, so an engine prefills and then starts); capture starts on the first read.
    /// The corresponding C functions are `snd_pcm_hw_params_set_*_near`, `snd_pcm_hw_params` and `snd_pcm_sw_params`.
    @discardableResult
    public mutating func configure(_ requested: PCMParameters, startThreshold: Int? = nil) throws(ALSAError) -> PCMParameters {
        let context = "configuring '\(name)' (\(stream.rawValue)) for \(requested)"
        var hw: OpaquePointer?
        try alsaCheck(snd_pcm_hw_params_malloc(&hw), context)
        defer { snd_pcm_hw_params_free(hw) }
        try alsaCheck(snd_pcm_hw_params_any(handle, hw), "\(context): snd_pcm_hw_params_any")
        try alsaCheck(snd_pcm_hw_params_set_access(handle, hw, SND_PCM_ACCESS_RW_INTERLEAVED), "\(context): access")
        try alsaCheck(snd_pcm_hw_params_set_format(handle, hw, requested.format.cValue), "\(context): format \(requested.format.rawValue)")
        var channels = UInt32(requested.channels)
        try alsaCheck(snd_pcm_hw_params_set_channels_near(handle, hw, &channels), "\(context): channels")
        var rate = UInt32(requested.sampleRate)
        var dir: Int32 = 0
        try alsaCheck(snd_pcm_hw_params_set_rate_near(handle, hw, &rate, &dir), "\(context): rate")
        var period = snd_pcm_uframes_t(requested.periodFrames)
        try alsaCheck(snd_pcm_hw_params_set_period_size_near(handle, hw, &period, &dir), "\(context): period")
        var buffer = snd_pcm_uframes_t(max(requested.bufferFrames, Int(period) * 2))
        try alsaCheck(snd_pcm_hw_params_set_buffer_size_near(handle, hw, &buffer), "\(context): buffer")
        try alsaCheck(snd_pcm_hw_params(handle, hw), "\(context): snd_pcm_hw_params")

        // Read back what was granted: the *_near calls may have moved every value.
        _ = snd_pcm_hw_params_get_channels(hw, &channels)
        _ = snd_pcm_hw_params_get_rate(hw, &rate, &dir)
        _ = snd_pcm_hw_params_get_period_size(hw, &period, &dir)
        _ = snd_pcm_hw_params_get_buffer_size(hw, &buffer)
        let granted = PCMParameters(sampleRate: Int(rate), channels: Int(channels), format: requested.format,
                                    periodFrames: Int(period), bufferFrames: Int(buffer))

        var sw: OpaquePointer?
        try alsaCheck(snd_pcm_sw_params_malloc(&sw), context)
        defer { snd_pcm_sw_params_free(sw) }
        try alsaCheck(snd_pcm_sw_params_current(handle, sw), "\(context): sw params")
        try alsaCheck(snd_pcm_sw_params_set_avail_min(handle, sw, period), "\(context): avail_min")
        let threshold = startThreshold ?? (stream == .playback ? Int(buffer) : 1)
        try alsaCheck(snd_pcm_sw_params_set_start_threshold(handle, sw, snd_pcm_uframes_t(max(1, threshold))),
                      "\(context): start threshold")
        try alsaCheck(snd_pcm_sw_params(handle, sw), "\(context): snd_pcm_sw_params")
        try alsaCheck(snd_pcm_prepare(handle), "\(context): snd_pcm_prepare")
        parameters = granted
        return granted
    }

    // MARK: Transfer

    /// Reads `frames` interleaved frames into `buffer`, blocking until they are all read
    /// (or, when opened non-blocking, until no more are ready, or with ``ioTimeoutMilliseconds``
    /// until all are read, waiting on its poll descriptors until one timeout after the last whole
    /// transfer on this PCM, and at least a quarter of it from now).
    ///
    /// Overruns are recovered and counted, never thrown; a device that completes no transfer within
    /// the timeout throws `-ETIMEDOUT`, one that is gone throws its code.
    /// - Returns: frames read (`frames` in blocking mode).
    /// The corresponding C function is `snd_pcm_readi`.
    public mutating func read(into buffer: UnsafeMutableRawBufferPointer, frames: Int) throws(ALSAError) -> Int {
        precondition(stream == .capture, "read on a playback PCM")
        precondition(frames * parameters.bytesPerFrame <= buffer.count, "buffer too small for \(frames) frames")
        let pcm = handle, frameBytes = parameters.bytesPerFrame
        return try transfer(frames) { offset, count in
            snd_pcm_readi(pcm, buffer.baseAddress! + offset * frameBytes, snd_pcm_uframes_t(count))
        }
    }

    /// Writes `frames` interleaved frames from `buffer`, blocking until they are all queued
    /// (or, when opened non-blocking, until the buffer is full, or with ``ioTimeoutMilliseconds``
    /// until all are queued, waiting for at most that long without progress).
    ///
    /// Underruns are recovered and counted, never thrown; see ``read(into:frames:)`` for timeouts.
    /// - Returns: frames written (`frames` in blocking mode).
    /// The corresponding C function is `snd_pcm_writei`.
    public mutating func write(_ buffer: UnsafeRawBufferPointer, frames: Int) throws(ALSAError) -> Int {
        precondition(stream == .playback, "write on a capture PCM")
        precondition(frames * parameters.bytesPerFrame <= buffer.count, "buffer holds fewer than \(frames) frames")
        let pcm = handle, frameBytes = parameters.bytesPerFrame
        return try transfer(frames) { offset, count in
            snd_pcm_writei(pcm, buffer.baseAddress! + offset * frameBytes, snd_pcm_uframes_t(count))
        }
    }

    private mutating func transfer(_ frames: Int, _ io: (Int, Int) -> Int) throws(ALSAError) -> Int {
        var done = 0
        var deadline: UInt64?
        var recoveries = 0
        var readyButIdle = false
        while done < frames {
            let n = io(done, frames - done)
            if n > 0 {
                // The deadline stays: a trickle of frames from a failing server must not extend it.
                done += n
                (recoveries, readyButIdle) = (0, false)
                continue
            }
            let code = n == 0 ? -EAGAIN : Int32(truncatingIfNeeded: n)
            if code != -EAGAIN {
                try recover(code, attempt: &recoveries)
                continue
            }
            guard let timeout = ioTimeoutMilliseconds else { break }
            // Not ready: wait for the device, but never past the deadline (a stalled or
            // vanished sound server must not hold the I/O thread, nor make it spin).
            let now = Self.monotonicMilliseconds()
            let end = deadline ?? Self.deadline(now: now, lastCompleted: lastCompleted, timeout: timeout)
            deadline = end
            guard now < end else { throw ALSAError(code: -ETIMEDOUT, context: "\(operation) '\(name)': no progress for \(timeout) ms") }
            if readyButIdle { Self.pause() }
            let slice = Int32(min(end - now, Self.waitSliceMilliseconds))
            switch poller.wait(handle, availMin: max(1, parameters.periodFrames), milliseconds: slice) {
            case .failed(let error): try recover(error, attempt: &recoveries)
            case .ready, .notReady: readyButIdle = true
            case .timedOut: readyButIdle = false
            }
        }
        if done == frames { lastCompleted = Self.monotonicMilliseconds() }
        return done
    }

    /// One timeout after the stream last completed a transfer, but never less than a quarter
    /// of it from now (a caller that was itself late must not fail a device that just caught up).
    static func deadline(now: UInt64, lastCompleted: UInt64?, timeout: Int) -> UInt64 {
        let fromLast = (lastCompleted ?? now) + UInt64(timeout)
        return max(fromLast, now + UInt64(timeout / 4))
    }

    /// The longest single wait before the transfer is tried again: a plugin may have frames
    /// ready without waking its poll descriptor (the pipewire plugin did, under a stalled
    /// server), and frames taken late push the stall's detection back by as much.
    static let waitSliceMilliseconds: UInt64 = 20

    /// Recoveries in a row without a frame moved before the device counts as gone: a server that
    /// died leaves its plugin in an xrun that every recovery brings straight back.
    private static let maxRecoveries = 3

    private mutating func recover(_ code: Int32, attempt: inout Int) throws(ALSAError) {
        attempt += 1
        guard attempt <= Self.maxRecoveries else {
            throw ALSAError(code: code, context: "\(operation) '\(name)': the device fails again after every recovery (\(attempt - 1) in a row)")
        }
        try recover(code)
    }

    /// Recovers an xrun (-EPIPE), a suspend (-ESTRPIPE) or an interrupted call (-EINTR), counting
    /// xruns; throws anything else (-ENODEV, -EIO, -EHOSTDOWN, -EBADFD: the device is gone).
    private mutating func recover(_ code: Int32) throws(ALSAError) {
        if code == -EPIPE || code == -ESTRPIPE { xrunCount += 1 }
        if snd_pcm_recover(handle, code, 1) < 0 { throw ALSAError(code: code, context: "\(operation) '\(name)'") }
    }

    private var operation: String { stream == .capture ? "snd_pcm_readi" : "snd_pcm_writei" }

    /// A device that says it is ready and then transfers nothing would make the wait loop spin:
    /// yield the core for a millisecond instead.
    private static func pause() {
        var ts = timespec(tv_sec: 0, tv_nsec: 1_000_000)
        nanosleep(&ts, nil)
    }

    private static func monotonicMilliseconds() -> UInt64 { MonotonicClock.nanoseconds() / 1_000_000 }

    // MARK: Timing

    /// Frames between now and when a frame written now is heard (playback), or
    /// since the oldest unread frame was captured (capture).
    /// The corresponding C function is `snd_pcm_delay`.
    public func delay() throws(ALSAError) -> Int {
        var frames: snd_pcm_sframes_t = 0
        try alsaCheck(snd_pcm_delay(handle, &frames), "snd_pcm_delay '\(name)'")
        return frames
    }

    /// Frames ready to read (capture) or free to write (playback).
    /// The corresponding C function is `snd_pcm_avail`.
    public func available() throws(ALSAError) -> Int {
        let n = snd_pcm_avail(handle)
        try alsaCheck(n, "snd_pcm_avail '\(name)'")
        return n
    }

    /// ``available()`` without an error value, for the I/O thread, which must not allocate (an
    /// ``ALSAError`` carries strings): nil once the stream has met an xrun or failed, which the
    /// next read or write then recovers or reports.
    public var availableFrames: Int? {
        let n = snd_pcm_avail(handle)
        return n < 0 ? nil : Int(n)
    }

    // MARK: State

    /// Prepares the stream for I/O (after ``drop()``). The corresponding C function is `snd_pcm_prepare`.
    public mutating func prepare() throws(ALSAError) {
        lastCompleted = nil
        try alsaCheck(snd_pcm_prepare(handle), "snd_pcm_prepare '\(name)'")
    }

    /// Starts the stream now. The corresponding C function is `snd_pcm_start`.
    public mutating func start() throws(ALSAError) {
        lastCompleted = nil
        try alsaCheck(snd_pcm_start(handle), "snd_pcm_start '\(name)'")
    }

    /// Stops at once, discarding pending frames. The corresponding C function is `snd_pcm_drop`.
    public mutating func drop() throws(ALSAError) {
        lastCompleted = nil
        try alsaCheck(snd_pcm_drop(handle), "snd_pcm_drop '\(name)'")
    }

    /// Stops after pending playback frames are played. The corresponding C function is `snd_pcm_drain`.
    public func drain() throws(ALSAError) { try alsaCheck(snd_pcm_drain(handle), "snd_pcm_drain '\(name)'") }

    /// Whether the stream is running (started and not stopped by an xrun).
    public var isRunning: Bool { snd_pcm_state(handle) == SND_PCM_STATE_RUNNING }
}

// A PCM may be handed to the I/O thread: it is non-copyable, so one owner uses the handle at a time.
extension PCM: @unchecked Sendable {}
