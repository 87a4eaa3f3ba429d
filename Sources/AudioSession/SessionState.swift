/// What keeps an interrupted session silent, so the right event can end the interruption.
enum Interrupter: Hashable, Sendable {
    /// Another session's activation. Ended when that session deactivates.
    case session(UInt64)
    /// The built-in microphone was muted. Ended when it is unmuted.
    case builtInMicMute
    /// No port was left for the category. Ended when a suitable device connects.
    case routeDisconnected
}

/// A running I/O unit registered with ``AudioSession/beginIO(named:onStop:)``.
struct IORecord: Sendable {
    let name: String
    let stop: @Sendable () -> Void
}

/// One session's state inside ``SystemState``. Plain data: only ``SystemState`` mutates it.
struct SessionState: Sendable {
    let id: UInt64
    let name: String
    let priority: AudioSession.Priority

    var configuration = AudioSession.Configuration.initial
    var isActive = false
    /// Increases with every activation in the system: the most recent activation has the largest.
    var activationSerial: UInt64 = 0
    var isInBackground = false
    var isSuspended = false
    /// Set only on an inactive session: ``SystemState`` sets it when an interruption makes the
    /// session inactive and clears it on activation, so an active session never has one.
    var interruptedBy: Interrupter?

    var portOverride = AudioSession.PortOverride.none
    var isProximityRoutingEnabled = false
    var preferredInputUID: String?
    var dataSourcePreferences: [String: RoutePolicy.DataSourcePreference] = [:]
    var preferred = PreferredHardwareValues.none

    /// The route last reported to this session while active (`nil` while inactive).
    var reportedRoute: AudioSessionRouteDescription?

    var ioActivities: [UInt64: IORecord] = [:]
    var observers: [UInt64: @Sendable (AudioSessionNotification) -> Void] = [:]
    var streams: [UInt64: AsyncStream<AudioSessionNotification>.Continuation] = [:]

    init(id: UInt64, name: String, priority: AudioSession.Priority) {
        self.id = id
        self.name = name
        self.priority = priority
    }

    /// Whether this session, active as configured, interrupts `other`: the phone interrupts every
    /// lower-priority session and none interrupts it, two non-mixable sessions never play together, and
    /// ``AudioSession/CategoryOptions/interruptSpokenAudioAndMixWithOthers`` pauses spoken audio.
    func interrupts(_ other: SessionState) -> Bool {
        if priority != other.priority { return priority > other.priority }
        if !configuration.isMixable && !other.configuration.isMixable { return true }
        return configuration.options.contains(.interruptSpokenAudioAndMixWithOthers)
            && other.configuration.mode == .spokenAudio
    }

    /// Resets what media services reset rebuilds: the configuration and every preference.
    mutating func resetProperties() {
        configuration = .initial
        portOverride = .none
        isProximityRoutingEnabled = false
        preferredInputUID = nil
        dataSourcePreferences = [:]
        preferred = .none
        interruptedBy = nil
    }
}
