public import Logging
import Platform
#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// The full-duplex I/O engine: one thread that, every period, reads one capture
/// period from a ``DuplexDevice``, calls the processing callback with it and a
/// playback buffer to fill, and writes that playback period: lockstep, like a
/// voice-processing I/O unit.
///
/// The I/O thread runs at real-time priority when the system allows it (the log
/// says which). On that thread the engine does not allocate, lock, log or touch
/// Swift concurrency: buffers are preallocated, counters are atomics, and the
/// device is swapped through a one-slot mailbox. The callback must keep to the same rules.
///
/// Thread safety: ``start()``, ``stop()`` and ``switchDevice(to:timeout:)`` are called
/// from one control thread (or serialised by the caller); ``statistics`` may be read
/// from any thread. The callback runs on the I/O thread only.
public final class AudioIOEngine: @unchecked Sendable {
    // @unchecked: mutable state is either touched only by the control thread
    // (`thread`, `device` between runs) or shared through the atomics below.

    /// Called once per period on the I/O thread.
    public typealias Callback = @Sendable (IOCycle) -> Void
    /// Called once when a device error stops the I/O thread, on that thread after it has left
    /// its real-time loop (so it may allocate or dispatch, but must not call ``stop()``, which
    /// waits for this thread).
    public typealias FailureHandler = @Sendable (IOError) -> Void

    private let callback: Callback
    private let onFailure: FailureHandler?
    private let logger: Logger
    private let realtimePriority: Int32?
    private var device: any DuplexDevice
    private var thread: PlatformThread?

    private let capture: UnsafeMutableBufferPointer<Int16>
    private let playback: UnsafeMutableBufferPointer<Int16>
    private let maxPeriodFrames: Int

    private let stopRequested = Atomic<Bool>(false)
    private let running = Atomic<Bool>(false)
    private let mailbox = Atomic<UInt>(0)       // a retained DeviceBox waiting for the I/O thread, or 0
    private let retired = Atomic<UInt>(0)       // the box the I/O thread let go of, for the control thread to release
    private let periods = Atomic<Int>(0)
    private let xruns = Atomic<Int>(0)
    private let switches = Atomic<Int>(0)
    private let lastGapNanoseconds = Atomic<Int>(0)
    private let failureFlag = Atomic<Bool>(false)
    private var failure: IOError?

    /// Creates an engine for `device`.
    ///
    /// - Parameters:
    ///   - device: the duplex device the I/O thread runs on.
    ///   - maxPeriodFrames: the largest period any device this engine will switch to may have
    ///     (buffers are allocated once, here). Default: the device's period, or 4096 if larger.
    ///   - realtimePriority: the `SCHED_FIFO` priority to ask for, or nil for normal scheduling.
    ///   - onFailure: told when a device error stops the I/O thread (see ``FailureHandler``).
    ///   - logger: where the engine logs (off the I/O thread).
    ///   - callback: called on the I/O thread once per period with the capture and the playback to fill.
    public init(device: any DuplexDevice, maxPeriodFrames: Int? = nil, realtimePriority: Int32? = 10,
                logger: Logger = Logger(label: "callaudio.audioio"), onFailure: FailureHandler? = nil,
                callback: @escaping Callback) {
        self.device = device
        self.callback = callback
        self.onFailure = onFailure
        self.logger = logger
        self.realtimePriority = realtimePriority
        self.maxPeriodFrames = max(maxPeriodFrames ?? 4096, device.format.periodFrames)
        capture = .allocate(capacity: self.maxPeriodFrames)
        capture.initialize(repeating: 0)
        playback = .allocate(capacity: self.maxPeriodFrames)
        playback.initialize(repeating: 0)
    }

    deinit {
        stop()
        capture.deallocate()
        playback.deallocate()
    }

    /// The format of the device in use (control thread).
    public var format: IOFormat { device.format }

    /// Whether the I/O thread is running.
    public var isRunning: Bool { running.load(ordering: .acquiring) }

    /// Starts the I/O thread. Returns once the thread runs; device errors surface in
    /// ``statistics`` (`failed`) and ``lastError``.
    public func start() throws(IOError) {
        guard thread == nil else { throw .invalidState("already running") }
        stopRequested.store(false, ordering: .relaxed)
        failureFlag.store(false, ordering: .relaxed)
        failure = nil
        running.store(true, ordering: .releasing)
        let box = DeviceBox(device)
        let t = try startThread(name: "callaudio-io", priority: realtimePriority) { [self] in self.run(box) }
        if let realtimePriority {
            if t.priorityGranted {
                logger.info("I/O thread running at real-time priority SCHED_FIFO \(realtimePriority)")
            } else {
                logger.notice("I/O thread at normal priority: SCHED_FIFO \(realtimePriority) not permitted (needs CAP_SYS_NICE or an rtprio limit)")
            }
        }
        thread = consume t
    }

    /// Stops the I/O thread and the device, and waits for the thread to end. Idempotent.
    public func stop() {
        guard let t = thread.take() else { return }
        stopRequested.store(true, ordering: .releasing)
        t.join()
        releaseRetired()
        if let pending = takeBox(mailbox) { device = pending.device }  // a switch that never ran
    }

    /// The error that stopped the I/O thread, if one did (read after ``stop()``).
    public var lastError: IOError? { failureFlag.load(ordering: .acquiring) ? failure : nil }

    /// Moves the running stream to `newDevice` at the next period boundary, without
    /// ending the stream, and waits until the I/O thread has done it.
    ///
    /// `newDevice` must be opened and configured (off the I/O thread) with a period no
    /// larger than the engine's `maxPeriodFrames`. The old device is stopped on the I/O
    /// thread and released here.
    /// - Returns: the gap in the stream, in seconds: the time between the last period of the
    ///   old device and the first of the new one, beyond one period.
    @discardableResult
    public func switchDevice(to newDevice: any DuplexDevice, timeout: Duration = .seconds(2)) throws(IOError) -> Double {
        guard newDevice.format.periodFrames <= maxPeriodFrames else {
            throw .formatMismatch("period \(newDevice.format.periodFrames) exceeds the engine's \(maxPeriodFrames)")
        }
        guard isRunning else {
            device = newDevice
            return 0
        }
        let before = switches.load(ordering: .acquiring)
        let box = Unmanaged.passRetained(DeviceBox(newDevice))
        if let stale = takeBox(mailbox) { _ = stale }
        mailbox.store(UInt(bitPattern: box.toOpaque()), ordering: .releasing)
        let deadline = ContinuousClock.now + timeout
        while switches.load(ordering: .acquiring) == before {
            guard isRunning, ContinuousClock.now < deadline else {
                throw .invalidState("the I/O thread did not take the new device within \(timeout)")
            }
            usleep(500)
        }
        releaseRetired()
        device = newDevice
        return Double(lastGapNanoseconds.load(ordering: .relaxed)) / 1e9
    }

    /// Whether a device handed to ``switchDevice(to:timeout:)`` is waiting for the I/O thread (any thread).
    public var hasPendingSwitch: Bool { mailbox.load(ordering: .acquiring) != 0 }

    /// Counters since ``start()``.
    public var statistics: IOStatistics {
        IOStatistics(periods: periods.load(ordering: .relaxed), xruns: xruns.load(ordering: .relaxed),
                     deviceSwitches: switches.load(ordering: .acquiring),
                     lastSwitchGapSeconds: Double(lastGapNanoseconds.load(ordering: .relaxed)) / 1e9,
                     failed: failureFlag.load(ordering: .acquiring))
    }

    // MARK: The I/O thread

    private func run(_ initial: DeviceBox) {
        runPeriods(initial)
        if let onFailure, let failure = lastError { onFailure(failure) }
    }

    private func runPeriods(_ initial: DeviceBox) {
        var box = initial
        var device = box.device
        var format = device.format
        var xrunBase = 0
        var tracker = DelayTracker(capacity: max(1, Int((1 / format.periodDuration).rounded())),
                                   minimumBand: max(1, format.sampleRate / 1000))
        defer {
            device.stop()
            running.store(false, ordering: .releasing)
        }
        do {
            try device.start()
            var lastCycleEnd = MonotonicClock.nanoseconds()
            while !stopRequested.load(ordering: .acquiring) {
                var switched = false
                if let next = takeBox(mailbox) {
                    // Switch devices between two periods; the old box is handed back for release.
                    device.stop()
                    xrunBase += device.xrunCount
                    retired.store(UInt(bitPattern: Unmanaged.passRetained(box).toOpaque()), ordering: .releasing)
                    box = next
                    device = next.device
                    format = device.format
                    tracker.reset(periodDuration: format.periodDuration)
                    try device.start()
                    switched = true
                }
                let captureDelay = try device.readCapture(UnsafeMutableBufferPointer(rebasing: capture[0..<format.periodFrames]))
                let now = MonotonicClock.nanoseconds()
                if switched {
                    // The stream's gap: from the end of the old device's last period (the callback's own
                    // time is not the device's) to the first period of the new one, beyond one period.
                    let period = UInt64(format.periodDuration * 1e9)
                    lastGapNanoseconds.store(Int(now &- lastCycleEnd > period ? now &- lastCycleEnd &- period : 0), ordering: .relaxed)
                    switches.add(1, ordering: .releasing)
                }
                try cycle(device, format, captureDelay: captureDelay, now: now, xrunBase: xrunBase, tracker: &tracker)
                lastCycleEnd = MonotonicClock.nanoseconds()
            }
        } catch {
            failure = error
            failureFlag.store(true, ordering: .releasing)
        }
    }

    /// One period after its capture was read: timing, callback, playback write.
    @inline(__always)
    private func cycle(_ device: any DuplexDevice, _ format: IOFormat, captureDelay: Int, now: UInt64, xrunBase: Int,
                       tracker: inout DelayTracker) throws(IOError) {
        let frames = format.periodFrames
        let out = UnsafeMutableBufferPointer(rebasing: playback[0..<frames])
        // An xrun (met by this period's read or the last period's write; the device restarted its
        // streams) moves the round trip. Counted here only, so that one from the write is not missed.
        let xrunsNow = xrunBase + device.xrunCount
        if xrunsNow != xruns.load(ordering: .relaxed) { tracker.reset() }
        xruns.store(xrunsNow, ordering: .relaxed)
        // `snd_pcm_delay` is signed and may dip below zero around an underrun; a queue is never negative.
        let playbackDelay = max(0, device.playbackDelay())
        let captureDelay = max(0, captureDelay)
        let roundTrip = tracker.add(frames + playbackDelay + captureDelay)
        let timing = IOTiming(periodIndex: periods.load(ordering: .relaxed), playbackDelayFrames: playbackDelay,
                              captureDelayFrames: captureDelay, roundTripFrames: roundTrip,
                              roundTripJitterFrames: tracker.jitter, hostTimeNanoseconds: now, xruns: xrunsNow)
        callback(IOCycle(capture: UnsafeMutableBufferPointer(rebasing: capture[0..<frames]), playback: out, timing: timing))
        try device.writePlayback(UnsafeBufferPointer(out))
        periods.add(1, ordering: .relaxed)
    }

    // MARK: Mailbox plumbing

    private func takeBox(_ slot: borrowing Atomic<UInt>) -> DeviceBox? {
        let bits = slot.exchange(0, ordering: .acquiringAndReleasing)
        guard bits != 0, let raw = UnsafeMutableRawPointer(bitPattern: bits) else { return nil }
        return Unmanaged<DeviceBox>.fromOpaque(raw).takeRetainedValue()
    }

    private func releaseRetired() {
        _ = takeBox(retired)
    }
}

/// Counters of an ``AudioIOEngine``.
///
/// Thread safety: a value type; safe to use from any thread.
public struct IOStatistics: Sendable, Equatable {
    /// Periods processed.
    public var periods: Int
    /// Xruns recovered (capture and playback).
    public var xruns: Int
    /// Device switches done while running.
    public var deviceSwitches: Int
    /// The stream gap of the last switch, in seconds.
    public var lastSwitchGapSeconds: Double
    /// Whether a device error stopped the I/O thread (see ``AudioIOEngine/lastError``).
    public var failed: Bool
}

/// A class wrapper so a device can travel through an atomic pointer slot.
private final class DeviceBox: @unchecked Sendable {
    // @unchecked: a box is handed between threads through the engine's atomic slots, one owner at a time.
    let device: any DuplexDevice
    init(_ device: any DuplexDevice) { self.device = device }
}
