/// An app's audio session: its category, mode and options, its activation, its route and its
/// notifications. Apple's `AVAudioSession` semantics on Linux.
///
/// ```swift
/// let session = AudioSession.shared
/// try session.setCategory(.playAndRecord, mode: .voiceChat, options: [.allowBluetooth])
/// try session.setActive(true)
/// // ... the call ...
/// try session.setActive(false, options: .notifyOthersOnDeactivation)
/// ```
///
/// Every session lives in an ``AudioSystem`` that arbitrates between sessions: ``shared``
/// lives in ``AudioSystem/shared``; other sessions come from ``AudioSystem/makeSession(name:priority:)``.
///
/// Thread safety: safe from any thread. The session's state is part of its system's state,
/// behind the system's single lock; see ``AudioSystem`` for the model and for the thread
/// notifications arrive on.
public final class AudioSession: Sendable {
    /// The app's session, in ``AudioSystem/shared``.
    ///
    /// Thread safety: safe from any thread.
    public static let shared: AudioSession = AudioSystem.shared.makeSession(name: "app")

    /// The system the session belongs to.
    public let system: AudioSystem
    /// The session's name (logs, errors).
    public let name: String
    /// The session's priority: ``Priority/phoneCall`` always wins.
    public let priority: Priority
    let id: UInt64

    init(system: AudioSystem, id: UInt64, name: String, priority: Priority) {
        self.system = system
        self.id = id
        self.name = name
        self.priority = priority
    }

    deinit {
        system.transact { state, effects in state.removeSession(id, &effects) }
    }

    /// Reads this session's state under the system's lock.
    func read<Result: Sendable>(_ body: (SystemState, SessionState) -> Result) -> Result {
        let id = self.id
        return system.read { state in body(state, state.sessions[id]!) }
    }

    /// How much a session weighs in the arbiter.
    ///
    /// Thread safety: a value type; safe to use from any thread.
    public enum Priority: Int, Comparable, Hashable, Sendable {
        /// An app.
        case normal = 0
        /// The system phone: interrupts every other session, and no other session that records
        /// may activate while it is active (``AudioSessionError/insufficientPriority(heldBy:)``);
        /// one that only plays may, mixable or not, and does not interrupt it.
        case phoneCall = 100

        /// Orders by weight.
        ///
        /// Thread safety: safe from any thread.
        public static func < (lhs: Priority, rhs: Priority) -> Bool { lhs.rawValue < rhs.rawValue }
    }

    // MARK: - Configuration

    /// The session's whole configuration (category, requested and effective mode and options).
    ///
    /// Thread safety: safe from any thread.
    public var configuration: Configuration { read { $1.configuration } }

    /// The category. A new session's is ``Category/soloAmbient``.
    ///
    /// Thread safety: safe from any thread.
    public var category: Category { configuration.category }

    /// The mode in effect: ``Mode/default`` when the category does not support the requested mode.
    ///
    /// Thread safety: safe from any thread.
    public var mode: Mode { configuration.mode }

    /// The mode last asked for, even if the category does not support it.
    ///
    /// Thread safety: safe from any thread.
    public var requestedMode: Mode { configuration.requestedMode }

    /// The options in effect, implied options included (voiceChat adds allowBluetooth, duckOthers adds mixWithOthers, ...).
    ///
    /// Thread safety: safe from any thread.
    public var categoryOptions: CategoryOptions { configuration.options }

    /// Sets the category, mode and options together, replacing the previous triple (options are not sticky).
    ///
    /// May be called while active: the new configuration is arbitrated as an activation would be
    /// (it interrupts the sessions it now interrupts), then applies at once, clears the speaker
    /// override and posts a route change with reason ``RouteChangeReason/categoryChange``.
    /// Calling it while inactive is preferred. A mode the category does not support is not an
    /// error: the session uses ``Mode/default`` (read back from ``mode``) and logs a warning.
    ///
    /// - Parameters:
    ///   - category: The category.
    ///   - mode: The mode.
    ///   - options: The options; each must be accepted by the category.
    /// - Throws: ``AudioSessionError/categoryOptionNotAccepted(option:category:)``, naming the option
    ///   and the category. ``AudioSessionError/mediaServicesFailed`` while media services are lost.
    ///   While active, the activation errors of ``setActive(_:options:)``
    ///   (``AudioSessionError/insufficientPriority(heldBy:)``, ``AudioSessionError/cannotInterruptOthers``,
    ///   ``AudioSessionError/cannotStartPlaying``, ``AudioSessionError/cannotStartRecording``).
    ///   After any error the session keeps its configuration, activation and override.
    ///
    /// Thread safety: safe from any thread.
    public func setCategory(_ category: Category, mode: Mode = .default, options: CategoryOptions = []) throws(AudioSessionError) {
        let configuration = try Configuration.validated(category: category, mode: mode, options: options)
        let id = self.id
        try system.transact { (state, effects) throws(AudioSessionError) in
            try state.setConfiguration(id, configuration, &effects)
        }
    }

    /// The categories this system offers: all of them (Linux has no entitlement or device
    /// restriction). Mirrors `AVAudioSession.availableCategories`.
    ///
    /// Thread safety: safe from any thread.
    public var availableCategories: [Category] { Category.allCases }

    /// The modes the current category supports, ``Mode/default`` first. Apple lists every mode
    /// of the device; listing only those that take effect is more useful, since another mode
    /// falls back to ``Mode/default``. Mirrors `AVAudioSession.availableModes`.
    ///
    /// Thread safety: safe from any thread.
    public var availableModes: [Mode] {
        let supported = category.supportedModes
        return Mode.allCases.filter { supported.contains($0) }
    }

    /// Sets the mode, keeping the category and the requested options.
    ///
    /// A mode the category does not support falls back to ``Mode/default`` with a warning, and a
    /// change while active is arbitrated, as in ``setCategory(_:mode:options:)``.
    ///
    /// - Throws: ``AudioSessionError/mediaServicesFailed`` while media services are lost; while
    ///   active, the activation errors (the mode is then unchanged).
    ///
    /// Thread safety: safe from any thread.
    public func setMode(_ mode: Mode) throws(AudioSessionError) {
        let id = self.id
        try system.transact { (state, effects) throws(AudioSessionError) in
            guard let current = state.sessions[id]?.configuration else { return }
            let configuration = Configuration(
                uncheckedCategory: current.category, mode: mode, options: current.requestedOptions)
            try state.setConfiguration(id, configuration, &effects)
        }
    }

    // MARK: - Activation

    /// Whether the session is active.
    ///
    /// Thread safety: safe from any thread.
    public var isActive: Bool { read { $1.isActive } }

    /// Activates or deactivates the session.
    ///
    /// Activation of a non-mixable session interrupts every other active non-mixable session
    /// (they become inactive, their I/O is stopped, and they receive an interruption `began`);
    /// mixable sessions keep playing (ducked while a session with ``CategoryOptions/duckOthers``
    /// is active). A ``Priority/phoneCall`` session interrupts every other session.
    ///
    /// Deactivation ends the interruptions this session caused: the interrupted sessions receive
    /// `ended`, with ``InterruptionOptions/shouldResume`` only if `options` contains
    /// ``SetActiveOptions/notifyOthersOnDeactivation``. Deactivating an already inactive session
    /// (for example one that was interrupted) still does this.
    ///
    /// - Parameters:
    ///   - active: `true` to activate, `false` to deactivate.
    ///   - options: For deactivation, ``SetActiveOptions/notifyOthersOnDeactivation``.
    /// - Throws:
    ///   - ``AudioSessionError/insufficientPriority(heldBy:)``: a phone call is active and this session
    ///     records or does not mix.
    ///   - ``AudioSessionError/cannotInterruptOthers``: the session is in the background
    ///     (``isInBackground``), does not mix, and would interrupt another session.
    ///   - ``AudioSessionError/cannotStartPlaying`` / ``AudioSessionError/cannotStartRecording``: no port for the category.
    ///   - ``AudioSessionError/mediaServicesFailed``: media services are lost.
    ///   - ``AudioSessionError/isBusy(stoppedIO:)``: deactivated while I/O was registered. The I/O
    ///     was stopped (its stop handler called) and the session **is** inactive: the error reports
    ///     the mistake, it does not undo the deactivation.
    ///   Activation errors leave everything unchanged.
    ///
    /// Thread safety: safe from any thread.
    public func setActive(_ active: Bool, options: SetActiveOptions = []) throws(AudioSessionError) {
        let id = self.id
        if active {
            try system.transact { (state, effects) throws(AudioSessionError) in try state.activate(id, &effects) }
        } else {
            let stopped = system.transact { state, effects in state.deactivate(id, options: options, &effects) }
            if !stopped.isEmpty { throw .isBusy(stoppedIO: stopped) }
        }
    }

    /// Whether the app is in the background (CallAudio's model of the app state, set by the app
    /// or a test): a non-mixable background activation that would interrupt another session fails.
    ///
    /// Thread safety: safe from any thread.
    public var isInBackground: Bool {
        get { read { $1.isInBackground } }
        set {
            let id = self.id
            system.transact { state, _ in state.sessions[id]?.isInBackground = newValue }
        }
    }

    /// Whether the app is suspended (CallAudio's model of the app state, set by the app or a
    /// test, as ``isInBackground``): an interruption that begins meanwhile carries
    /// ``Interruption/wasSuspended``.
    ///
    /// Thread safety: safe from any thread.
    public var isSuspended: Bool {
        get { read { $1.isSuspended } }
        set {
            let id = self.id
            system.transact { state, _ in state.sessions[id]?.isSuspended = newValue }
        }
    }

    /// Whether another session ducks this one (it is active and has ``CategoryOptions/duckOthers``).
    /// The I/O layer lowers this session's volume while it is `true`. The phone is never ducked.
    ///
    /// Thread safety: safe from any thread.
    public var isDucked: Bool {
        let id = self.id
        return system.read { $0.isDucked(id) }
    }

    /// Whether another session is playing audio (active with an output).
    ///
    /// Thread safety: safe from any thread.
    public var isOtherAudioPlaying: Bool {
        let id = self.id
        return system.read { $0.isOtherAudioPlaying(for: id) }
    }

    /// Whether another session plays non-mixable (primary) audio, so secondary audio such as a
    /// game soundtrack should be silenced. Changes are notified with
    /// ``AudioSessionNotification/silenceSecondaryAudioHint(_:)``.
    ///
    /// Thread safety: safe from any thread.
    public var secondaryAudioShouldBeSilencedHint: Bool {
        let id = self.id
        return system.read { $0.secondaryAudioShouldBeSilenced(for: id) }
    }
}
