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

        init(_ hardware: any AudioHardware) {
            devices = hardware.devices
            proximity = hardware.proximity
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

    func routeInput(for session: SessionState) -> RoutePolicy.Input {
        RoutePolicy.Input(
            configuration: session.configuration, devices: devices, portOverride: session.portOverride,
            proximity: proximity, isProximityRoutingEnabled: session.isProximityRoutingEnabled,
            preferredInputUID: session.preferredInputUID, dataSourcePreferences: session.dataSourcePreferences)
    }

    func route(for session: SessionState) -> AudioSessionRouteDescription {
        RoutePolicy.route(for: routeInput(for: session))
    }

    func availableInputs(for session: SessionState) -> [AudioSessionPortDescription] {
        RoutePolicy.availableInputs(for: routeInput(for: session))
    }

    /// Whether the route lacks a port in a direction the category needs.
    func lacksSuitableRoute(_ session: SessionState, _ route: AudioSessionRouteDescription) -> Bool {
        let category = session.configuration.category
        return (category.hasOutput && route.outputs.isEmpty) || (category.hasInput && route.inputs.isEmpty)
    }

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
        return isBuiltInMicMuted && route(for: session).inputs.contains { $0.portType == .builtInMic }
    }

    /// The session whose route and preferred values the hardware follows: the highest priority,
    /// then non-mixable before mixable, then the most recent activation. Sessions without ports
    /// (audioProcessing) never own the route.
    var routeOwner: SessionState? {
        sessions.values
            .filter { $0.isActive && $0.configuration.category != .audioProcessing }
            .max { a, b in
                (a.priority.rawValue, a.configuration.isMixable ? 0 : 1, a.activationSerial)
                    < (b.priority.rawValue, b.configuration.isMixable ? 0 : 1, b.activationSerial)
            }
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
            request = .route(route(for: owner), owner.preferred)
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

    // MARK: - Configuration

    mutating func setConfiguration(_ id: UInt64, _ configuration: AudioSession.Configuration, _ effects: inout Effects) throws(AudioSessionError) {
        guard let session = sessions[id] else { return }
        if isMediaServicesLost { throw .mediaServicesFailed }
        if configuration.modeFellBack {
            effects.warnings.append(
                "session '\(session.name)': mode '\(configuration.requestedMode)' is not supported by category "
                    + "'\(configuration.category)'; using mode 'default'")
        }
        let overrideCleared = session.portOverride != .none
        sessions[id]?.configuration = configuration
        sessions[id]?.portOverride = .none  // transient: a category change clears it
        if session.isActive && (session.configuration != configuration || overrideCleared) {
            reevaluateRoutes(reason: .categoryChange, only: [id], alwaysNotify: [id], &effects)
        }
    }

    // MARK: - Activation

    mutating func activate(_ id: UInt64, _ effects: inout Effects) throws(AudioSessionError) {
        guard let session = sessions[id], !session.isActive else { return }
        if isMediaServicesLost { throw .mediaServicesFailed }
        let configuration = session.configuration
        let others = activeSessions.filter { $0.id != id }

        // The phone always wins: a lower-priority session may only mix in, output only.
        if configuration.category.hasInput || !configuration.isMixable,
           let holder = others.first(where: { $0.priority > session.priority }) {
            throw .insufficientPriority(heldBy: holder.name)
        }

        let route = route(for: session)
        if configuration.category.hasOutput && route.outputs.isEmpty { throw .cannotStartPlaying }
        if configuration.category.hasInput && route.inputs.isEmpty { throw .cannotStartRecording }

        let victims = others.filter { other in
            if session.priority > other.priority { return true }
            if !configuration.isMixable && !other.configuration.isMixable { return true }
            return configuration.options.contains(.interruptSpokenAudioAndMixWithOthers)
                && other.configuration.mode == .spokenAudio
        }
        if session.isInBackground && !configuration.isMixable && !victims.isEmpty && session.priority < .phoneCall {
            throw .cannotInterruptOthers
        }

        for victim in victims {
            interrupt(victim.id, reason: .default, by: .session(id), &effects)
        }
        if configuration.category == .playAndRecord, !configuration.mode.usesVoiceProcessing,
           !session.isProximityRoutingEnabled, route.outputs.first?.portType == .builtInReceiver {
            // Spec section 9: audio stuck in the receiver unexpectedly must be loud.
            effects.warnings.append(
                "session '\(session.name)' (playAndRecord, mode '\(configuration.mode)') plays through the receiver; "
                    + "add .defaultToSpeaker for the speaker, or use mode .voiceChat for a call")
        }
        activationCounter += 1
        sessions[id]?.isActive = true
        sessions[id]?.activationSerial = activationCounter
        sessions[id]?.interruptedBy = nil
        sessions[id]?.reportedRoute = route
    }

    /// Deactivates (stopping any registered I/O first) and ends the interruptions this session caused.
    /// - Returns: The names of the I/O that was still running (the caller reports `isBusy`).
    mutating func deactivate(_ id: UInt64, options: AudioSession.SetActiveOptions, _ effects: inout Effects) -> [String] {
        guard let session = sessions[id] else { return [] }
        let stopped = session.isActive ? makeInactive(id, &effects) : []
        let notify = options.contains(.notifyOthersOnDeactivation)
        var released: [String] = []
        for other in orderedIDs {
            guard let victim = sessions[other], victim.interruptedBy == .session(id) else { continue }
            sessions[other]?.interruptedBy = nil
            released.append(victim.name)
            post(.interruption(.init(type: .ended, options: notify ? .shouldResume : [])), to: other)
        }
        if !notify && !released.isEmpty {
            // Spec section 9: forgetting notifyOthersOnDeactivation must be loud.
            effects.warnings.append(
                "session '\(session.name)' deactivated without notifyOthersOnDeactivation: "
                    + "\(released.map { "'\($0)'" }.joined(separator: ", ")) will not be told to resume")
        }
        return stopped
    }

    /// Makes a session inactive involuntarily: I/O stopped, override cleared, `began` queued.
    mutating func interrupt(_ id: UInt64, reason: AudioSession.InterruptionReason, by interrupter: Interrupter, _ effects: inout Effects) {
        guard let session = sessions[id], session.isActive else { return }
        makeInactive(id, &effects)
        sessions[id]?.portOverride = .none  // transient: an interruption clears it
        sessions[id]?.interruptedBy = interrupter
        post(.interruption(.init(type: .began, reason: reason)), to: id)
    }

    /// Makes a session inactive: its registered I/O is stopped (in registration order) and
    /// forgotten, and it has no reported route. What else changes is up to the caller.
    /// - Returns: The names of the I/O that was stopped.
    @discardableResult
    private mutating func makeInactive(_ id: UInt64, _ effects: inout Effects) -> [String] {
        guard let session = sessions[id] else { return [] }
        let records = session.ioActivities.sorted { $0.key < $1.key }.map(\.value)
        effects.ioStops += records
        sessions[id]?.ioActivities = [:]
        sessions[id]?.isActive = false
        sessions[id]?.reportedRoute = nil
        return records.map(\.name)
    }

    /// Ends interruptions of one kind with `shouldResume` (the condition is gone).
    mutating func endInterruptions(by interrupter: Interrupter, where condition: (SessionState) -> Bool = { _ in true }) {
        for id in orderedIDs {
            guard let session = sessions[id], session.interruptedBy == interrupter, condition(session) else { continue }
            sessions[id]?.interruptedBy = nil
            post(.interruption(.init(type: .ended, options: .shouldResume)), to: id)
        }
    }

    // MARK: - Routes

    /// Recomputes the routes of active sessions and reports the ones that changed.
    ///
    /// - Parameters:
    ///   - reason: The reason to report.
    ///   - only: Restrict to these sessions (`nil`: every active session).
    ///   - alwaysNotify: Sessions told even if their route did not change (their override was cleared,
    ///     their category changed).
    mutating func reevaluateRoutes(
        reason: AudioSession.RouteChangeReason, only: Set<UInt64>? = nil, alwaysNotify: Set<UInt64> = [],
        _ effects: inout Effects
    ) {
        for id in orderedIDs {
            guard let session = sessions[id], session.isActive, only?.contains(id) ?? true else { continue }
            let new = route(for: session)
            let previous = session.reportedRoute ?? new
            if lacksSuitableRoute(session, new) {
                sessions[id]?.reportedRoute = new
                post(.routeChange(.init(reason: .noSuitableRouteForCategory, previousRoute: previous, currentRoute: new)), to: id)
                interrupt(id, reason: .routeDisconnected, by: .routeDisconnected, &effects)
                continue
            }
            if new != previous || alwaysNotify.contains(id) {
                sessions[id]?.reportedRoute = new
                post(.routeChange(.init(reason: reason, previousRoute: previous, currentRoute: new)), to: id)
            }
        }
    }

    /// Clears every session's speaker override (any route change does).
    /// - Returns: The active sessions that had one (they are told even if the route looks the same).
    mutating func clearOverrides() -> Set<UInt64> {
        var cleared: Set<UInt64> = []
        for id in orderedIDs where sessions[id]?.portOverride != AudioSession.PortOverride.none {
            sessions[id]?.portOverride = .none
            if sessions[id]?.isActive == true { cleared.insert(id) }
        }
        return cleared
    }

    mutating func setPortOverride(_ id: UInt64, _ portOverride: AudioSession.PortOverride, _ effects: inout Effects) throws(AudioSessionError) {
        guard let session = sessions[id] else { return }
        guard session.configuration.category == .playAndRecord else {
            throw .overrideRequiresPlayAndRecord(category: session.configuration.category)
        }
        guard session.portOverride != portOverride else { return }
        sessions[id]?.portOverride = portOverride
        reevaluateRoutes(reason: .override, only: [id], alwaysNotify: [id], &effects)
    }

    mutating func setPreferredInput(_ id: UInt64, _ port: AudioSessionPortDescription?, _ effects: inout Effects) throws(AudioSessionError) {
        guard let session = sessions[id] else { return }
        if let port, !availableInputs(for: session).contains(where: { $0.uid == port.uid }) {
            throw .portNotAvailable(uid: port.uid)
        }
        sessions[id]?.preferredInputUID = port?.uid
        reevaluateRoutes(reason: .override, only: [id], &effects)
    }

    mutating func setProximityRouting(_ id: UInt64, _ enabled: Bool, _ effects: inout Effects) {
        guard sessions[id] != nil else { return }
        sessions[id]?.isProximityRoutingEnabled = enabled
        reevaluateRoutes(reason: .override, only: [id], &effects)
    }

    func connectedPort(uid: String) -> AudioSessionPortDescription? {
        devices.flatMap(\.ports).first { $0.uid == uid }
    }

    mutating func setPreferredDataSource(
        _ id: UInt64, dataSourceID: Int?, portUID: String, _ effects: inout Effects
    ) throws(AudioSessionError) {
        guard sessions[id] != nil else { return }
        guard let port = connectedPort(uid: portUID) else { throw .portNotAvailable(uid: portUID) }
        if let dataSourceID, !port.dataSources.contains(where: { $0.dataSourceID == dataSourceID }) {
            throw .dataSourceNotAvailable(dataSourceID: dataSourceID, portUID: portUID)
        }
        sessions[id]?.dataSourcePreferences[portUID, default: .init()].dataSourceID = dataSourceID
        reevaluateRoutes(reason: .routeConfigurationChange, only: [id], &effects)
    }

    mutating func setPreferredPolarPattern(
        _ id: UInt64, _ pattern: AudioSession.PolarPattern?, dataSourceID: Int, portUID: String, _ effects: inout Effects
    ) throws(AudioSessionError) {
        guard sessions[id] != nil else { return }
        guard let port = connectedPort(uid: portUID) else { throw .portNotAvailable(uid: portUID) }
        guard let source = port.dataSources.first(where: { $0.dataSourceID == dataSourceID }) else {
            throw .dataSourceNotAvailable(dataSourceID: dataSourceID, portUID: portUID)
        }
        if let pattern, !source.supportedPolarPatterns.contains(pattern) {
            throw .polarPatternNotSupported(pattern, dataSourceID: dataSourceID)
        }
        sessions[id]?.dataSourcePreferences[portUID, default: .init()].polarPatterns[dataSourceID] = pattern
        reevaluateRoutes(reason: .routeConfigurationChange, only: [id], &effects)
    }

    // MARK: - Hardware events

    mutating func handle(_ event: AudioHardwareEvent, _ effects: inout Effects) {
        switch event {
        case let .deviceConnected(device):
            devices.removeAll { $0.id == device.id }
            devices.append(device)
            if !device.inputs.isEmpty {
                // Last in wins: a new input device takes over from an explicit preference.
                for id in orderedIDs { sessions[id]?.preferredInputUID = nil }
            }
            let cleared = clearOverrides()
            reevaluateRoutes(reason: .newDeviceAvailable, alwaysNotify: cleared, &effects)
            let snapshot = self
            endInterruptions(by: .routeDisconnected) { !snapshot.lacksSuitableRoute($0, snapshot.route(for: $0)) }

        case let .deviceDisconnected(deviceID):
            guard let device = devices.first(where: { $0.id == deviceID }) else { return }
            devices.removeAll { $0.id == deviceID }
            let gone = Set(device.ports.map(\.uid))
            for id in orderedIDs where gone.contains(sessions[id]?.preferredInputUID ?? "") {
                sessions[id]?.preferredInputUID = nil
            }
            let cleared = clearOverrides()
            reevaluateRoutes(reason: .oldDeviceUnavailable, alwaysNotify: cleared, &effects)

        case let .proximityChanged(newProximity):
            guard newProximity != proximity else { return }
            proximity = newProximity
            reevaluateRoutes(reason: .override, &effects)

        case let .builtInMicMuteChanged(muted):
            guard muted != isBuiltInMicMuted else { return }
            isBuiltInMicMuted = muted
            if muted {
                for session in activeSessions where session.configuration.category.hasInput
                    && route(for: session).inputs.contains(where: { $0.portType == .builtInMic }) {
                    interrupt(session.id, reason: .builtInMicMuted, by: .builtInMicMute, &effects)
                }
            } else {
                endInterruptions(by: .builtInMicMute)
            }

        case .mediaServicesLost:
            loseMediaServices(&effects)

        case .mediaServicesReset:
            resetMediaServices(&effects)
        }
    }

    /// Every session becomes inactive (I/O stopped) and is told; activation fails until the reset.
    mutating func loseMediaServices(_ effects: inout Effects) {
        guard !isMediaServicesLost else { return }
        stopEverything(&effects)
        isMediaServicesLost = true
        for id in orderedIDs { post(.mediaServicesWereLost, to: id) }
    }

    /// Every session's properties go back to their defaults and every session is told.
    mutating func resetMediaServices(_ effects: inout Effects) {
        stopEverything(&effects)
        isMediaServicesLost = false
        for id in orderedIDs {
            sessions[id]?.resetProperties()
            post(.mediaServicesWereReset, to: id)
        }
    }

    private mutating func stopEverything(_ effects: inout Effects) {
        for id in orderedIDs {
            makeInactive(id, &effects)
            sessions[id]?.interruptedBy = nil
            sessions[id]?.portOverride = .none
        }
    }

    /// Switches to other hardware: what the caller read from it outside the lock replaces the old devices, proximity and values.
    mutating func replaceHardware(_ newHardware: any AudioHardware, reading: HardwareReading, _ effects: inout Effects) {
        effects.released.append(hardware)
        hardware = newHardware
        devices = reading.devices
        proximity = reading.proximity
        hardwareValues = reading.values
        for id in orderedIDs { sessions[id]?.preferredInputUID = nil }
        let cleared = clearOverrides()
        // With a route owner, configure the new hardware at commit even if the route looks the same.
        hardwareRequest = routeOwner == nil ? .idle : nil
        reevaluateRoutes(reason: .routeConfigurationChange, alwaysNotify: cleared, &effects)
    }
}
