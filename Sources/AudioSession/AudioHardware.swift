/// Something the hardware reports to the ``AudioSystem``.
///
/// Thread safety: a value type; safe to use from any thread.
public enum AudioHardwareEvent: Hashable, Sendable {
    /// A device was connected; it becomes the newest in connection order (last in wins).
    /// Route change reason ``AudioSession/RouteChangeReason/newDeviceAvailable``.
    case deviceConnected(AudioDevice)
    /// A device was disconnected. Route change reason ``AudioSession/RouteChangeReason/oldDeviceUnavailable``.
    case deviceDisconnected(deviceID: String)
    /// A connected device's ports changed and it stays connected (the second jack of a
    /// two-jack headset switched): it keeps its place in connection order. Route change reason
    /// ``AudioSession/RouteChangeReason/routeConfigurationChange``, if the route changed.
    case deviceChanged(AudioDevice)
    /// The proximity sensor's reading changed.
    case proximityChanged(AudioSession.Proximity)
    /// The built-in microphone was muted (`true`) or unmuted by hardware (a cover was closed or opened).
    case builtInMicMuteChanged(Bool)
    /// The media services (sound server, driver) went away.
    case mediaServicesLost
    /// The media services are back.
    case mediaServicesReset
    /// The output volume changed (the user turned the volume control), from 0 to 1.
    case outputVolumeChanged(Float)
}

/// The hardware an ``AudioSystem`` drives: ALSA in the AudioIO module, ``SimulatedAudioHardware`` in tests.
///
/// The system reads ``devices`` and ``proximity`` once, when it starts using the hardware, and
/// from then on learns about changes through the handler it installs with ``setEventHandler(_:)``.
/// It tells the hardware which ports to use with ``apply(route:)`` and negotiates the hardware
/// values with ``negotiate(_:for:)`` whenever the route or the preferred values of the session
/// that owns the route change.
///
/// Threading contract:
/// - The system calls ``apply(route:)`` and ``negotiate(_:for:)`` one at a time, in order, never
///   while holding its own lock, on the thread that is delivering the system's changes (see
///   ``AudioSystem``). They may take time (opening a device).
/// - The hardware may call the event handler from any thread, including from inside ``apply(route:)``,
///   but never while holding a lock of its own that its other methods take.
/// - One hardware object serves one system: installing a handler replaces the previous one.
///
/// Thread safety: implementations must be safe to call from any thread (`Sendable`).
public protocol AudioHardware: AnyObject, Sendable {
    /// The connected devices, in connection order (oldest first; built-in devices usually first).
    ///
    /// Thread safety: safe from any thread.
    var devices: [AudioDevice] { get }

    /// The proximity sensor's current reading (``AudioSession/Proximity/unknown`` without a sensor).
    ///
    /// Thread safety: safe from any thread.
    var proximity: AudioSession.Proximity { get }

    /// Installs the handler that receives plug, unplug, proximity and media services events.
    ///
    /// - Parameter handler: The handler, or `nil` to stop reporting.
    ///
    /// Thread safety: safe from any thread.
    func setEventHandler(_ handler: (@Sendable (AudioHardwareEvent) -> Void)?)

    /// Switches the hardware to a route: the ports to open (ALSA devices, mixer paths).
    ///
    /// - Parameter route: The full description of the ports to use; an empty route means no
    ///   session is active and the devices may be released.
    ///
    /// Thread safety: called by the system as described in the protocol's threading contract.
    func apply(route: AudioSessionRouteDescription)

    /// Works out the values the hardware will run with for a route, given the preferred values.
    ///
    /// - Parameters:
    ///   - preferred: The session's preferred values (`nil` fields: no preference).
    ///   - route: The route the values are for.
    /// - Returns: The actual values, which may differ from the preferred ones.
    ///
    /// Thread safety: called by the system as described in the protocol's threading contract.
    func negotiate(_ preferred: PreferredHardwareValues, for route: AudioSessionRouteDescription) -> HardwareValues

    /// The output volume from 0 to 1 (the route's playback mixer control). Has a default.
    ///
    /// Thread safety: safe from any thread.
    var outputVolume: Float { get }

    /// The input gain from 0 to 1 (the route's capture mixer control). Has a default.
    ///
    /// Thread safety: safe from any thread.
    var inputGain: Float { get }

    /// Whether the input gain can be set. Has a default (`false`).
    ///
    /// Thread safety: safe from any thread.
    var isInputGainSettable: Bool { get }

    /// Sets the input gain. Has a default (does nothing).
    ///
    /// Thread safety: called by the system as described in the protocol's threading contract.
    func setInputGain(_ gain: Float)
}

/// Volume and gain, with defaults for hardware that has neither control: full volume, unity gain
/// that cannot be set. The ALSA hardware maps them to the route's mixer controls.
extension AudioHardware {
    /// The output volume, from 0 to 1, read when the system starts using the hardware; changes
    /// arrive as ``AudioHardwareEvent/outputVolumeChanged(_:)``. Default: 1.
    ///
    /// Thread safety: safe from any thread.
    public var outputVolume: Float { 1 }

    /// The input gain, from 0 to 1, read when the system starts using the hardware. Default: 1.
    ///
    /// Thread safety: safe from any thread.
    public var inputGain: Float { 1 }

    /// Whether ``setInputGain(_:)`` does anything. Default: `false`.
    ///
    /// Thread safety: safe from any thread.
    public var isInputGainSettable: Bool { false }

    /// Sets the input gain (0 to 1). Called like ``apply(route:)``: in order, never under the
    /// system's lock. Default: does nothing.
    ///
    /// Thread safety: called by the system as described in the protocol's threading contract.
    public func setInputGain(_ gain: Float) {}
}
