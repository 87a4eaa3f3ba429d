extension AudioSession {
    /// Whether the app may record. Mirrors `AVAudioApplication.RecordPermission`
    /// (formerly `AVAudioSession.RecordPermission`).
    ///
    /// Without permission (``undetermined`` or ``denied``) capture delivers silence, never an
    /// error: the I/O layer reads ``AudioSession/capturesSilence``.
    ///
    /// Thread safety: a value type; safe to use from any thread.
    public enum RecordPermission: String, Hashable, Sendable {
        /// Not asked yet.
        case undetermined
        /// The user (or the policy) said no.
        case denied
        /// The user (or the policy) said yes.
        case granted
    }
}

/// How record permission is decided on Linux, where there is no permission prompt.
///
/// Given to ``AudioSystem/init(hardware:recordPermissionPolicy:)`` or set with
/// ``AudioSystem/recordPermissionPolicy``. A command-line tool may map an environment
/// variable or a flag to it; this module reads no environment.
///
/// Thread safety: a value type; safe to use from any thread.
public enum RecordPermissionPolicy: Hashable, Sendable {
    /// Granted from the start (the Linux default: the user who runs the process owns the microphone).
    case alwaysGrant
    /// Denied from the start; requests answer `false`. Capture delivers silence.
    case alwaysDeny
    /// Undetermined until the first request, which answers `grant` (simulates the iOS prompt).
    case ask(grant: Bool)

    /// The permission before any request.
    var initialPermission: AudioSession.RecordPermission {
        switch self {
        case .alwaysGrant: .granted
        case .alwaysDeny: .denied
        case .ask: .undetermined
        }
    }

    /// The permission after a request.
    var answeredPermission: AudioSession.RecordPermission {
        switch self {
        case .alwaysGrant, .ask(grant: true): .granted
        case .alwaysDeny, .ask(grant: false): .denied
        }
    }
}
