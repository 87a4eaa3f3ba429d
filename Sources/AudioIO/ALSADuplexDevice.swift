public import ALSA
import Synchronization

/// Where an ALSA PCM comes from: a name in the system's configuration, or
/// configuration text of its own (for example the `file` plugin in tests).
///
/// Thread safety: a value type; safe to use from any thread.
public enum PCMSource: Sendable, Equatable, CustomStringConvertible {
    /// A PCM the system's ALSA configuration defines: `default`, `pulse`, `hw:0,0`, `plughw:1`, ...
    case named(String)
    /// PCM `name` defined by `configuration` text (`pcm.NAME { ... }`).
    case configuration(name: String, text: String)

    /// A `file`-plugin PCM (see `ALSA/FilePCMConfiguration`).
    public static func file(_ config: FilePCMConfiguration) -> PCMSource { .configuration(name: config.name, text: config.text) }

    public var name: String {
        switch self {
        case let .named(name), let .configuration(name, _): name
        }
    }

    public var description: String { name }

    func open(_ stream: PCMStream, nonBlocking: Bool = false) throws(IOError) -> PCM {
        do {
            switch self {
            case let .named(name): return try PCM(name: name, stream: stream, nonBlocking: nonBlocking)
            case let .configuration(name, text):
                return try PCM(name: name, configuration: text, stream: stream, nonBlocking: nonBlocking)
            }
        } catch {
            if error == .noSuchDevice {
                throw .noSuchPCM(name: name, available: ALSALibrary.pcmDevices().filter { $0.streams.contains(stream) }.map(\.name))
            }
            throw IOError(error)
        }
    }
}

extension IOError {
    init(_ error: ALSAError) { self = .alsa(code: error.code, message: error.message, context: error.context) }
}

/// A full-duplex device made of an ALSA capture PCM and an ALSA playback PCM
/// (the same device or two), negotiated to one rate and period.
///
/// Audio is mono 16-bit towards the engine; a device that grants only two
/// channels is mixed down (capture) and duplicated (playback) here.
///
/// Both PCMs are opened non-blocking and every read and write waits at most
/// ``ioTimeoutMilliseconds`` for the device to make progress: a sound server that stalls
/// or dies makes ``readCapture(_:)`` or ``writePlayback(_:)`` throw within that time
/// instead of holding the I/O thread in a poll for ever (or making it spin).
///
/// Thread safety: create on a control thread; then only the I/O engine's thread
/// calls its ``DuplexDevice`` methods. ``xrunCount`` may be read from any thread.
public final class ALSADuplexDevice: DuplexDevice, @unchecked Sendable {
    // @unchecked: the PCMs are used by one thread at a time (the creator, then the I/O thread);
    // the xrun count other threads read is an atomic snapshot.
    private var capture: PCM
    private var playback: PCM
    private let scratch: UnsafeMutableBufferPointer<Int16>
    private let silence: UnsafeMutableBufferPointer<Int16>
    private let prefillPeriods: Int
    private let xruns = Atomic<Int>(0)
    /// Xruns (both streams) counted when the streams last started.
    private var xrunsHandled = 0
    /// Whether no period has been read since the streams last started.
    private var awaitsFirstRead = true
    /// Starts over, since ``start()``, for a playback the server ran dry before the first read.
    private var startRaces = 0
    private var xrunTotal: Int { capture.xrunCount + playback.xrunCount }

    public let name: String
    public let format: IOFormat
    /// The capture PCM's granted parameters.
    public let captureParameters: PCMParameters
    /// The playback PCM's granted parameters.
    public let playbackParameters: PCMParameters

    /// Opens and configures both PCMs.
    ///
    /// - Parameters:
    ///   - captureSource: the capture PCM.
    ///   - playbackSource: the playback PCM (the same device or another).
    ///   - preferred: the rate, period and buffer asked for; the device may grant others
    ///     (read them from ``format``), as the session's preferred values are only hints.
    ///   - prefillPeriods: silent periods queued before playback starts: the playback
    ///     latency headroom. Default: all but one period of the buffer.
    /// - Throws: ``IOError/noSuchPCM(name:available:)`` listing the PCMs that exist, or
    ///   ``IOError/formatMismatch(_:)`` when capture and playback grant different rates or periods.
    public init(capture captureSource: PCMSource, playback playbackSource: PCMSource, preferred: IOFormat,
                prefillPeriods: Int? = nil) throws(IOError) {
        var capture = try captureSource.open(.capture, nonBlocking: true)
        var playback = try playbackSource.open(.playback, nonBlocking: true)
        capture.ioTimeoutMilliseconds = Self.ioTimeoutMilliseconds
        playback.ioTimeoutMilliseconds = Self.ioTimeoutMilliseconds
        let request = PCMParameters(sampleRate: preferred.sampleRate, channels: 1, format: .int16,
                                    periodFrames: preferred.periodFrames, bufferFrames: preferred.bufferFrames)
        let cap: PCMParameters, play: PCMParameters
        do {
            cap = try capture.configure(request)
            play = try playback.configure(request)
        } catch {
            throw IOError(error)
        }
        guard cap.sampleRate == play.sampleRate, cap.periodFrames == play.periodFrames else {
            throw .formatMismatch("capture \(cap), playback \(play)")
        }
        guard cap.channels <= 2, play.channels <= 2 else {
            throw .formatMismatch("\(cap.channels) capture / \(play.channels) playback channels (1 or 2 supported)")
        }
        self.capture = capture
        self.playback = playback
        captureParameters = cap
        playbackParameters = play
        let periods = play.bufferFrames / play.periodFrames
        self.prefillPeriods = max(1, min(prefillPeriods ?? (periods - 1), periods))
        format = IOFormat(sampleRate: cap.sampleRate, periodFrames: cap.periodFrames, bufferFrames: play.bufferFrames)
        name = captureSource.name == playbackSource.name ? captureSource.name : "\(captureSource.name) -> \(playbackSource.name)"
        scratch = .allocate(capacity: cap.periodFrames * 2)
        scratch.initialize(repeating: 0)
        silence = .allocate(capacity: play.periodFrames * play.channels)
        silence.initialize(repeating: 0)
    }

    deinit {
        scratch.deallocate()
        silence.deallocate()
    }

    public var xrunCount: Int { xruns.load(ordering: .relaxed) }

    /// How long a period's read or write may wait for the device without progress before the
    /// device counts as failed: long enough for a server's scheduling hiccup (a few of its
    /// cycles), short enough to detect a stall within half a second.
    public static let ioTimeoutMilliseconds = 300

    public func start() throws(IOError) {
        startRaces = 0
        do {
            try startStreams()
        } catch {
            throw IOError(error)
        }
    }

    /// Both streams from empty, with the playback queue prefilled: the round trip every start has.
    private func startStreams() throws(ALSAError) {
        try capture.drop()
        try playback.drop()
        try capture.prepare()
        try playback.prepare()
        for _ in 0..<prefillPeriods {
            _ = try playback.write(UnsafeRawBufferPointer(silence), frames: format.periodFrames)
        }
        if !playback.isRunning { try playback.start() }
        try capture.start()
        xrunsHandled = xrunTotal
        awaitsFirstRead = true
    }

    /// Makes the first read after a start leave what a simultaneous start leaves: the prefill
    /// less one period, counted as the playback queue plus the capture not yet read (both
    /// streams run the same frames from their start, so a late first read moves frames from
    /// one to the other and leaves the sum).
    ///
    /// A sound server may run the playback for a few of its cycles before the capture's first
    /// period arrives (PipeWire activates the two streams one after the other). Each frame
    /// played then is headroom lost for the whole stream, since one period is written per
    /// period read: it is written back as silence. A playback the server ran dry before the
    /// capture had a period more (so the I/O thread was not late) lost nothing but the
    /// prefill's silence: both streams start again, up to three times, and no xrun is counted.
    private func settleStart(_ buffer: UnsafeMutableBufferPointer<Int16>) throws(ALSAError) {
        var queued = queuedFrames()
        while queued == nil, (capture.availableFrames ?? .max) < format.periodFrames, startRaces < 3 {
            startRaces += 1
            try startStreams()
            try readPeriod(buffer)
            queued = queuedFrames()
        }
        awaitsFirstRead = false
        // Otherwise an xrun the I/O thread met: the next transfer recovers and counts it.
        guard let queued else { return }
        var missing = (prefillPeriods - 1) * format.periodFrames - queued
        while missing > 0 {
            let frames = min(missing, format.periodFrames)
            let bytes = frames * playbackParameters.bytesPerFrame
            _ = try playback.write(UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(silence)[0..<bytes]), frames: frames)
            missing -= frames
        }
    }

    /// The playback queue plus the capture not yet read, in frames; nil once either stream has
    /// met an xrun.
    func queuedFrames() -> Int? {
        guard let free = playback.availableFrames, let captured = capture.availableFrames else { return nil }
        return playbackParameters.bufferFrames - free + captured
    }

    /// Reads one period. After an xrun on either stream (the I/O thread fell behind: capture
    /// lost frames, playback ran dry) both streams start over as ``start()`` starts them. Each
    /// recovered on its own, the capture would resume after a gap that the playback's does not
    /// match, and the round trip, which the echo canceller's alignment and filter are built
    /// on, would move by tens of milliseconds (`RealTimeLoopbackTests+Xrun`). The transfers
    /// recover and count xruns; a count that moved since the streams started is the signal.
    public func readCapture(_ buffer: UnsafeMutableBufferPointer<Int16>) throws(IOError) -> Int {
        do {
            // An underrun the last write met.
            if xrunTotal != xrunsHandled { try startStreams() }
            try readPeriod(buffer)
            if xrunTotal != xrunsHandled {
                // An overrun this read met: the period follows a gap.
                try startStreams()
                try readPeriod(buffer)
            }
            if awaitsFirstRead { try settleStart(buffer) }
        } catch {
            throw IOError(error)
        }
        xruns.store(xrunTotal, ordering: .relaxed)
        return (try? capture.delay()) ?? 0
    }

    private func readPeriod(_ buffer: UnsafeMutableBufferPointer<Int16>) throws(ALSAError) {
        let frames = format.periodFrames
        if captureParameters.channels == 1 {
            _ = try capture.read(into: UnsafeMutableRawBufferPointer(buffer), frames: frames)
        } else {
            _ = try capture.read(into: UnsafeMutableRawBufferPointer(scratch), frames: frames)
            for i in 0..<frames { buffer[i] = Int16((Int32(scratch[2 * i]) + Int32(scratch[2 * i + 1])) / 2) }
        }
    }

    public func playbackDelay() -> Int { (try? playback.delay()) ?? 0 }

    public func writePlayback(_ buffer: UnsafeBufferPointer<Int16>) throws(IOError) {
        let frames = format.periodFrames
        do {
            if playbackParameters.channels == 1 {
                _ = try playback.write(UnsafeRawBufferPointer(buffer), frames: frames)
            } else {
                for i in 0..<frames { scratch[2 * i] = buffer[i]; scratch[2 * i + 1] = buffer[i] }
                _ = try playback.write(UnsafeRawBufferPointer(scratch), frames: frames)
            }
        } catch {
            throw IOError(error)
        }
        xruns.store(xrunTotal, ordering: .relaxed)
    }

    public func stop() {
        try? capture.drop()
        try? playback.drop()
    }
}
