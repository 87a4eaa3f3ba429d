import Logging
import Synchronization

/// The arbiter (the "control tower"): owns every ``AudioSession`` of a process, decides who
/// plays when sessions compete, and drives the ``AudioHardware``.
///
/// ``AudioSystem/shared`` holds ``AudioSession/shared`` (the app's session). Further sessions
/// made with ``makeSession(name:priority:)`` stand for other audio: a music player, or with
/// ``AudioSession/Priority/phoneCall`` the system phone. Tests make their own systems over a
/// ``SimulatedAudioHardware`` so they are independent.
///
/// ## Thread-safety model
/// All state of the system and of its sessions is one value behind one `Synchronization.Mutex`:
/// every public method of the system and of its sessions takes the lock briefly, so they are
/// safe from any thread and there is no lock order to get wrong. Nothing outside this module
/// runs under the lock: I/O stop handlers, logging, hardware calls and notifications are queued
/// while the lock is held and run after it is released, so an observer may call back into the
/// session (for example reactivate on `ended`).
///
/// ## Where notifications arrive
/// Observer closures run synchronously on the thread whose call caused the change (the caller
/// of `setActive`, `setCategory`, ..., or the thread on which the hardware reported a plug or
/// proximity event), after the lock is released and before that call returns, in the order the
/// changes happened. If another thread is already delivering (concurrent changes, or a change
/// made from inside an observer), that thread delivers the new notifications right after the
/// current ones, in order; the call that caused them may then return first. Streams
/// (``AudioSession/notifications()``) buffer without limit and are fed in the same order.
/// The hardware is configured (``AudioHardware/apply(route:)``, then ``AudioHardware/negotiate(_:for:)``)
/// in the same queue, before the notifications of the same change, so a route change observer
/// reads the new actual values.
///
/// Thread safety: safe from any thread (see above).
public final class AudioSystem: Sendable {
    /// The process's system, over a ``SimulatedAudioHardware`` (a phone's built-in device)
    /// until ``replaceHardware(_:)`` installs real hardware.
    ///
    /// Thread safety: safe from any thread.
    public static let shared = AudioSystem()

    let state: Mutex<SystemState>
    let logger = Logger(label: "CallAudio.AudioSession")
    /// A test seam: when set, it receives the warnings instead of the logger, so tests can read
    /// them without bootstrapping swift-log (process-wide) and without noise in their output.
    let warningSink: (@Sendable (String) -> Void)?

    /// Creates a system that drives the given hardware.
    ///
    /// - Parameters:
    ///   - hardware: The hardware; the system installs itself as its event handler.
    ///   - recordPermissionPolicy: How record permission is decided (granted by default).
    ///
    /// Thread safety: safe from any thread.
    public convenience init(
        hardware: any AudioHardware = SimulatedAudioHardware(),
        recordPermissionPolicy: RecordPermissionPolicy = .alwaysGrant
    ) {
        self.init(hardware: hardware, recordPermissionPolicy: recordPermissionPolicy, warningSink: nil)
    }

    init(
        hardware: any AudioHardware, recordPermissionPolicy: RecordPermissionPolicy,
        warningSink: (@Sendable (String) -> Void)?
    ) {
        self.state = Mutex(SystemState(hardware: hardware, recordPermissionPolicy: recordPermissionPolicy))
        self.warningSink = warningSink
        hardware.setEventHandler { [weak self] event in self?.handle(event) }
    }

    // MARK: - Sessions

    /// Makes a new session in this system: inactive, ``AudioSession/Category/soloAmbient``,
    /// default mode, no options.
    ///
    /// - Parameters:
    ///   - name: A name for logs and errors (`insufficientPriority(heldBy:)`).
    ///   - priority: ``AudioSession/Priority/phoneCall`` for a session that stands for the system phone.
    /// - Returns: The session. It leaves the system when released (deactivated first if active).
    ///
    /// Thread safety: safe from any thread.
    public func makeSession(name: String, priority: AudioSession.Priority = .normal) -> AudioSession {
        let id = state.withLock { $0.addSession(name: name, priority: priority) }
        return AudioSession(system: self, id: id, name: name, priority: priority)
    }

    // MARK: - Hardware

    /// The hardware the system drives.
    ///
    /// Thread safety: safe from any thread.
    public var hardware: any AudioHardware { state.withLock { $0.hardware } }

    /// The connected devices as the system knows them, in connection order.
    ///
    /// Thread safety: safe from any thread.
    public var devices: [AudioDevice] { state.withLock { $0.devices } }

    /// The proximity sensor's last reading.
    ///
    /// Thread safety: safe from any thread.
    public var proximity: AudioSession.Proximity { state.withLock { $0.proximity } }

    /// The values the hardware runs with (negotiated for the route owner's route and preferences).
    ///
    /// Thread safety: safe from any thread.
    public var hardwareValues: HardwareValues { state.withLock { $0.hardwareValues } }

    /// Whether the media services are lost (activation fails with ``AudioSessionError/mediaServicesFailed``).
    ///
    /// Thread safety: safe from any thread.
    public var isMediaServicesLost: Bool { state.withLock { $0.isMediaServicesLost } }

    /// Switches to other hardware (for example the ALSA hardware of the AudioIO module): the
    /// system reads its devices and proximity, installs itself as its event handler, and
    /// reports route changes with reason ``AudioSession/RouteChangeReason/routeConfigurationChange``.
    ///
    /// Thread safety: safe from any thread.
    public func replaceHardware(_ newHardware: any AudioHardware) {
        let old = hardware
        guard old !== newHardware else { return }
        old.setEventHandler(nil)
        // Listen first, then read: an event in between is applied to the old list and then
        // superseded by the fresh one, rather than lost.
        newHardware.setEventHandler { [weak self] event in self?.handle(event) }
        let reading = SystemState.HardwareReading(newHardware)
        transact { state, effects in state.replaceHardware(newHardware, reading: reading, &effects) }
    }

    /// Handles an event from the hardware (the handler installed on it calls this).
    func handle(_ event: AudioHardwareEvent) {
        transact { state, effects in state.handle(event, &effects) }
    }

    // MARK: - Record permission

    /// The app's record permission (shared by all sessions of the system).
    ///
    /// Thread safety: safe from any thread.
    public var recordPermission: AudioSession.RecordPermission { state.withLock { $0.recordPermission } }

    /// How record permission is decided. Setting it resets the permission to the policy's starting value.
    ///
    /// Thread safety: safe from any thread.
    public var recordPermissionPolicy: RecordPermissionPolicy {
        get { state.withLock { $0.recordPermissionPolicy } }
        set {
            state.withLock {
                $0.recordPermissionPolicy = newValue
                $0.recordPermission = newValue.initialPermission
            }
        }
    }

    /// Answers a record permission request: undetermined becomes what the policy says; a
    /// determined permission stays as it is.
    func requestRecordPermission() -> Bool {
        state.withLock { state in
            if state.recordPermission == .undetermined {
                state.recordPermission = state.recordPermissionPolicy.answeredPermission
            }
            return state.recordPermission == .granted
        }
    }

    // MARK: - Media services

    /// Simulates the media services going away: every session becomes inactive (its I/O
    /// stopped) and receives ``AudioSessionNotification/mediaServicesWereLost``; activation fails
    /// with ``AudioSessionError/mediaServicesFailed`` until the reset.
    ///
    /// Thread safety: safe from any thread.
    public func simulateMediaServicesLost() {
        handle(.mediaServicesLost)
    }

    /// Simulates the media services coming back: every session's properties (category, mode,
    /// options, preferences, override) return to their defaults and every session receives
    /// ``AudioSessionNotification/mediaServicesWereReset``. Apps set their category again and
    /// reactivate when appropriate.
    ///
    /// Thread safety: safe from any thread.
    public func simulateMediaServicesReset() {
        handle(.mediaServicesReset)
    }

    // MARK: - Changing state

    /// Runs a change under the lock, then does what it left to do outside the lock: I/O stops,
    /// warnings, then the outbox (hardware, notifications).
    func transact<Result: Sendable, Failure: Error>(
        _ body: (inout SystemState, inout Effects) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        let (result, effects) = try state.withLock { state throws(Failure) -> (Result, Effects) in
            var effects = Effects()
            let hints = state.hints
            let result = try body(&state, &effects)
            state.commit(hintsBefore: hints)
            return (result, effects)
        }
        perform(effects)
        deliverPending()
        return result
    }

    /// Changes state under the lock without committing or delivering anything (registrations).
    /// The result is returned out of the lock, so anything removed is released after unlocking.
    func withStateLock<Result: Sendable>(_ body: (inout SystemState) -> Result) -> Result {
        state.withLock { body(&$0) }
    }

    /// Reads under the lock.
    func read<Result: Sendable>(_ body: (SystemState) -> Result) -> Result {
        state.withLock { body($0) }
    }

    private func perform(_ effects: Effects) {
        for record in effects.ioStops { record.stop() }
        for warning in effects.warnings {
            if let warningSink {
                warningSink(warning)
            } else {
                logger.warning("\(warning)")
            }
        }
        for stream in effects.finishedStreams { stream.finish() }
    }

    /// Works through the outbox unless another thread already does; in order, without the lock.
    func deliverPending() {
        let claimed = state.withLock { state in
            guard !state.isDelivering, !state.outbox.isEmpty else { return false }
            state.isDelivering = true
            return true
        }
        guard claimed else { return }
        while true {
            let batch = state.withLock { state -> [OutboxItem] in
                let batch = state.outbox
                state.outbox.removeAll()
                if batch.isEmpty { state.isDelivering = false }
                return batch
            }
            if batch.isEmpty { return }
            for item in batch { perform(item) }
        }
    }

    private func perform(_ item: OutboxItem) {
        switch item {
        case let .configureHardware(hardware, .idle):
            hardware.apply(route: .empty)
        case let .configureHardware(hardware, .route(route, preferred)):
            hardware.apply(route: route)
            let values = hardware.negotiate(preferred, for: route)
            state.withLock { state in
                if state.hardware === hardware { state.hardwareValues = values }
            }
        case let .setInputGain(hardware, gain):
            hardware.setInputGain(gain)
        case let .notify(notification, observers, streams):
            for observer in observers { observer(notification) }
            for stream in streams { stream.yield(notification) }
        }
    }
}
