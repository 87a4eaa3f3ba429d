/// Everything the ``AudioSystem`` knows, and the arbitration rules that change it.
///
/// A value type mutated only under the system's lock. Methods that throw do so before changing
/// anything, so an error leaves the state as it was. Notifications are queued (``pending``) and
/// delivered by the system after the lock is released.
struct SystemState: Sendable {
    var sessions: [UInt64: SessionState] = [:]
    var devices: [AudioDevice]
    var proximity: AudioSession.Proximity
    var isBuiltInMicMuted = false
    var isMediaServicesLost = false

    var hardware: any AudioHardware
    var hardwareValues: HardwareValues
    /// What the hardware was last asked to do; `nil` while unknown (just replaced), so that the
    /// next commit configures it even if the route looks the same.
    var hardwareRequest: HardwareRequest? = .idle

    var outputVolume: Float
    var inputGain: Float
    var isInputGainSettable: Bool

    var recordPermissionPolicy: RecordPermissionPolicy
    var recordPermission: AudioSession.RecordPermission

    var nextID: UInt64 = 1
    var activationCounter: UInt64 = 0

    /// Notifications queued by the change under way.
    var pending: [OutboxItem] = []
    /// Work committed but not yet done (see ``AudioSystem``).
    var outbox: [OutboxItem] = []
    /// Whether a thread is working through the outbox.
    var isDelivering = false

    init(hardware: any AudioHardware, recordPermissionPolicy: RecordPermissionPolicy) {
        let reading = HardwareReading(hardware)
        self.hardware = hardware
        self.devices = reading.devices
        self.proximity = reading.proximity
        self.hardwareValues = reading.values
        self.outputVolume = reading.outputVolume
        self.inputGain = reading.inputGain
        self.isInputGainSettable = reading.isInputGainSettable
        self.recordPermissionPolicy = recordPermissionPolicy
        self.recordPermission = recordPermissionPolicy.initialPermission
    }

    /// What the system reads from hardware it starts to drive: its devices, its proximity, and the
    /// values it negotiates for the route of a new session. Made outside the lock when hardware is
    /// replaced (hardware calls never run under it).
    struct HardwareReading: Sendable {
        let devices: [AudioDevice]
        let proximity: AudioSession.Proximity
        let values: HardwareValues
        let outputVolume: Float
        let inputGain: Float
        let isInputGainSettable: Bool

        init(_ hardware: any AudioHardware) {
            devices = hardware.devices
            proximity = hardware.proximity
            outputVolume = hardware.outputVolume
            inputGain = hardware.inputGain
            isInputGainSettable = hardware.isInputGainSettable
            let route = RoutePolicy.route(for: RoutePolicy.Input(configuration: .initial, devices: devices))
            values = hardware.negotiate(.none, for: route)
        }
    }

    mutating func makeID() -> UInt64 {
        defer { nextID += 1 }
        return nextID
    }

    /// Session identifiers in creation order, for a deterministic notification order.
    var orderedIDs: [UInt64] { sessions.keys.sorted() }

    var activeSessions: [SessionState] {
        sessions.values.filter(\.isActive).sorted { $0.id < $1.id }
    }

    // MARK: - Reading

    /// Another active session plays non-mixable audio.
    func secondaryAudioShouldBeSilenced(for id: UInt64) -> Bool {
        sessions.values.contains {
            $0.id != id && $0.isActive && !$0.configuration.isMixable && $0.configuration.category.hasOutput
        }
    }

    /// Another active session plays audio.
    func isOtherAudioPlaying(for id: UInt64) -> Bool {
        sessions.values.contains { $0.id != id && $0.isActive && $0.configuration.category.hasOutput }
    }

    /// The session is active and another active session ducks others. The phone is never ducked.
    func isDucked(_ id: UInt64) -> Bool {
        guard let session = sessions[id], session.isActive, session.priority < .phoneCall else { return false }
        return sessions.values.contains { $0.id != id && $0.isActive && $0.configuration.options.contains(.duckOthers) }
    }

    func capturesSilence(_ id: UInt64) -> Bool {
        guard let session = sessions[id] else { return true }
        if recordPermission != .granted { return true }
        return isBuiltInMicMuted && currentRoute(for: session).inputs.contains { $0.portType == .builtInMic }
    }

    // MARK: - Queuing notifications

    mutating func post(_ notification: AudioSessionNotification, to id: UInt64) {
        guard let session = sessions[id] else { return }
        pending.append(.notify(notification, observers: Array(session.observers.values), streams: Array(session.streams.values)))
    }

    /// Called at the end of every change, still under the lock: queues the hardware
    /// configuration (first, so observers read new values), the change's notifications,
    /// then the secondary-audio hint changes.
    mutating func commit(hintsBefore: [UInt64: Bool]) {
        var request = HardwareRequest.idle
        if let owner = routeOwner {
            request = .route(systemRoute, owner.preferred)
        }
        if request != hardwareRequest {
            hardwareRequest = request
            outbox.append(.configureHardware(hardware, request))
        }
        outbox.append(contentsOf: pending)
        pending.removeAll()
        for id in orderedIDs {
            guard let before = hintsBefore[id] else { continue }
            let now = secondaryAudioShouldBeSilenced(for: id)
            if now != before {
                post(.silenceSecondaryAudioHint(now ? .begin : .end), to: id)
            }
        }
        outbox.append(contentsOf: pending)
        pending.removeAll()
    }

    var hints: [UInt64: Bool] {
        Dictionary(uniqueKeysWithValues: sessions.keys.map { ($0, secondaryAudioShouldBeSilenced(for: $0)) })
    }

    /// Whether each session has an input to choose from.
    /// Whether the hardware has a microphone (any connected device with an input), whatever a
    /// session's category: iOS code checks it before it switches to a recording category.
    var isInputAvailable: Bool { devices.contains { !$0.inputs.isEmpty } }

    /// Tells every session if a device change flipped ``isInputAvailable`` since `before`.
    mutating func postInputAvailabilityChanges(since before: Bool) {
        guard isInputAvailable != before else { return }
        for id in orderedIDs { post(.inputAvailabilityChanged(isInputAvailable), to: id) }
    }

    // MARK: - Sessions

    mutating func addSession(name: String, priority: AudioSession.Priority) -> UInt64 {
        let id = makeID()
        sessions[id] = SessionState(id: id, name: name, priority: priority)
        return id
    }

    mutating func removeSession(_ id: UInt64, _ effects: inout Effects) {
        guard sessions[id] != nil else { return }
        // Also ends every interruption this session caused, so no session is left waiting on it.
        _ = deactivate(id, options: [], &effects)
        guard let session = sessions.removeValue(forKey: id) else { return }
        effects.finishedStreams += session.streams.values
        effects.released.append(Array(session.observers.values))
    }
}
