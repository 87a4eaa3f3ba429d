extension AudioSession {
    /// A specialisation of the category: the second element of the (category, mode, options) triple.
    ///
    /// Mirrors `AVAudioSession.Mode`. A mode the category does not support is not an error:
    /// the session behaves as ``default`` (Apple's documented behaviour), reads back
    /// ``default`` from ``AudioSession/mode`` and logs a warning. ``AudioSession/requestedMode``
    /// keeps what was asked for.
    ///
    /// Thread safety: a value type; safe to use from any thread.
    public enum Mode: String, CaseIterable, Hashable, Sendable, CustomStringConvertible {
        /// No specialisation; valid with every category.
        case `default`
        /// Two-way voice (VoIP): implies ``CategoryOptions/allowBluetooth`` and voice processing,
        /// and picks the built-in microphone for speech.
        case voiceChat
        /// Two-way video: implies ``CategoryOptions/allowBluetooth`` and ``CategoryOptions/defaultToSpeaker``.
        case videoChat
        /// Game voice chat: as ``videoChat``.
        case gameChat
        /// Recording video: the built-in microphone facing the main (back) camera's direction.
        case videoRecording
        /// Measurement: minimal system processing, primary microphone only.
        case measurement
        /// Film playback. Apple tunes the output for films; on Linux it changes neither the route
        /// nor the processing: an I/O layer may read it.
        case moviePlayback
        /// Spoken audio (podcasts, audio books): paused, not ducked, by sessions that interrupt spoken audio.
        case spokenAudio
        /// Short voice prompts (navigation). On Linux it changes neither the route nor the
        /// processing; pair it with ``CategoryOptions/duckOthers`` or
        /// ``CategoryOptions/interruptSpokenAudioAndMixWithOthers`` for the usual prompt behaviour.
        case voicePrompt

        /// The mode's name, as Apple spells it.
        ///
        /// Thread safety: safe from any thread.
        public var description: String { rawValue }

        /// Options this mode adds to the session's options when it is in effect.
        ///
        /// Thread safety: safe from any thread.
        public var impliedOptions: CategoryOptions {
            switch self {
            case .voiceChat: [.allowBluetooth]
            case .videoChat, .gameChat: [.allowBluetooth, .defaultToSpeaker]
            default: []
            }
        }

        /// Whether the I/O layer runs voice processing (echo cancellation, noise suppression, AGC) in this mode.
        ///
        /// Thread safety: safe from any thread.
        public var usesVoiceProcessing: Bool {
            self == .voiceChat || self == .videoChat || self == .gameChat
        }

        /// Whether only voice-suitable routes are used (no A2DP, no AirPlay): the chat modes.
        ///
        /// Thread safety: safe from any thread.
        public var restrictsToVoiceRoutes: Bool { usesVoiceProcessing }

        /// Whether the system should apply as little processing as it can and use the primary microphone.
        ///
        /// Thread safety: safe from any thread.
        public var usesMinimalProcessing: Bool { self == .measurement }

        /// Which way the built-in microphone this mode picks faces, when the app has chosen none:
        /// ``Orientation/bottom`` (next to the mouth) in the chat modes, ``Orientation/back`` (the
        /// main camera's side) in ``videoRecording``; `nil` (the port's default) otherwise.
        /// ``measurement`` always uses the primary microphone. ``moviePlayback``, ``spokenAudio``
        /// and ``voicePrompt`` have no input, so they choose no microphone.
        ///
        /// Thread safety: safe from any thread.
        public var microphoneOrientation: Orientation? {
            switch self {
            case .voiceChat, .videoChat, .gameChat: .bottom
            case .videoRecording: .back
            default: nil
            }
        }
    }
}
