extension AudioSession {
    /// The ports the session's audio uses.
    ///
    /// Active: the system's one route (the route owner's: the highest-priority, then non-mixable,
    /// then most recently activated active session), in the directions this session's category
    /// uses; it changes when another session moves the hardware, and a route change is posted.
    /// Inactive: the route ``RoutePolicy/route(for:)`` gives this session's configuration, read
    /// live (what it would get if it owned the hardware).
    ///
    /// Thread safety: safe from any thread.
    public var currentRoute: AudioSessionRouteDescription { read { $0.currentRoute(for: $1) } }

    /// The inputs the session may choose from (built-in microphone first; Bluetooth HFP only
    /// with ``CategoryOptions/allowBluetooth``). Empty when the category does not record.
    ///
    /// Thread safety: safe from any thread.
    public var availableInputs: [AudioSessionPortDescription] { read { $0.availableInputs(for: $1) } }

    /// Whether the hardware has an input (a microphone) now, whatever this session's category,
    /// as on iOS, where apps check it before switching to a recording category
    /// (``availableInputs`` stays scoped to the category).
    ///
    /// Thread safety: safe from any thread.
    public var isInputAvailable: Bool { read { state, _ in state.isInputAvailable } }

    /// The preferred input, if set and still available.
    ///
    /// Thread safety: safe from any thread.
    public var preferredInput: AudioSessionPortDescription? {
        read { state, session in RoutePolicy.honouredPreferredInput(state.routeInput(for: session)) }
    }

    /// Chooses the input (and, for an external device that can play, the output with it).
    ///
    /// The preference lasts until it is cleared, its device disconnects, or a new input device
    /// connects (last in wins). While active, a resulting route change is reported with reason
    /// ``RouteChangeReason/override``.
    ///
    /// - Parameter port: One of ``availableInputs``, or `nil` to clear the preference.
    /// - Throws: ``AudioSessionError/portNotAvailable(uid:)`` if the port is not an available input.
    ///
    /// Thread safety: safe from any thread.
    public func setPreferredInput(_ port: AudioSessionPortDescription?) throws(AudioSessionError) {
        let id = self.id
        try system.transact { (state, effects) throws(AudioSessionError) in try state.setPreferredInput(id, port, &effects) }
    }

    /// The current output override (``PortOverride/none`` unless ``overrideOutputAudioPort(_:)`` set the speaker
    /// and nothing has cleared it since).
    ///
    /// Thread safety: safe from any thread.
    public var outputPortOverride: PortOverride { read { $1.portOverride } }

    /// Forces the built-in speaker (and built-in microphone), or removes the override.
    ///
    /// The override is transient: a device connection or disconnection, an interruption, a
    /// category change or media services reset clear it (each with its own notification).
    /// Changing it while active posts a route change with reason ``RouteChangeReason/override``.
    ///
    /// - Parameter portOverride: ``PortOverride/speaker`` or ``PortOverride/none``.
    /// - Throws: ``AudioSessionError/overrideRequiresPlayAndRecord(category:)`` outside ``Category/playAndRecord``.
    ///
    /// Thread safety: safe from any thread.
    public func overrideOutputAudioPort(_ portOverride: PortOverride) throws(AudioSessionError) {
        let id = self.id
        try system.transact { (state, effects) throws(AudioSessionError) in try state.setPortOverride(id, portOverride, &effects) }
    }

    /// Whether the proximity override is on (CallAudio's addition, as raise-to-ear apps do):
    /// when a ``Category/playAndRecord`` session uses the built-in outputs, the receiver is used
    /// near the ear and the speaker away from it. External devices and the speaker override win.
    /// Off by default. Route changes it causes have reason ``RouteChangeReason/override``.
    ///
    /// Thread safety: safe from any thread.
    public var isProximityRoutingEnabled: Bool {
        get { read { $1.isProximityRoutingEnabled } }
        set {
            let id = self.id
            system.transact { state, effects in state.setProximityRouting(id, newValue, &effects) }
        }
    }

    /// The proximity sensor's last reading.
    ///
    /// Thread safety: safe from any thread.
    public var proximity: Proximity { system.proximity }

    // MARK: - Data sources and polar patterns

    /// The data sources of the current input port (empty if it has none).
    ///
    /// Thread safety: safe from any thread.
    public var inputDataSources: [AudioSessionDataSourceDescription] { currentRoute.inputs.first?.dataSources ?? [] }

    /// The selected data source of the current input port.
    ///
    /// Thread safety: safe from any thread.
    public var inputDataSource: AudioSessionDataSourceDescription? { currentRoute.inputs.first?.selectedDataSource }

    /// Selects a data source of the current input port (Apple's `setInputDataSource(_:)`).
    ///
    /// - Parameter dataSource: One of ``inputDataSources``, or `nil` for the port's default.
    /// - Throws: ``AudioSessionError/portNotAvailable(uid:)`` without input;
    ///   ``AudioSessionError/dataSourceNotAvailable(dataSourceID:portUID:)`` if it is not the port's.
    ///
    /// Thread safety: safe from any thread.
    public func setInputDataSource(_ dataSource: AudioSessionDataSourceDescription?) throws(AudioSessionError) {
        guard let port = currentRoute.inputs.first else { throw .portNotAvailable(uid: "input") }
        try setPreferredDataSource(dataSource, for: port)
    }

    /// Prefers a data source of a port (Apple's `AVAudioSessionPortDescription.setPreferredDataSource(_:)`).
    ///
    /// Set it while inactive ideally; while active a resulting change is reported with reason
    /// ``RouteChangeReason/routeConfigurationChange``.
    ///
    /// - Parameters:
    ///   - dataSource: One of the port's data sources, or `nil` for the port's default.
    ///   - port: A connected port.
    /// - Throws: ``AudioSessionError/portNotAvailable(uid:)`` or ``AudioSessionError/dataSourceNotAvailable(dataSourceID:portUID:)``.
    ///
    /// Thread safety: safe from any thread.
    public func setPreferredDataSource(
        _ dataSource: AudioSessionDataSourceDescription?, for port: AudioSessionPortDescription
    ) throws(AudioSessionError) {
        let id = self.id
        try system.transact { (state, effects) throws(AudioSessionError) in
            try state.setPreferredDataSource(id, dataSourceID: dataSource?.dataSourceID, portUID: port.uid, &effects)
        }
    }

    /// Prefers a polar pattern for a data source of a port
    /// (Apple's `AVAudioSessionDataSourceDescription.setPreferredPolarPattern(_:)`).
    ///
    /// - Parameters:
    ///   - pattern: One of the data source's supported patterns, or `nil` for its default.
    ///   - dataSource: The data source.
    ///   - port: The connected port it belongs to.
    /// - Throws: ``AudioSessionError/portNotAvailable(uid:)``, ``AudioSessionError/dataSourceNotAvailable(dataSourceID:portUID:)``
    ///   or ``AudioSessionError/polarPatternNotSupported(_:dataSourceID:)``.
    ///
    /// Thread safety: safe from any thread.
    public func setPreferredPolarPattern(
        _ pattern: PolarPattern?, for dataSource: AudioSessionDataSourceDescription, of port: AudioSessionPortDescription
    ) throws(AudioSessionError) {
        let id = self.id
        try system.transact { (state, effects) throws(AudioSessionError) in
            try state.setPreferredPolarPattern(id, pattern, dataSourceID: dataSource.dataSourceID, portUID: port.uid, &effects)
        }
    }
}
