import AudioSession
import Testing

/// Spec section 6 beyond the playAndRecord table: other categories, Bluetooth profiles,
/// multiRoute, preferred input, data sources. Pure calls to the policy unless noted.
@Suite("Route policy")
struct RoutePolicyTests {
    typealias Category = AudioSession.Category

    static func route(
        _ category: Category, mode: AudioSession.Mode = .default, options: AudioSession.CategoryOptions = [],
        _ connected: [AudioDevice] = [], preferredInputUID: String? = nil
    ) -> Ports {
        RoutePolicy.route(for: .init(
            category: category, mode: mode, options: options, devices: [.builtIn()] + connected,
            preferredInputUID: preferredInputUID)).ports
    }

    @Test("Other categories default to the speaker when nothing is connected",
          arguments: [Category.ambient, .soloAmbient, .playback, .multiRoute])
    func otherCategoriesUseSpeaker(category: Category) {
        #expect(Self.route(category).outputs == [.builtInSpeaker])
    }

    @Test("ambient, soloAmbient and playback have no input; record has no output; audioProcessing has neither")
    func inputsAndOutputsFollowCategory() {
        #expect(Self.route(.ambient) == Ports(in: [], out: [.builtInSpeaker]))
        #expect(Self.route(.soloAmbient) == Ports(in: [], out: [.builtInSpeaker]))
        #expect(Self.route(.playback) == Ports(in: [], out: [.builtInSpeaker]))
        #expect(Self.route(.record) == Ports(in: [.builtInMic], out: []))
        #expect(Self.route(.audioProcessing) == Ports(in: [], out: []))
    }

    @Test("Output-only categories use A2DP without an option, and last in wins")
    func playbackUsesA2DP() {
        #expect(Self.route(.playback, [.bluetoothHeadset()]) == Ports(in: [], out: [.bluetoothA2DP]))
        #expect(Self.route(.playback, [.bluetoothHeadset(), .wiredHeadphones()]) == Ports(in: [], out: [.headphones]))
        #expect(Self.route(.ambient, [.wiredHeadphones(), .bluetoothA2DP()]) == Ports(in: [], out: [.bluetoothA2DP]))
    }

    @Test("A2DP is output only: the microphone stays built in")
    func a2dpIsOutputOnly() {
        #expect(Self.route(.playAndRecord, options: [.allowBluetoothA2DP], [.bluetoothA2DP()])
            == Ports(in: [.builtInMic], out: [.bluetoothA2DP]))
        // A headset with both profiles and only the A2DP option: A2DP out, built-in mic in.
        #expect(Self.route(.playAndRecord, options: [.allowBluetoothA2DP], [.bluetoothHeadset()])
            == Ports(in: [.builtInMic], out: [.bluetoothA2DP]))
    }

    @Test("One device with both HFP and A2DP: HFP wins when both are allowed")
    func hfpWinsOverA2DP() {
        #expect(Self.route(.playAndRecord, options: [.allowBluetooth, .allowBluetoothA2DP], [.bluetoothHeadset()])
            == Ports(in: [.bluetoothHFP], out: [.bluetoothHFP]))
    }

    @Test("The chat modes use voice routes only: no A2DP, no AirPlay")
    func chatModesAvoidA2DPAndAirPlay() {
        #expect(Self.route(.playAndRecord, mode: .voiceChat, options: [.allowBluetoothA2DP], [.bluetoothA2DP()])
            == Ports(in: [.builtInMic], out: [.builtInReceiver]))
        #expect(Self.route(.playAndRecord, mode: .default, options: [.allowAirPlay], [.airPlay()])
            == Ports(in: [.builtInMic], out: [.airPlay]))
        #expect(Self.route(.playAndRecord, mode: .voiceChat, options: [.allowAirPlay], [.airPlay()])
            == Ports(in: [.builtInMic], out: [.builtInReceiver]))
    }

    @Test("AirPlay in playAndRecord needs allowAirPlay")
    func airPlayNeedsOption() {
        #expect(Self.route(.playAndRecord, [.airPlay()]).outputs == [.builtInReceiver])
    }

    @Test("multiRoute uses every connected external output, the speaker only when there is none, and one input")
    func multiRouteUsesAllOutputs() {
        #expect(Self.route(.multiRoute, [.usbAudio(), .hdmi()]) == Ports(in: [.usbAudio], out: [.usbAudio, .HDMI]))
        #expect(Self.route(.multiRoute, [.wiredHeadset(), .lineOut()])
            == Ports(in: [.headsetMic], out: [.headphones, .lineOut]))
        #expect(Self.route(.multiRoute) == Ports(in: [.builtInMic], out: [.builtInSpeaker]))
        // Bluetooth is not a multiRoute output.
        #expect(Self.route(.multiRoute, [.bluetoothHeadset()]).outputs == [.builtInSpeaker])
    }

    @Test("USB and car audio are ordinary external devices: last in wins")
    func usbAndCarAudio() {
        #expect(Self.route(.playAndRecord, [.usbAudio()]) == Ports(in: [.usbAudio], out: [.usbAudio]))
        #expect(Self.route(.playAndRecord, [.usbAudio(), .carAudio()]) == Ports(in: [.carAudio], out: [.carAudio]))
        // A USB microphone only: input from it, output still the receiver.
        #expect(Self.route(.playAndRecord, [.usbAudio(hasOutput: false)])
            == Ports(in: [.usbAudio], out: [.builtInReceiver]))
    }

    @Test("record uses Bluetooth HFP only with allowBluetooth")
    func recordBluetooth() {
        #expect(Self.route(.record, [.bluetoothHeadset()]) == Ports(in: [.builtInMic], out: []))
        #expect(Self.route(.record, options: [.allowBluetooth], [.bluetoothHeadset()]) == Ports(in: [.bluetoothHFP], out: []))
    }

    @Test("A device without a receiver (a laptop) routes calls to the speaker")
    func laptopWithoutReceiver() {
        let input = RoutePolicy.Input(category: .playAndRecord, devices: [.builtIn(hasReceiver: false)])
        #expect(RoutePolicy.route(for: input).ports == Ports(in: [.builtInMic], out: [.builtInSpeaker]))
    }

    @Test("A preferred input wins over last in; an external one brings its output along")
    func preferredInput() {
        let headset = AudioDevice.wiredHeadset()
        let bluetooth = AudioDevice.bluetoothHeadset()
        let headsetMic = headset.inputs[0].uid
        let builtInMic = AudioDevice.builtIn().inputs[0].uid
        // Bluetooth is last in, but the wired mic is preferred: both directions go wired.
        #expect(Self.route(.playAndRecord, options: [.allowBluetooth], [headset, bluetooth], preferredInputUID: headsetMic)
            == Ports(in: [.headsetMic], out: [.headphones]))
        // The built-in mic preferred with a wired headset: the output stays on the headphones.
        #expect(Self.route(.playAndRecord, [headset], preferredInputUID: builtInMic)
            == Ports(in: [.builtInMic], out: [.headphones]))
        // The built-in mic preferred with Bluetooth HFP: HFP carries both directions or neither.
        #expect(Self.route(.playAndRecord, options: [.allowBluetooth], [bluetooth], preferredInputUID: builtInMic)
            == Ports(in: [.builtInMic], out: [.builtInReceiver]))
        // A preference the session may not use (HFP without allowBluetooth) is ignored.
        #expect(Self.route(.playAndRecord, [bluetooth], preferredInputUID: bluetooth.inputs[0].uid)
            == Ports(in: [.builtInMic], out: [.builtInReceiver]))
    }

    @Test("availableInputs is empty for categories that do not record",
          arguments: [Category.ambient, .soloAmbient, .playback, .audioProcessing])
    func noInputsWithoutRecording(category: Category) {
        let input = RoutePolicy.Input(category: category, devices: [.builtIn(), .wiredHeadset()])
        #expect(RoutePolicy.availableInputs(for: input).isEmpty)
    }

    @Test("Data source and polar pattern preferences select the built-in microphone's data source")
    func dataSourcePreferences() throws {
        let mic = AudioDevice.builtIn().inputs[0]
        let preferences = [mic.uid: RoutePolicy.DataSourcePreference(dataSourceID: 2, polarPatterns: [2: .cardioid])]
        let input = RoutePolicy.Input(category: .playAndRecord, devices: [.builtIn()], dataSourcePreferences: preferences)
        let port = try #require(RoutePolicy.route(for: input).inputs.first)
        #expect(port.selectedDataSource?.dataSourceName == "Front")
        #expect(port.selectedDataSource?.selectedPolarPattern == .cardioid)
        #expect(port.preferredDataSource?.dataSourceID == 2)

        // Measurement mode: the primary microphone, whatever the preference.
        var measuring = input
        measuring.mode = .measurement
        #expect(RoutePolicy.route(for: measuring).inputs.first?.selectedDataSource?.dataSourceName == "Bottom")
    }

    @Test("Every port type of the spec exists with the spec's name")
    func portTypes() {
        #expect(AudioSession.Port.allKnown.map(\.rawValue) == [
            "builtInReceiver", "builtInSpeaker", "builtInMic", "headphones", "headsetMic", "bluetoothHFP",
            "bluetoothA2DP", "bluetoothLE", "usbAudio", "lineIn", "lineOut", "HDMI", "carAudio", "airPlay",
        ])
    }

    @Test("A port description has a type, name, UID, channels and data sources")
    func portDescription() throws {
        let mic = try #require(AudioDevice.builtIn().inputs.first)
        #expect(mic.portType == .builtInMic)
        #expect(!mic.portName.isEmpty)
        #expect(!mic.uid.isEmpty)
        #expect(mic.channels.count == 1)
        #expect(mic.channels.first?.owningPortUID == mic.uid)
        #expect(mic.dataSources.map(\.dataSourceName) == ["Bottom", "Front", "Back"])
        #expect(mic.dataSources.first?.location == .lower)
        #expect(mic.dataSources.first?.orientation == .bottom)
        #expect(mic.selectedDataSource?.dataSourceID == 1)
    }
}
