extension AudioSession {
    /// The type of an audio port. Mirrors `AVAudioSession.Port`.
    ///
    /// A struct with static members (not an enum) so a hardware layer can name port types this
    /// module does not know; the route policy treats an unknown type as a generic external device.
    ///
    /// Thread safety: a value type; safe to use from any thread.
    public struct Port: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        /// The type's name, as CallAudio spells it (for example `builtInReceiver`).
        public let rawValue: String

        /// Creates a port type from its name.
        ///
        /// Thread safety: safe from any thread.
        public init(rawValue: String) { self.rawValue = rawValue }

        /// The earpiece (`AVAudioSession.Port.builtInReceiver`): output.
        public static let builtInReceiver = Port(rawValue: "builtInReceiver")
        /// The loudspeaker: output.
        public static let builtInSpeaker = Port(rawValue: "builtInSpeaker")
        /// The built-in microphone: input.
        public static let builtInMic = Port(rawValue: "builtInMic")
        /// Wired headphones or the output of a wired headset: output.
        public static let headphones = Port(rawValue: "headphones")
        /// The microphone of a wired headset: input.
        public static let headsetMic = Port(rawValue: "headsetMic")
        /// A Bluetooth hands-free device: input and output.
        public static let bluetoothHFP = Port(rawValue: "bluetoothHFP")
        /// A Bluetooth A2DP device: output only.
        public static let bluetoothA2DP = Port(rawValue: "bluetoothA2DP")
        /// A Bluetooth Low Energy audio device (hearing aids): output, and input with HFP rules.
        public static let bluetoothLE = Port(rawValue: "bluetoothLE")
        /// A USB audio device: input and/or output.
        public static let usbAudio = Port(rawValue: "usbAudio")
        /// A line-level input.
        public static let lineIn = Port(rawValue: "lineIn")
        /// A line-level output.
        public static let lineOut = Port(rawValue: "lineOut")
        /// HDMI output.
        public static let HDMI = Port(rawValue: "HDMI")
        /// A car's audio system: input and output.
        public static let carAudio = Port(rawValue: "carAudio")
        /// An AirPlay device: output.
        public static let airPlay = Port(rawValue: "airPlay")

        /// Every port type the spec names.
        ///
        /// Thread safety: safe from any thread.
        public static let allKnown: [Port] = [
            .builtInReceiver, .builtInSpeaker, .builtInMic, .headphones, .headsetMic, .bluetoothHFP,
            .bluetoothA2DP, .bluetoothLE, .usbAudio, .lineIn, .lineOut, .HDMI, .carAudio, .airPlay,
        ]

        /// Whether the port belongs to the device itself (receiver, speaker, built-in microphone).
        ///
        /// Thread safety: safe from any thread.
        public var isBuiltIn: Bool {
            self == .builtInReceiver || self == .builtInSpeaker || self == .builtInMic
        }

        /// Whether the port is a Bluetooth port.
        ///
        /// Thread safety: safe from any thread.
        public var isBluetooth: Bool {
            self == .bluetoothHFP || self == .bluetoothA2DP || self == .bluetoothLE
        }

        /// The type's name.
        ///
        /// Thread safety: safe from any thread.
        public var description: String { rawValue }
    }

    /// Where a data source sits on the device. Mirrors `AVAudioSession.Location`.
    ///
    /// Thread safety: a value type; safe to use from any thread.
    public enum Location: String, Hashable, Sendable {
        /// The upper part of the device.
        case upper
        /// The lower part of the device.
        case lower
    }

    /// Which way a data source faces. Mirrors `AVAudioSession.Orientation`.
    ///
    /// Thread safety: a value type; safe to use from any thread.
    public enum Orientation: String, Hashable, Sendable {
        /// Faces up.
        case top
        /// Faces down.
        case bottom
        /// Faces the user (the screen side).
        case front
        /// Faces away from the user.
        case back
        /// Faces left.
        case left
        /// Faces right.
        case right
    }

    /// A microphone's directivity. Mirrors `AVAudioSession.PolarPattern`.
    ///
    /// Thread safety: a value type; safe to use from any thread.
    public enum PolarPattern: String, Hashable, Sendable, CustomStringConvertible {
        /// Equal sensitivity in every direction.
        case omnidirectional
        /// Most sensitive in front, least behind.
        case cardioid
        /// Between omnidirectional and cardioid.
        case subcardioid
        /// Two channels (left, right).
        case stereo

        /// The pattern's name.
        ///
        /// Thread safety: safe from any thread.
        public var description: String { rawValue }
    }
}

/// One channel of a port. Mirrors `AVAudioSessionChannelDescription`.
///
/// Thread safety: a value type; safe to use from any thread.
public struct AudioSessionChannelDescription: Hashable, Sendable {
    /// A readable name, for example `Headphones Left`.
    public var channelName: String
    /// The ``AudioSessionPortDescription/uid`` of the port the channel belongs to.
    public var owningPortUID: String
    /// The channel's number in the port, from 1.
    public var channelNumber: Int

    /// Creates a channel description.
    ///
    /// Thread safety: safe from any thread.
    public init(channelName: String, owningPortUID: String, channelNumber: Int) {
        self.channelName = channelName
        self.owningPortUID = owningPortUID
        self.channelNumber = channelNumber
    }
}

/// A selectable part of a port (for example the front or back microphone).
/// Mirrors `AVAudioSessionDataSourceDescription`.
///
/// A value type: choose a data source or a polar pattern through the session
/// (``AudioSession/setPreferredDataSource(_:for:)``, ``AudioSession/setPreferredPolarPattern(_:for:of:)``),
/// not on the description.
///
/// Thread safety: a value type; safe to use from any thread.
public struct AudioSessionDataSourceDescription: Hashable, Sendable, Identifiable {
    /// The data source's identifier, unique within its port.
    public var dataSourceID: Int
    /// A readable name, for example `Front`.
    public var dataSourceName: String
    /// Where it sits.
    public var location: AudioSession.Location?
    /// Which way it faces.
    public var orientation: AudioSession.Orientation?
    /// The polar patterns it can use; empty if it has no choice.
    public var supportedPolarPatterns: [AudioSession.PolarPattern]
    /// The polar pattern in use.
    public var selectedPolarPattern: AudioSession.PolarPattern?
    /// The polar pattern the session asked for.
    public var preferredPolarPattern: AudioSession.PolarPattern?

    /// The data source's identifier (``dataSourceID``).
    ///
    /// Thread safety: safe from any thread.
    public var id: Int { dataSourceID }

    /// Creates a data source description.
    ///
    /// Thread safety: safe from any thread.
    public init(
        dataSourceID: Int, dataSourceName: String,
        location: AudioSession.Location? = nil, orientation: AudioSession.Orientation? = nil,
        supportedPolarPatterns: [AudioSession.PolarPattern] = [],
        selectedPolarPattern: AudioSession.PolarPattern? = nil,
        preferredPolarPattern: AudioSession.PolarPattern? = nil
    ) {
        self.dataSourceID = dataSourceID
        self.dataSourceName = dataSourceName
        self.location = location
        self.orientation = orientation
        self.supportedPolarPatterns = supportedPolarPatterns
        self.selectedPolarPattern = selectedPolarPattern
        self.preferredPolarPattern = preferredPolarPattern
    }
}

/// One input or output port. Mirrors `AVAudioSessionPortDescription` (a value type here).
///
/// Thread safety: a value type; safe to use from any thread.
public struct AudioSessionPortDescription: Hashable, Sendable, Identifiable, CustomStringConvertible {
    /// The port's type.
    public var portType: AudioSession.Port
    /// A readable name, for example `Built-In Receiver`.
    public var portName: String
    /// A unique and stable identifier for the port.
    public var uid: String
    /// The port's channels.
    public var channels: [AudioSessionChannelDescription]
    /// The port's data sources; empty if it has none.
    public var dataSources: [AudioSessionDataSourceDescription]
    /// The data source in use.
    public var selectedDataSource: AudioSessionDataSourceDescription?
    /// The data source the session asked for.
    public var preferredDataSource: AudioSessionDataSourceDescription?
    /// Whether the device processes call audio itself (a hands-free kit with its own echo canceller).
    public var hasHardwareVoiceCallProcessing: Bool
    /// Whether this input is the device's microphone (or microphone combination) for speech: the
    /// one the chat modes pick when a device has several built-in microphone ports.
    public var isForVoice: Bool
    /// Which way this input faces, for a device whose microphones are separate ports rather than
    /// data sources of one port: ``AudioSession/Mode/videoRecording`` picks the one facing
    /// ``AudioSession/Orientation/back``, the main camera's side.
    public var orientation: AudioSession.Orientation?

    /// The port's ``uid``.
    ///
    /// Thread safety: safe from any thread.
    public var id: String { uid }

    /// Creates a port description.
    ///
    /// - Parameters:
    ///   - portType: The type.
    ///   - portName: A readable name.
    ///   - uid: A unique identifier.
    ///   - channelCount: How many channels to describe (named `<portName> 1`, `<portName> 2`, ...).
    ///   - dataSources: The data sources; the first one starts selected.
    ///   - hasHardwareVoiceCallProcessing: Whether the device processes call audio itself.
    ///   - isForVoice: Whether this input is the microphone for speech.
    ///   - orientation: Which way this input faces, if it is one of several microphone ports.
    ///
    /// Thread safety: safe from any thread.
    public init(
        portType: AudioSession.Port, portName: String, uid: String, channelCount: Int = 1,
        dataSources: [AudioSessionDataSourceDescription] = [], hasHardwareVoiceCallProcessing: Bool = false,
        isForVoice: Bool = false, orientation: AudioSession.Orientation? = nil
    ) {
        self.portType = portType
        self.portName = portName
        self.uid = uid
        self.channels = (0..<max(channelCount, 0)).map {
            AudioSessionChannelDescription(channelName: "\(portName) \($0 + 1)", owningPortUID: uid, channelNumber: $0 + 1)
        }
        self.dataSources = dataSources
        self.selectedDataSource = dataSources.first
        self.preferredDataSource = nil
        self.hasHardwareVoiceCallProcessing = hasHardwareVoiceCallProcessing
        self.isForVoice = isForVoice
        self.orientation = orientation
    }

    /// `portType "portName"`.
    ///
    /// Thread safety: safe from any thread.
    public var description: String { "\(portType) \"\(portName)\"" }
}
