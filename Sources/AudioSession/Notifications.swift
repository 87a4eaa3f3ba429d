extension AudioSession {
    /// Whether an interruption starts or ends. Mirrors `AVAudioSession.InterruptionType`.
    ///
    /// Thread safety: a value type; safe to use from any thread.
    public enum InterruptionType: String, Hashable, Sendable {
        /// The session was interrupted: it is already inactive and its I/O stopped.
        case began
        /// The interruption is over: reactivate if ``InterruptionOptions/shouldResume`` says so.
        /// Not every `began` gets an `ended`.
        case ended
    }

    /// What an `ended` interruption says. Mirrors `AVAudioSession.InterruptionOptions`.
    ///
    /// Thread safety: a value type; safe to use from any thread.
    public struct InterruptionOptions: OptionSet, Hashable, Sendable {
        /// The option bits.
        public let rawValue: UInt
        /// Creates options from their bits.
        ///
        /// Thread safety: safe from any thread.
        public init(rawValue: UInt) { self.rawValue = rawValue }
        /// The interrupting session ended with ``SetActiveOptions/notifyOthersOnDeactivation``:
        /// reactivate and resume.
        public static let shouldResume = InterruptionOptions(rawValue: 1)
    }

    /// Why a `began` interruption happened. Mirrors `AVAudioSession.InterruptionReason`.
    ///
    /// Thread safety: a value type; safe to use from any thread.
    public enum InterruptionReason: String, Hashable, Sendable {
        /// Another session activated (the usual case).
        case `default`
        /// The built-in microphone was muted by hardware (a closed cover) while this session recorded from it.
        case builtInMicMuted
        /// The route's device went away and no port is left for the category.
        case routeDisconnected
    }

    /// An interruption notification's content.
    /// Apple's keys: `AVAudioSessionInterruptionTypeKey`, `...OptionKey`, `...ReasonKey`.
    ///
    /// Thread safety: a value type; safe to use from any thread.
    public struct Interruption: Hashable, Sendable, CustomStringConvertible {
        /// Began or ended.
        public var type: InterruptionType
        /// For `ended`: whether to resume. Empty for `began`.
        public var options: InterruptionOptions
        /// For `began`: why. `nil` for `ended`.
        public var reason: InterruptionReason?
        /// For `began`: the interruption began while the app was suspended
        /// (``AudioSession/isSuspended``), so it may be stale by the time the app reads it.
        /// Apple's `AVAudioSessionInterruptionWasSuspendedKey`.
        public var wasSuspended: Bool

        /// Creates an interruption description.
        ///
        /// Thread safety: safe from any thread.
        public init(
            type: InterruptionType, options: InterruptionOptions = [], reason: InterruptionReason? = nil,
            wasSuspended: Bool = false
        ) {
            self.type = type
            self.options = options
            self.reason = reason
            self.wasSuspended = wasSuspended
        }

        /// `began(default)` or `ended(shouldResume)`.
        ///
        /// Thread safety: safe from any thread.
        public var description: String {
            switch type {
            case .began: "began(\(reason?.rawValue ?? "-")\(wasSuspended ? ", wasSuspended" : ""))"
            case .ended: options.contains(.shouldResume) ? "ended(shouldResume)" : "ended"
            }
        }
    }

    /// Why the route changed. Mirrors `AVAudioSession.RouteChangeReason`.
    ///
    /// Thread safety: a value type; safe to use from any thread.
    public enum RouteChangeReason: String, Hashable, Sendable {
        /// Unknown (not produced by this module; kept for porting).
        case unknown
        /// A device was connected (last in wins).
        case newDeviceAvailable
        /// A device was disconnected. A call keeps running; a media player pauses.
        case oldDeviceUnavailable
        /// The session's category, mode or options changed while active.
        case categoryChange
        /// The app changed the route: the speaker override, the preferred input, the proximity override.
        case override
        /// The device woke from sleep (not produced by this module; kept for porting).
        case wakeFromSleep
        /// No port is left for the category (for example the only output was unplugged).
        case noSuitableRouteForCategory
        /// The route's configuration changed: a data source, a polar pattern, or new hardware.
        case routeConfigurationChange
    }

    /// A route change notification's content.
    /// Apple's keys: `AVAudioSessionRouteChangeReasonKey`, `AVAudioSessionRouteChangePreviousRouteKey`.
    ///
    /// Thread safety: a value type; safe to use from any thread.
    public struct RouteChange: Hashable, Sendable, CustomStringConvertible {
        /// Why.
        public var reason: RouteChangeReason
        /// The route before the change.
        public var previousRoute: AudioSessionRouteDescription
        /// The route after the change (Apple makes you read `currentRoute`; it is here for convenience).
        public var currentRoute: AudioSessionRouteDescription

        /// Creates a route change description.
        ///
        /// Thread safety: safe from any thread.
        public init(reason: RouteChangeReason, previousRoute: AudioSessionRouteDescription, currentRoute: AudioSessionRouteDescription) {
            self.reason = reason
            self.previousRoute = previousRoute
            self.currentRoute = currentRoute
        }

        /// `override: in: [...] out: [...] -> in: [...] out: [...]`.
        ///
        /// Thread safety: safe from any thread.
        public var description: String { "\(reason.rawValue): \(previousRoute) -> \(currentRoute)" }
    }

    /// Whether secondary audio should be silenced. Mirrors `AVAudioSession.SilenceSecondaryAudioHintType`.
    ///
    /// Thread safety: a value type; safe to use from any thread.
    public enum SilenceSecondaryAudioHintType: String, Hashable, Sendable {
        /// A non-mixable session started playing: silence secondary (game soundtrack) audio.
        case begin
        /// It stopped: secondary audio may play again.
        case end
    }

    /// What ``AudioSession/setActive(_:options:)`` can be told. Mirrors `AVAudioSession.SetActiveOptions`.
    ///
    /// Thread safety: a value type; safe to use from any thread.
    public struct SetActiveOptions: OptionSet, Hashable, Sendable {
        /// The option bits.
        public let rawValue: UInt
        /// Creates options from their bits.
        ///
        /// Thread safety: safe from any thread.
        public init(rawValue: UInt) { self.rawValue = rawValue }
        /// On deactivation, tell the sessions this one interrupted to resume (`ended` + `shouldResume`).
        public static let notifyOthersOnDeactivation = SetActiveOptions(rawValue: 1)
    }
}

/// Everything a session is told about, one case per Apple notification.
///
/// | Case | Apple |
/// |---|---|
/// | ``interruption(_:)`` | `AVAudioSession.interruptionNotification` |
/// | ``routeChange(_:)`` | `AVAudioSession.routeChangeNotification` |
/// | ``silenceSecondaryAudioHint(_:)`` | `AVAudioSession.silenceSecondaryAudioHintNotification` |
/// | ``mediaServicesWereLost`` | `AVAudioSession.mediaServicesWereLostNotification` |
/// | ``mediaServicesWereReset`` | `AVAudioSession.mediaServicesWereResetNotification` |
/// | ``outputVolumeChanged(_:)`` | key-value observation of `outputVolume` |
/// | ``inputAvailabilityChanged(_:)`` | key-value observation of `isInputAvailable` |
///
/// Thread safety: a value type; safe to use from any thread.
public enum AudioSessionNotification: Hashable, Sendable, CustomStringConvertible {
    /// The session was interrupted, or an interruption ended.
    case interruption(AudioSession.Interruption)
    /// The session's route changed.
    case routeChange(AudioSession.RouteChange)
    /// A non-mixable session started (`begin`) or stopped (`end`) playing.
    case silenceSecondaryAudioHint(AudioSession.SilenceSecondaryAudioHintType)
    /// The media services went away: every session is inactive; wait for the reset.
    case mediaServicesWereLost
    /// The media services were rebuilt: session properties are back to their defaults;
    /// set the category again and reactivate if appropriate.
    case mediaServicesWereReset
    /// The output volume changed (``AudioSession/outputVolume``, 0 to 1). Sent to every session.
    case outputVolumeChanged(Float)
    /// ``AudioSession/isInputAvailable`` changed (the hardware's last microphone went, or a first
    /// one came). Sent to every session.
    case inputAvailabilityChanged(Bool)

    /// The interruption, if this is one.
    ///
    /// Thread safety: safe from any thread.
    public var interruption: AudioSession.Interruption? {
        if case let .interruption(value) = self { value } else { nil }
    }

    /// The route change, if this is one.
    ///
    /// Thread safety: safe from any thread.
    public var routeChange: AudioSession.RouteChange? {
        if case let .routeChange(value) = self { value } else { nil }
    }

    /// The hint, if this is one.
    ///
    /// Thread safety: safe from any thread.
    public var silenceSecondaryAudioHint: AudioSession.SilenceSecondaryAudioHintType? {
        if case let .silenceSecondaryAudioHint(value) = self { value } else { nil }
    }

    /// A short description, for logs.
    ///
    /// Thread safety: safe from any thread.
    public var description: String {
        switch self {
        case let .interruption(value): "interruption \(value)"
        case let .routeChange(value): "routeChange \(value)"
        case let .silenceSecondaryAudioHint(value): "silenceSecondaryAudioHint \(value.rawValue)"
        case .mediaServicesWereLost: "mediaServicesWereLost"
        case .mediaServicesWereReset: "mediaServicesWereReset"
        case let .outputVolumeChanged(volume): "outputVolumeChanged \(volume)"
        case let .inputAvailabilityChanged(available): "inputAvailabilityChanged \(available)"
        }
    }
}

/// Identifies an observer added with ``AudioSession/addObserver(_:)``; pass it to
/// ``AudioSession/removeObserver(_:)``. Dropping the token does not remove the observer
/// (as with `NotificationCenter`).
///
/// Thread safety: a value type; safe to use from any thread.
public struct AudioSessionObserverToken: Hashable, Sendable {
    let sessionID: UInt64
    let id: UInt64
}
