extension SystemState {
    // MARK: - Reading routes

    func routeInput(for session: SessionState) -> RoutePolicy.Input {
        RoutePolicy.Input(
            configuration: session.configuration, devices: devices, portOverride: session.portOverride,
            proximity: proximity, isProximityRoutingEnabled: session.isProximityRoutingEnabled,
            preferredInputUID: session.preferredInputUID, dataSourcePreferences: session.dataSourcePreferences)
    }

    /// The route the session's own configuration asks for (what it gets when it owns the hardware).
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

    /// Active sessions with ports, the one the hardware follows first: the highest priority, then
    /// non-mixable before mixable, then the most recent activation. Sessions without ports
    /// (audioProcessing) have no say in the route.
    var rankedActiveSessions: [SessionState] {
        sessions.values
            .filter { $0.isActive && $0.configuration.category != .audioProcessing }
            .sorted { a, b in
                (a.priority.rawValue, a.configuration.isMixable ? 0 : 1, a.activationSerial)
                    > (b.priority.rawValue, b.configuration.isMixable ? 0 : 1, b.activationSerial)
            }
    }

    /// The session whose route and preferred values the hardware follows.
    var routeOwner: SessionState? { rankedActiveSessions.first }

    /// The one route of the hardware: the route owner's, and for a direction it does not use (a
    /// `record` owner has no output), the route of the highest-ranked session that uses it.
    var systemRoute: AudioSessionRouteDescription {
        var result = AudioSessionRouteDescription.empty
        for session in rankedActiveSessions {
            let own = route(for: session)
            if result.inputs.isEmpty { result.inputs = own.inputs }
            if result.outputs.isEmpty { result.outputs = own.outputs }
        }
        return result
    }

    /// The route a session's audio takes. Active: the system route in the directions its category
    /// uses, since a phone has one hardware route. Inactive: the route it would ask for.
    func currentRoute(for session: SessionState) -> AudioSessionRouteDescription {
        guard session.isActive else { return route(for: session) }
        let system = systemRoute
        let category = session.configuration.category
        return AudioSessionRouteDescription(
            inputs: category.hasInput ? system.inputs : [], outputs: category.hasOutput ? system.outputs : [])
    }

    // MARK: - Reporting route changes

    /// Recomputes the routes of active sessions and reports the ones that changed: every session
    /// whose audio moved is told, whichever session caused the move.
    ///
    /// - Parameters:
    ///   - reason: The reason to report.
    ///   - only: Check only these sessions for a lost route (`nil`: every active session); a
    ///     session's own route changes only when its settings or the devices change.
    ///   - alwaysNotify: Sessions told even if their route did not change (their override was cleared,
    ///     their category changed).
    mutating func reevaluateRoutes(
        reason: AudioSession.RouteChangeReason, only: Set<UInt64>? = nil, alwaysNotify: Set<UInt64> = [],
        _ effects: inout Effects
    ) {
        interruptSessionsWithoutRoute(only: only, &effects)
        for id in orderedIDs {
            guard let session = sessions[id], session.isActive else { continue }
            let new = currentRoute(for: session)
            let previous = session.reportedRoute ?? new  // nil: just activated, nothing to report
            sessions[id]?.reportedRoute = new
            if new != previous || alwaysNotify.contains(id) {
                post(.routeChange(.init(reason: reason, previousRoute: previous, currentRoute: new)), to: id)
            }
        }
    }

    /// Active sessions left without a port their category needs get a route change with reason
    /// `noSuitableRouteForCategory`, then an interruption `routeDisconnected`.
    private mutating func interruptSessionsWithoutRoute(only: Set<UInt64>?, _ effects: inout Effects) {
        for id in orderedIDs {
            guard let session = sessions[id], session.isActive, only?.contains(id) ?? true else { continue }
            let own = route(for: session)
            guard lacksSuitableRoute(session, own) else { continue }
            let previous = session.reportedRoute ?? own
            post(.routeChange(.init(reason: .noSuitableRouteForCategory, previousRoute: previous, currentRoute: own)), to: id)
            interrupt(id, reason: .routeDisconnected, by: .routeDisconnected, &effects)
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
}
