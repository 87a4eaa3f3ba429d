/// A physical device and the ports it offers, as the hardware reports it.
///
/// The route policy needs the grouping: a wired headset is one device with a `headphones`
/// output and a `headsetMic` input; a Bluetooth headset is one device with `bluetoothHFP`
/// (input and output) and `bluetoothA2DP` (output), of which only one is used (HFP wins).
/// The factories below build the devices of the spec; a hardware layer may build any other.
///
/// Thread safety: a value type; safe to use from any thread.
public struct AudioDevice: Hashable, Sendable, Identifiable, CustomStringConvertible {
    /// A unique identifier for the device.
    public var id: String
    /// A readable name.
    public var name: String
    /// The device's input ports.
    public var inputs: [AudioSessionPortDescription]
    /// The device's output ports, in preference order.
    public var outputs: [AudioSessionPortDescription]

    /// Creates a device.
    ///
    /// Thread safety: safe from any thread.
    public init(id: String, name: String, inputs: [AudioSessionPortDescription], outputs: [AudioSessionPortDescription]) {
        self.id = id
        self.name = name
        self.inputs = inputs
        self.outputs = outputs
    }

    /// Whether every port is built in (receiver, speaker, built-in microphone).
    ///
    /// Thread safety: safe from any thread.
    public var isBuiltIn: Bool {
        (inputs + outputs).allSatisfy(\.portType.isBuiltIn)
    }

    /// All of the device's ports, inputs first.
    ///
    /// Thread safety: safe from any thread.
    public var ports: [AudioSessionPortDescription] { inputs + outputs }

    /// `name (id)`.
    ///
    /// Thread safety: safe from any thread.
    public var description: String { "\(name) (\(id))" }

    private static func port(
        _ type: AudioSession.Port, _ name: String, device id: String, channels: Int,
        dataSources: [AudioSessionDataSourceDescription] = []
    ) -> AudioSessionPortDescription {
        AudioSessionPortDescription(
            portType: type, portName: name, uid: "\(id):\(type.rawValue)", channelCount: channels, dataSources: dataSources)
    }

    /// The built-in microphone's data sources: bottom, front and back, as on a phone.
    ///
    /// Thread safety: safe from any thread.
    public static let builtInMicDataSources: [AudioSessionDataSourceDescription] = [
        AudioSessionDataSourceDescription(
            dataSourceID: 1, dataSourceName: "Bottom", location: .lower, orientation: .bottom,
            supportedPolarPatterns: [.omnidirectional, .cardioid], selectedPolarPattern: .omnidirectional),
        AudioSessionDataSourceDescription(
            dataSourceID: 2, dataSourceName: "Front", location: .upper, orientation: .front,
            supportedPolarPatterns: [.omnidirectional, .cardioid, .subcardioid], selectedPolarPattern: .omnidirectional),
        AudioSessionDataSourceDescription(
            dataSourceID: 3, dataSourceName: "Back", location: .upper, orientation: .back,
            supportedPolarPatterns: [.omnidirectional, .cardioid, .subcardioid], selectedPolarPattern: .omnidirectional),
    ]

    /// The phone itself: receiver and speaker outputs, built-in microphone input.
    ///
    /// - Parameters:
    ///   - hasReceiver: Whether there is an earpiece (a laptop has none: calls then use the speaker).
    ///   - hasSpeaker: Whether there is a loudspeaker.
    ///   - hasMic: Whether there is a built-in microphone.
    ///
    /// Thread safety: safe from any thread.
    public static func builtIn(hasReceiver: Bool = true, hasSpeaker: Bool = true, hasMic: Bool = true) -> AudioDevice {
        var outputs: [AudioSessionPortDescription] = []
        if hasReceiver { outputs.append(port(.builtInReceiver, "Receiver", device: "builtIn", channels: 1)) }
        if hasSpeaker { outputs.append(port(.builtInSpeaker, "Speaker", device: "builtIn", channels: 2)) }
        let inputs = hasMic
            ? [port(.builtInMic, "Built-In Microphone", device: "builtIn", channels: 1, dataSources: builtInMicDataSources)]
            : []
        return AudioDevice(id: "builtIn", name: "Built-In", inputs: inputs, outputs: outputs)
    }

    /// A wired headset: stereo headphones and a mono microphone.
    ///
    /// Thread safety: safe from any thread.
    public static func wiredHeadset(id: String = "wired-headset", name: String = "Headset") -> AudioDevice {
        AudioDevice(id: id, name: name,
                    inputs: [port(.headsetMic, "\(name) Microphone", device: id, channels: 1)],
                    outputs: [port(.headphones, name, device: id, channels: 2)])
    }

    /// Wired headphones without a microphone.
    ///
    /// Thread safety: safe from any thread.
    public static func wiredHeadphones(id: String = "wired-headphones", name: String = "Headphones") -> AudioDevice {
        AudioDevice(id: id, name: name, inputs: [], outputs: [port(.headphones, name, device: id, channels: 2)])
    }

    /// A Bluetooth headset: hands-free (HFP, mono input and output) and, if it supports it, A2DP (stereo output).
    ///
    /// Thread safety: safe from any thread.
    public static func bluetoothHeadset(
        id: String = "bt-headset", name: String = "Bluetooth Headset", supportsA2DP: Bool = true
    ) -> AudioDevice {
        var outputs = [port(.bluetoothHFP, name, device: id, channels: 1)]
        if supportsA2DP { outputs.append(port(.bluetoothA2DP, name, device: id, channels: 2)) }
        return AudioDevice(id: id, name: name, inputs: [port(.bluetoothHFP, name, device: id, channels: 1)], outputs: outputs)
    }

    /// A Bluetooth speaker or headphones with A2DP only: stereo output, no microphone.
    ///
    /// Thread safety: safe from any thread.
    public static func bluetoothA2DP(id: String = "bt-a2dp", name: String = "Bluetooth Speaker") -> AudioDevice {
        AudioDevice(id: id, name: name, inputs: [], outputs: [port(.bluetoothA2DP, name, device: id, channels: 2)])
    }

    /// A Bluetooth Low Energy audio device (hearing aids): output and input.
    ///
    /// Thread safety: safe from any thread.
    public static func bluetoothLE(id: String = "bt-le", name: String = "Hearing Aids") -> AudioDevice {
        AudioDevice(id: id, name: name,
                    inputs: [port(.bluetoothLE, name, device: id, channels: 1)],
                    outputs: [port(.bluetoothLE, name, device: id, channels: 2)])
    }

    /// A USB audio device.
    ///
    /// Thread safety: safe from any thread.
    public static func usbAudio(
        id: String = "usb", name: String = "USB Audio", hasInput: Bool = true, hasOutput: Bool = true,
        channels: Int = 2
    ) -> AudioDevice {
        AudioDevice(id: id, name: name,
                    inputs: hasInput ? [port(.usbAudio, name, device: id, channels: channels)] : [],
                    outputs: hasOutput ? [port(.usbAudio, name, device: id, channels: channels)] : [])
    }

    /// An HDMI output.
    ///
    /// Thread safety: safe from any thread.
    public static func hdmi(id: String = "hdmi", name: String = "HDMI") -> AudioDevice {
        AudioDevice(id: id, name: name, inputs: [], outputs: [port(.HDMI, name, device: id, channels: 2)])
    }

    /// A line-level output.
    ///
    /// Thread safety: safe from any thread.
    public static func lineOut(id: String = "line-out", name: String = "Line Out") -> AudioDevice {
        AudioDevice(id: id, name: name, inputs: [], outputs: [port(.lineOut, name, device: id, channels: 2)])
    }

    /// A line-level input.
    ///
    /// Thread safety: safe from any thread.
    public static func lineIn(id: String = "line-in", name: String = "Line In") -> AudioDevice {
        AudioDevice(id: id, name: name, inputs: [port(.lineIn, name, device: id, channels: 2)], outputs: [])
    }

    /// A car's audio system: input and output.
    ///
    /// Thread safety: safe from any thread.
    public static func carAudio(id: String = "car", name: String = "Car") -> AudioDevice {
        AudioDevice(id: id, name: name,
                    inputs: [port(.carAudio, name, device: id, channels: 1)],
                    outputs: [port(.carAudio, name, device: id, channels: 2)])
    }

    /// An AirPlay receiver: output.
    ///
    /// Thread safety: safe from any thread.
    public static func airPlay(id: String = "airplay", name: String = "AirPlay") -> AudioDevice {
        AudioDevice(id: id, name: name, inputs: [], outputs: [port(.airPlay, name, device: id, channels: 2)])
    }
}
