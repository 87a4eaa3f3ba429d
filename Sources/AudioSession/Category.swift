extension AudioSession {
    /// What the app does with audio: the first element of the (category, mode, options) triple.
    ///
    /// Mirrors `AVAudioSession.Category`. A new session starts as ``soloAmbient``.
    /// Each category's properties (``hasInput``, ``hasOutput``, ``mixesWithOthersByDefault``,
    /// ``acceptedOptions``, ``supportedModes``) are the tables of the session spec.
    ///
    /// Thread safety: a value type; safe to use from any thread.
    public enum Category: String, CaseIterable, Hashable, Sendable, CustomStringConvertible {
        /// Non-primary audio that mixes with others and is silenced by the silent switch.
        case ambient
        /// The default: non-mixable playback, silenced by the silent switch.
        case soloAmbient
        /// Primary playback (music, podcasts): not silenced by the silent switch.
        case playback
        /// Capture only: the route has no output.
        case record
        /// Full duplex: the category of a VoIP call.
        case playAndRecord
        /// Several outputs at once (all connected external outputs) and one input.
        case multiRoute
        /// Offline processing: no input, no output. Deprecated by Apple; kept for porting.
        case audioProcessing

        /// The category's name, as Apple spells it.
        ///
        /// Thread safety: safe from any thread.
        public var description: String { rawValue }

        /// Whether the category captures audio (the route has inputs).
        ///
        /// Thread safety: safe from any thread.
        public var hasInput: Bool {
            switch self {
            case .record, .playAndRecord, .multiRoute: true
            case .ambient, .soloAmbient, .playback, .audioProcessing: false
            }
        }

        /// Whether the category plays audio (the route has outputs).
        ///
        /// Thread safety: safe from any thread.
        public var hasOutput: Bool {
            switch self {
            case .ambient, .soloAmbient, .playback, .playAndRecord, .multiRoute: true
            case .record, .audioProcessing: false
            }
        }

        /// Whether the category mixes with other audio without the ``CategoryOptions/mixWithOthers`` option.
        ///
        /// Only ``ambient`` does. ``audioProcessing`` neither plays nor records, so it never
        /// interrupts anyone and is treated as mixable by the arbiter.
        ///
        /// Thread safety: safe from any thread.
        public var mixesWithOthersByDefault: Bool {
            self == .ambient
        }

        /// Whether the silent (ringer) switch and the screen lock silence this category.
        ///
        /// Informational on Linux, which has no silent switch: a front end that models one reads it.
        ///
        /// Thread safety: safe from any thread.
        public var isSilencedBySilentSwitch: Bool {
            self == .ambient || self == .soloAmbient
        }

        /// The category options this category accepts (`Docs/session.md`, "Categories, modes and options").
        ///
        /// Passing any other option to ``AudioSession/setCategory(_:mode:options:)`` throws
        /// ``AudioSessionError/categoryOptionNotAccepted(option:category:)``. Options a category
        /// has anyway are accepted when asked for (Apple's header: ambient "Mixes with other
        /// music"; A2DP "is always implicitly true and cannot be changed" in the output-only
        /// categories), as iOS code commonly asks for them.
        ///
        /// Thread safety: safe from any thread.
        public var acceptedOptions: CategoryOptions {
            switch self {
            case .ambient:
                [.mixWithOthers, .duckOthers, .allowBluetoothA2DP]
            case .soloAmbient:
                [.allowBluetoothA2DP]
            case .audioProcessing:
                []
            case .playback:
                [.mixWithOthers, .duckOthers, .allowBluetoothA2DP, .interruptSpokenAudioAndMixWithOthers]
            case .multiRoute:
                [.mixWithOthers, .duckOthers, .interruptSpokenAudioAndMixWithOthers, .overrideMutedMicrophoneInterruption]
            case .record:
                [.allowBluetooth]
            case .playAndRecord:
                [.mixWithOthers, .duckOthers, .allowBluetooth, .allowBluetoothA2DP, .allowAirPlay,
                 .defaultToSpeaker, .interruptSpokenAudioAndMixWithOthers, .overrideMutedMicrophoneInterruption]
            }
        }

        /// The modes this category supports (`Docs/session.md`, "Categories, modes and options"). Another mode
        /// falls back to ``Mode/default``.
        ///
        /// Thread safety: safe from any thread.
        public var supportedModes: Set<Mode> {
            switch self {
            case .ambient, .soloAmbient, .multiRoute, .audioProcessing:
                [.default]
            case .playback:
                [.default, .measurement, .moviePlayback, .spokenAudio, .voicePrompt]
            case .record:
                [.default, .videoRecording, .measurement]
            case .playAndRecord:
                [.default, .voiceChat, .videoChat, .gameChat, .videoRecording, .measurement]
            }
        }
    }
}
