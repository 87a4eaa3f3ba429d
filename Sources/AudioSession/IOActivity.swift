extension AudioSession {
    /// Registers running I/O (a voice-processing I/O unit) with the session.
    ///
    /// While registered, the session knows its I/O is running: an interruption, media services
    /// loss or a deactivation calls `onStop` (outside the system's lock, before the
    /// corresponding notification is delivered), and deactivating reports
    /// ``AudioSessionError/isBusy(stoppedIO:)``: stop your I/O and call ``IOActivity/end()`` before
    /// deactivating.
    ///
    /// - Parameters:
    ///   - name: A name for the I/O, reported by `isBusy`.
    ///   - onStop: Stops the I/O. Called at most once, on the thread that caused the stop.
    /// Starting I/O in a category that records asks for record permission if it is still
    /// undetermined, as iOS does the first time an app records: the system's
    /// ``RecordPermissionPolicy`` answers, and the answer is remembered. Read
    /// ``capturesSilence`` after this call.
    ///
    /// - Returns: The activity; call ``IOActivity/end()`` when the I/O stops (releasing it does too).
    /// - Throws: ``AudioSessionError/sessionNotActive`` if the session is inactive: activate first.
    ///
    /// Thread safety: safe from any thread.
    public func beginIO(named name: String, onStop: @escaping @Sendable () -> Void) throws(AudioSessionError) -> IOActivity {
        let id = self.id
        let activityID = try system.transact { (state, _) throws(AudioSessionError) -> UInt64 in
            try state.registerIO(id, IORecord(name: name, stop: onStop))
        }
        return IOActivity(name: name, system: system, sessionID: id, id: activityID)
    }

    /// Whether any registered I/O is running.
    ///
    /// Thread safety: safe from any thread.
    public var isIORunning: Bool { read { !$1.ioActivities.isEmpty } }
}

/// Running I/O registered with ``AudioSession/beginIO(named:onStop:)``.
///
/// Thread safety: safe from any thread.
public final class IOActivity: Sendable {
    /// The I/O's name.
    public let name: String
    private let system: AudioSystem
    private let sessionID: UInt64
    private let id: UInt64

    init(name: String, system: AudioSystem, sessionID: UInt64, id: UInt64) {
        self.name = name
        self.system = system
        self.sessionID = sessionID
        self.id = id
    }

    deinit { end() }

    /// Whether the I/O is still registered (not ended, not stopped by the session).
    ///
    /// Thread safety: safe from any thread.
    public var isRunning: Bool {
        let (sessionID, id) = (self.sessionID, self.id)
        return system.read { $0.sessions[sessionID]?.ioActivities[id] != nil }
    }

    /// Unregisters the I/O (it stopped). Does not call the stop handler. Idempotent.
    ///
    /// Thread safety: safe from any thread.
    public func end() {
        let (sessionID, id) = (self.sessionID, self.id)
        let removed = system.withStateLock { $0.sessions[sessionID]?.ioActivities.removeValue(forKey: id) }
        _ = removed  // released outside the lock
    }
}

extension SystemState {
    /// Registers running I/O with an active session. Input that starts asks for record
    /// permission if nobody has yet (iOS asks the first time an app records).
    /// - Returns: The activity's identifier.
    mutating func registerIO(_ id: UInt64, _ record: IORecord) throws(AudioSessionError) -> UInt64 {
        guard let session = sessions[id], session.isActive else { throw .sessionNotActive }
        if session.configuration.category.hasInput && recordPermission == .undetermined {
            recordPermission = recordPermissionPolicy.answeredPermission
        }
        let activityID = makeID()
        sessions[id]?.ioActivities[activityID] = record
        return activityID
    }
}
