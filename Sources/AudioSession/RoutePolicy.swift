/// The routing rules of the spec (section 6) as pure functions: given a session's configuration
/// and the connected devices, which ports carry its audio.
///
/// Nothing here reads state: ``AudioSession/currentRoute`` calls ``route(for:)`` with the
/// session's values, and tests can call it with any combination.
///
/// Rules for ``AudioSession/Category/playAndRecord``, in order of precedence:
/// 1. ``AudioSession/PortOverride/speaker``: built-in speaker and built-in microphone.
/// 2. The preferred input, if available; an external preferred input brings its device's output with it.
/// 3. The most recently connected allowed external device (last in wins). Bluetooth HFP needs
///    ``AudioSession/CategoryOptions/allowBluetooth``, A2DP ``AudioSession/CategoryOptions/allowBluetoothA2DP``
///    (output only; HFP wins on a device that has both), AirPlay ``AudioSession/CategoryOptions/allowAirPlay``.
///    The chat modes (voice processing) never use A2DP or AirPlay.
/// 4. No external output: the proximity override when enabled and the sensor reads near (receiver)
///    or far (speaker); otherwise the receiver, or the speaker with ``AudioSession/CategoryOptions/defaultToSpeaker``.
///
/// Other categories: output-only categories use the last connected external output (A2DP and
/// AirPlay allowed, HFP not) or the speaker; ``AudioSession/Category/record`` has no output;
/// ``AudioSession/Category/multiRoute`` uses every connected headphones, USB, HDMI and line-out
/// output, the speaker only when there is none, and one input; ``AudioSession/Category/audioProcessing`` has no ports.
///
/// Thread safety: stateless; safe from any thread.
public enum RoutePolicy {
    /// What a data source choice for one port looks like.
    ///
    /// Thread safety: a value type; safe to use from any thread.
    public struct DataSourcePreference: Hashable, Sendable {
        /// The preferred data source of the port, or `nil` for the port's default.
        public var dataSourceID: Int?
        /// Preferred polar patterns, by data source identifier.
        public var polarPatterns: [Int: AudioSession.PolarPattern]

        /// Creates a data source preference.
        ///
        /// Thread safety: safe from any thread.
        public init(dataSourceID: Int? = nil, polarPatterns: [Int: AudioSession.PolarPattern] = [:]) {
            self.dataSourceID = dataSourceID
            self.polarPatterns = polarPatterns
        }
    }

    /// Everything the route depends on.
    ///
    /// Thread safety: a value type; safe to use from any thread.
    public struct Input: Hashable, Sendable {
        /// The category.
        public var category: AudioSession.Category
        /// The mode in effect.
        public var mode: AudioSession.Mode
        /// The options in effect (implied options included).
        public var options: AudioSession.CategoryOptions
        /// The connected devices in connection order (oldest first); built-in devices may be anywhere.
        public var devices: [AudioDevice]
        /// The output override.
        public var portOverride: AudioSession.PortOverride
        /// The proximity sensor's reading.
        public var proximity: AudioSession.Proximity
        /// Whether the proximity override is enabled.
        public var isProximityRoutingEnabled: Bool
        /// The UID of the preferred input port, if any.
        public var preferredInputUID: String?
        /// Data source and polar pattern preferences, by port UID.
        public var dataSourcePreferences: [String: DataSourcePreference]

        /// Creates the input of the policy.
        ///
        /// Thread safety: safe from any thread.
        public init(
            category: AudioSession.Category, mode: AudioSession.Mode = .default,
            options: AudioSession.CategoryOptions = [], devices: [AudioDevice],
            portOverride: AudioSession.PortOverride = .none, proximity: AudioSession.Proximity = .unknown,
            isProximityRoutingEnabled: Bool = false, preferredInputUID: String? = nil,
            dataSourcePreferences: [String: DataSourcePreference] = [:]
        ) {
            self.category = category
            self.mode = mode
            self.options = options
            self.devices = devices
            self.portOverride = portOverride
            self.proximity = proximity
            self.isProximityRoutingEnabled = isProximityRoutingEnabled
            self.preferredInputUID = preferredInputUID
            self.dataSourcePreferences = dataSourcePreferences
        }

        /// Creates the input from a session configuration (its effective mode and options).
        ///
        /// Thread safety: safe from any thread.
        public init(
            configuration: AudioSession.Configuration, devices: [AudioDevice],
            portOverride: AudioSession.PortOverride = .none, proximity: AudioSession.Proximity = .unknown,
            isProximityRoutingEnabled: Bool = false, preferredInputUID: String? = nil,
            dataSourcePreferences: [String: DataSourcePreference] = [:]
        ) {
            self.init(
                category: configuration.category, mode: configuration.mode, options: configuration.options,
                devices: devices, portOverride: portOverride, proximity: proximity,
                isProximityRoutingEnabled: isProximityRoutingEnabled, preferredInputUID: preferredInputUID,
                dataSourcePreferences: dataSourcePreferences)
        }
    }

    // MARK: - Public functions

    /// The route the session's audio takes.
    ///
    /// - Parameter input: The configuration and the devices.
    /// - Returns: The input and output ports (empty lists when the category has no input or output,
    ///   or when no suitable port exists).
    ///
    /// Thread safety: safe from any thread.
    public static func route(for input: Input) -> AudioSessionRouteDescription {
        var route = AudioSessionRouteDescription(inputs: inputs(for: input), outputs: outputs(for: input))
        route.inputs = route.inputs.map { applyDataSourcePreferences(to: $0, input: input) }
        route.outputs = route.outputs.map { applyDataSourcePreferences(to: $0, input: input) }
        return route
    }

    /// The inputs the session may choose from: built-in microphones first, then the allowed
    /// inputs of external devices in connection order. Bluetooth HFP inputs need
    /// ``AudioSession/CategoryOptions/allowBluetooth``. Empty when the category does not record.
    ///
    /// Thread safety: safe from any thread.
    public static func availableInputs(for input: Input) -> [AudioSessionPortDescription] {
        guard input.category.hasInput else { return [] }
        let builtIn = input.devices.filter(\.isBuiltIn).flatMap(\.inputs).filter { $0.portType == .builtInMic }
        let external = input.devices.filter { !$0.isBuiltIn }.flatMap { device in
            device.inputs.filter { isInputAllowed($0.portType, input) }
        }
        return (builtIn + external).map { applyDataSourcePreferences(to: $0, input: input) }
    }

    // MARK: - Inputs

    static func isInputAllowed(_ type: AudioSession.Port, _ input: Input) -> Bool {
        switch type {
        case .bluetoothHFP, .bluetoothLE: input.options.contains(.allowBluetooth)
        case .bluetoothA2DP, .builtInReceiver, .builtInSpeaker, .headphones, .lineOut, .HDMI, .airPlay: false
        default: true  // builtInMic, headsetMic, usbAudio, lineIn, carAudio, unknown types
        }
    }

    private static func builtInPort(_ type: AudioSession.Port, in devices: [AudioDevice]) -> AudioSessionPortDescription? {
        devices.filter(\.isBuiltIn).flatMap(\.ports).first { $0.portType == type }
    }

    /// The preferred input, if the session may use it now (and what ``AudioSession/preferredInput`` reports).
    static func honouredPreferredInput(_ input: Input) -> AudioSessionPortDescription? {
        guard let uid = input.preferredInputUID else { return nil }
        return availableInputs(for: input).first { $0.uid == uid }
    }

    /// The built-in microphone port the mode picks, on a device with several (separate capture
    /// PCMs): the one for voice in the chat modes, the one facing the mode's direction in
    /// videoRecording, else the first (primary) one.
    static func builtInMic(for input: Input) -> AudioSessionPortDescription? {
        let mics = input.devices.filter(\.isBuiltIn).flatMap(\.inputs).filter { $0.portType == .builtInMic }
        if input.mode.usesVoiceProcessing, let voice = mics.first(where: \.isForVoice) { return voice }
        if let facing = input.mode.microphoneOrientation, let mic = mics.first(where: { $0.orientation == facing }) {
            return mic
        }
        return mics.first
    }

    private static func inputs(for input: Input) -> [AudioSessionPortDescription] {
        guard input.category.hasInput else { return [] }
        let builtInMic = builtInMic(for: input)
        if input.category == .playAndRecord, input.portOverride == .speaker, let builtInMic {
            return [builtInMic]
        }
        if let preferred = honouredPreferredInput(input) {
            return [preferred]
        }
        // Last in wins.
        for device in input.devices.reversed() where !device.isBuiltIn {
            if let port = device.inputs.first(where: { isInputAllowed($0.portType, input) }) {
                return [port]
            }
        }
        return builtInMic.map { [$0] } ?? []
    }

    // MARK: - Outputs

    /// The output a single-output category would use on this external device, if any.
    static func allowedOutput(of device: AudioDevice, _ input: Input, excludingHFP: Bool = false) -> AudioSessionPortDescription? {
        let options = input.options
        let voiceOnly = input.mode.restrictsToVoiceRoutes
        func allowed(_ type: AudioSession.Port) -> Bool {
            switch input.category {
            case .playAndRecord:
                switch type {
                case .bluetoothHFP: return options.contains(.allowBluetooth) && !excludingHFP
                case .bluetoothA2DP: return options.contains(.allowBluetoothA2DP) && !voiceOnly
                case .bluetoothLE: return !options.intersection([.allowBluetooth, .allowBluetoothA2DP]).isEmpty
                case .airPlay: return options.contains(.allowAirPlay) && !voiceOnly
                case .builtInReceiver, .builtInSpeaker, .builtInMic, .headsetMic, .lineIn: return false
                default: return true
                }
            case .ambient, .soloAmbient, .playback:
                switch type {
                case .bluetoothHFP, .builtInReceiver, .builtInSpeaker, .builtInMic, .headsetMic, .lineIn: return false
                default: return true
                }
            case .multiRoute:
                return isMultiRouteOutput(type)
            case .record, .audioProcessing:
                return false
            }
        }
        // One device with both HFP and A2DP: HFP wins when allowed.
        if let hfp = device.outputs.first(where: { $0.portType == .bluetoothHFP }), allowed(.bluetoothHFP) {
            return hfp
        }
        return device.outputs.first { allowed($0.portType) }
    }

    static func isMultiRouteOutput(_ type: AudioSession.Port) -> Bool {
        type == .headphones || type == .usbAudio || type == .HDMI || type == .lineOut
    }

    /// The receiver or the speaker, falling back to the other if the device lacks one.
    private static func builtInOutput(preferSpeaker: Bool, _ devices: [AudioDevice]) -> [AudioSessionPortDescription] {
        let receiver = builtInPort(.builtInReceiver, in: devices)
        let speaker = builtInPort(.builtInSpeaker, in: devices)
        let choice = preferSpeaker ? (speaker ?? receiver) : (receiver ?? speaker)
        return choice.map { [$0] } ?? []
    }

    private static func outputs(for input: Input) -> [AudioSessionPortDescription] {
        let externals = input.devices.filter { !$0.isBuiltIn }
        switch input.category {
        case .record, .audioProcessing:
            return []

        case .ambient, .soloAmbient, .playback:
            if let device = externals.last(where: { allowedOutput(of: $0, input) != nil }) {
                return [allowedOutput(of: device, input)!]
            }
            return builtInOutput(preferSpeaker: true, input.devices)

        case .multiRoute:
            let all = externals.flatMap { $0.outputs.filter { isMultiRouteOutput($0.portType) } }
            return all.isEmpty ? builtInOutput(preferSpeaker: true, input.devices) : all

        case .playAndRecord:
            if input.portOverride == .speaker, let speaker = builtInPort(.builtInSpeaker, in: input.devices) {
                return [speaker]
            }
            // A preferred input moves the output with it when its device can play; a preferred
            // input elsewhere rules out HFP output (HFP carries both directions or neither).
            var excludeHFP = false
            if let preferred = honouredPreferredInput(input) {
                if let device = externals.first(where: { $0.inputs.contains(preferred) }),
                   let output = allowedOutput(of: device, input) {
                    return [output]
                }
                excludeHFP = preferred.portType != .bluetoothHFP
            }
            if let device = externals.last(where: { allowedOutput(of: $0, input, excludingHFP: excludeHFP) != nil }) {
                return [allowedOutput(of: device, input, excludingHFP: excludeHFP)!]
            }
            if input.isProximityRoutingEnabled, input.proximity != .unknown {
                return builtInOutput(preferSpeaker: input.proximity == .far, input.devices)
            }
            return builtInOutput(preferSpeaker: input.options.contains(.defaultToSpeaker), input.devices)
        }
    }

    // MARK: - Data sources

    static func applyDataSourcePreferences(to port: AudioSessionPortDescription, input: Input) -> AudioSessionPortDescription {
        guard !port.dataSources.isEmpty else { return port }
        var port = port
        let preference = input.dataSourcePreferences[port.uid]
        port.dataSources = port.dataSources.map { source in
            var source = source
            if let pattern = preference?.polarPatterns[source.dataSourceID], source.supportedPolarPatterns.contains(pattern) {
                source.preferredPolarPattern = pattern
                source.selectedPolarPattern = pattern
            }
            return source
        }
        let preferred = preference?.dataSourceID.flatMap { id in port.dataSources.first { $0.dataSourceID == id } }
        port.preferredDataSource = preferred
        // Measurement mode uses the primary microphone whatever the preference; other modes pick
        // the built-in microphone facing their way unless the app chose one.
        let isBuiltInMic = port.portType == .builtInMic
        let measuring = input.mode.usesMinimalProcessing && isBuiltInMic
        let byMode = isBuiltInMic ? input.mode.microphoneOrientation.flatMap { facing in
            port.dataSources.first { $0.orientation == facing }
        } : nil
        let current = port.selectedDataSource.flatMap { sel in port.dataSources.first { $0.dataSourceID == sel.dataSourceID } }
        port.selectedDataSource = measuring ? port.dataSources.first : (preferred ?? byMode ?? current ?? port.dataSources.first)
        return port
    }
}
