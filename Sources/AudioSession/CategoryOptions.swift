extension AudioSession {
    /// Options that refine a category: the third element of the (category, mode, options) triple.
    ///
    /// Mirrors `AVAudioSession.CategoryOptions`, with one bit per option (Apple's
    /// `interruptSpokenAudioAndMixWithOthers` shares a bit with `mixWithOthers`; here the
    /// implication is explicit, see ``implied``). Which category accepts which option is
    /// ``Category/acceptedOptions``.
    ///
    /// Thread safety: a value type; safe to use from any thread.
    public struct CategoryOptions: OptionSet, Hashable, Sendable, CustomStringConvertible {
        /// The option bits.
        ///
        /// Thread safety: safe from any thread.
        public let rawValue: UInt

        /// Creates options from their bits.
        ///
        /// Thread safety: safe from any thread.
        public init(rawValue: UInt) { self.rawValue = rawValue }

        /// Mix with other active sessions instead of interrupting them.
        public static let mixWithOthers = CategoryOptions(rawValue: 1 << 0)
        /// Lower the volume of other sessions while this one is active. Implies ``mixWithOthers``.
        public static let duckOthers = CategoryOptions(rawValue: 1 << 1)
        /// Allow Bluetooth hands-free (HFP) devices for input and output.
        public static let allowBluetooth = CategoryOptions(rawValue: 1 << 2)
        /// Allow Bluetooth A2DP (high quality, output only) devices.
        public static let allowBluetoothA2DP = CategoryOptions(rawValue: 1 << 3)
        /// Allow AirPlay outputs.
        public static let allowAirPlay = CategoryOptions(rawValue: 1 << 4)
        /// Use the speaker instead of the receiver when no external device is connected.
        public static let defaultToSpeaker = CategoryOptions(rawValue: 1 << 5)
        /// Interrupt spoken-audio sessions and mix with the others. Implies ``mixWithOthers``.
        public static let interruptSpokenAudioAndMixWithOthers = CategoryOptions(rawValue: 1 << 6)
        /// Go on recording (silence) when the hardware mutes the built-in microphone, instead of
        /// an interruption with reason ``InterruptionReason/builtInMicMuted``. For categories that
        /// record and play (Apple: iOS 14.5). A softphone's user who mutes the microphone in the
        /// desktop's mixer expects a muted call, not a held one.
        public static let overrideMutedMicrophoneInterruption = CategoryOptions(rawValue: 1 << 7)

        /// Apple's newer name for ``allowBluetooth``.
        public static let allowBluetoothHFP = allowBluetooth

        /// Every single option, in declaration order (the order errors and descriptions use).
        ///
        /// Thread safety: safe from any thread.
        public static let allOptions: [CategoryOptions] = [
            .mixWithOthers, .duckOthers, .allowBluetooth, .allowBluetoothA2DP, .allowAirPlay,
            .defaultToSpeaker, .interruptSpokenAudioAndMixWithOthers, .overrideMutedMicrophoneInterruption,
        ]

        /// These options plus the options they imply: ``duckOthers`` and
        /// ``interruptSpokenAudioAndMixWithOthers`` both imply ``mixWithOthers``.
        ///
        /// Thread safety: safe from any thread.
        public var implied: CategoryOptions {
            var result = self
            if !intersection([.duckOthers, .interruptSpokenAudioAndMixWithOthers]).isEmpty {
                result.insert(.mixWithOthers)
            }
            return result
        }

        /// The options' names, for example `[mixWithOthers, duckOthers]`.
        ///
        /// Thread safety: safe from any thread.
        public var description: String {
            "[" + names.joined(separator: ", ") + "]"
        }

        /// The names of the options in the set, in declaration order.
        var names: [String] {
            Self.allOptions.filter { contains($0) }.map(\.singleName)
        }

        /// The name of a single option (the first one if several are set).
        var singleName: String {
            switch self {
            case .mixWithOthers: "mixWithOthers"
            case .duckOthers: "duckOthers"
            case .allowBluetooth: "allowBluetooth"
            case .allowBluetoothA2DP: "allowBluetoothA2DP"
            case .allowAirPlay: "allowAirPlay"
            case .defaultToSpeaker: "defaultToSpeaker"
            case .interruptSpokenAudioAndMixWithOthers: "interruptSpokenAudioAndMixWithOthers"
            case .overrideMutedMicrophoneInterruption: "overrideMutedMicrophoneInterruption"
            default: names.first ?? "none"
            }
        }
    }
}
