extension AudioSession {
    /// The app's record permission (shared by every session of the system).
    ///
    /// Thread safety: safe from any thread.
    public var recordPermission: RecordPermission { system.recordPermission }

    /// Asks for record permission. On Linux there is no prompt: the system's
    /// ``RecordPermissionPolicy`` answers an undetermined permission; a determined permission is returned as it is.
    ///
    /// - Returns: Whether recording is granted.
    ///
    /// Thread safety: safe from any thread.
    public func requestRecordPermission() async -> Bool {
        system.requestRecordPermission()
    }

    /// Asks for record permission and calls `response` with the answer, synchronously on the calling thread.
    ///
    /// Thread safety: safe from any thread.
    public func requestRecordPermission(_ response: @escaping @Sendable (Bool) -> Void) {
        response(system.requestRecordPermission())
    }

    /// Whether capture must deliver silence: record permission is not granted, or the route's
    /// input is the built-in microphone and the hardware muted it. The I/O layer reads it (when
    /// starting, and on every route change and interruption notification) and writes zeros
    /// instead of the captured samples; it is never an error in the audio path.
    ///
    /// Thread safety: safe from any thread.
    public var capturesSilence: Bool {
        let id = self.id
        return system.read { $0.capturesSilence(id) }
    }
}
