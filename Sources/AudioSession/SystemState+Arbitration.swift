/// The arbitration rules (`Docs/session.md`, "Arbitration rules"): who may be active with which configuration, and whom
/// that interrupts. Activation and a configuration change on an active session go through the
/// same ``admission(of:)``, so a change can never get past a rule that activation enforces.
extension SystemState {
    /// What admitting a session (as it would be configured) means: whom it interrupts and the
    /// route it gets.
    struct Admission {
        var victims: [UInt64]
        var route: AudioSessionRouteDescription
    }

    /// Decides whether `candidate` may be active next to the other active sessions. Changes nothing.
    ///
    /// - Throws: ``AudioSessionError/insufficientPriority(heldBy:)``, ``AudioSessionError/cannotStartPlaying``,
    ///   ``AudioSessionError/cannotStartRecording`` or ``AudioSessionError/cannotInterruptOthers``.
    func admission(of candidate: SessionState) throws(AudioSessionError) -> Admission {
        let configuration = candidate.configuration
        let others = activeSessions.filter { $0.id != candidate.id }

        // The phone always wins: a lower-priority session may play beside it, never record
        // (Apple's header, setActive: "attempts to activate a session with category
        // AVAudioSessionCategoryRecord or AVAudioSessionCategoryPlayAndRecord will fail").
        if configuration.category.hasInput, let holder = others.first(where: { $0.priority > candidate.priority }) {
            throw .insufficientPriority(heldBy: holder.name)
        }

        let route = route(for: candidate)
        if configuration.category.hasOutput && route.outputs.isEmpty { throw .cannotStartPlaying }
        if configuration.category.hasInput && route.inputs.isEmpty { throw .cannotStartRecording }

        let victims = others.filter { candidate.interrupts($0) }
        if candidate.isInBackground && !configuration.isMixable && !victims.isEmpty && candidate.priority < .phoneCall {
            throw .cannotInterruptOthers
        }
        return Admission(victims: victims.map(\.id), route: route)
    }

    // MARK: - Configuration

    /// Replaces the configuration. On an active session the new configuration is admitted as an
    /// activation would be: it interrupts whom it now interrupts, or throws and changes nothing.
    mutating func setConfiguration(_ id: UInt64, _ configuration: AudioSession.Configuration, _ effects: inout Effects) throws(AudioSessionError) {
        guard let session = sessions[id] else { return }
        if isMediaServicesLost { throw .mediaServicesFailed }
        let changed = session.configuration != configuration
        var candidate = session
        candidate.configuration = configuration
        candidate.portOverride = .none  // transient: a category change clears it
        let admission = session.isActive && changed ? try admission(of: candidate) : nil

        if configuration.modeFellBack {
            effects.warnings.append(
                "session '\(session.name)': mode '\(configuration.requestedMode)' is not supported by category "
                    + "'\(configuration.category)'; using mode 'default'")
        }
        sessions[id] = candidate
        guard session.isActive, changed || session.portOverride != .none else { return }
        for victim in admission?.victims ?? [] {
            interrupt(victim, reason: .default, by: .session(id), &effects)
        }
        if let admission { warnIfStuckInReceiver(candidate, admission.route, &effects) }
        // A mode the category does not support changes nothing in effect: no category change is posted.
        let old = session.configuration
        let inEffect = (old.category, old.mode, old.options) != (configuration.category, configuration.mode, configuration.options)
        let notify: Set<UInt64> = inEffect || session.portOverride != .none ? [id] : []
        reevaluateRoutes(reason: .categoryChange, only: [id], alwaysNotify: notify, &effects)
    }

    // MARK: - Activation

    mutating func activate(_ id: UInt64, _ effects: inout Effects) throws(AudioSessionError) {
        guard let session = sessions[id], !session.isActive else { return }
        if isMediaServicesLost { throw .mediaServicesFailed }
        let admission = try admission(of: session)

        for victim in admission.victims {
            interrupt(victim, reason: .default, by: .session(id), &effects)
        }
        warnIfStuckInReceiver(session, admission.route, &effects)
        activationCounter += 1
        sessions[id]?.isActive = true
        sessions[id]?.activationSerial = activationCounter
        sessions[id]?.interruptedBy = nil
        sessions[id]?.reportedRoute = nil
        // A new route owner moves the audio of the sessions already playing.
        reevaluateRoutes(reason: .categoryChange, only: [], &effects)
    }

    /// Spec section 9: audio stuck in the receiver unexpectedly must be loud.
    private func warnIfStuckInReceiver(_ session: SessionState, _ route: AudioSessionRouteDescription, _ effects: inout Effects) {
        let configuration = session.configuration
        guard configuration.category == .playAndRecord, !configuration.mode.usesVoiceProcessing,
              !session.isProximityRoutingEnabled, route.outputs.first?.portType == .builtInReceiver else { return }
        effects.warnings.append(
            "session '\(session.name)' (playAndRecord, mode '\(configuration.mode)') plays through the receiver; "
                + "add .defaultToSpeaker for the speaker, or use mode .voiceChat for a call")
    }

    /// Deactivates (stopping any registered I/O first) and ends the interruptions this session caused.
    /// - Returns: The names of the I/O that was still running (the caller reports `isBusy`).
    mutating func deactivate(_ id: UInt64, options: AudioSession.SetActiveOptions, _ effects: inout Effects) -> [String] {
        guard let session = sessions[id] else { return [] }
        let stopped = session.isActive ? makeInactive(id, &effects) : []
        if session.isActive { reevaluateRoutes(reason: .categoryChange, only: [], &effects) }
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
        post(.interruption(.init(type: .began, reason: reason, wasSuspended: session.isSuspended)), to: id)
    }

    /// Makes a session inactive: its registered I/O is stopped (in registration order) and
    /// forgotten, and it has no reported route. What else changes is up to the caller.
    /// - Returns: The names of the I/O that was stopped.
    @discardableResult
    mutating func makeInactive(_ id: UInt64, _ effects: inout Effects) -> [String] {
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
}
