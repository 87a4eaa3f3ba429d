import AudioSession
import Testing

/// Spec section 4: preferred values are hints; actual values come from the hardware.
@Suite("Preferred and actual hardware values")
struct HardwareValuesTests {
    @Test("A preferred rate the hardware cannot do yields the hardware's nearest rate after activation")
    func unsupportedRateYieldsActualRate() throws {
        let (system, _) = makeSystem(supportedSampleRates: [8_000, 16_000, 48_000])
        let call = system.makeSession(name: "call")
        try call.setCategory(.playAndRecord, mode: .voiceChat)
        try call.setPreferredSampleRate(44_100)
        try call.setActive(true)

        #expect(call.preferredSampleRate == 44_100, "the preference is kept as asked")
        #expect(call.sampleRate == 48_000, "the actual rate is what the hardware does")
    }

    @Test("A supported preferred rate is used")
    func supportedRateIsUsed() throws {
        let (system, hardware) = makeSystem()
        let call = system.makeSession(name: "call")
        try call.setCategory(.playAndRecord)
        try call.setPreferredSampleRate(16_000)
        try call.setPreferredIOBufferDuration(0.01)
        try call.setActive(true)

        #expect(call.sampleRate == 16_000)
        // 0.01 s at 16 kHz is 160 frames; the simulated hardware rounds to a power of two (128).
        #expect(call.ioBufferDuration == 128.0 / 16_000)
        #expect(hardware.negotiatedPreferences.last?.sampleRate == 16_000)
        #expect(hardware.negotiatedPreferences.last?.ioBufferDuration == 0.01)
    }

    @Test("Channels are clamped to what the route offers; latencies come from the route's ports")
    func channelsAndLatencies() throws {
        let (system, hardware) = makeSystem()
        let call = system.makeSession(name: "call")
        try call.setCategory(.playAndRecord, options: [.allowBluetoothA2DP])
        try call.setPreferredInputNumberOfChannels(2)
        try call.setPreferredOutputNumberOfChannels(2)
        try call.setActive(true)
        #expect(call.inputNumberOfChannels == 1, "the built-in microphone is mono")
        #expect(call.maximumInputNumberOfChannels == 1)
        #expect(call.outputNumberOfChannels == 1, "the receiver is mono")

        hardware.connect(.bluetoothA2DP())
        #expect(call.outputNumberOfChannels == 2)
        #expect(call.outputLatency == SimulatedAudioHardware.latency(of: .bluetoothA2DP))
        #expect(call.inputLatency == SimulatedAudioHardware.latency(of: .builtInMic))
    }

    @Test("Values change with the route: Bluetooth HFP runs at 16 kHz, and observers read the new rate")
    func valuesFollowRoute() throws {
        let (system, hardware) = makeSystem()
        let call = try makeActiveCall(in: system, mode: .voiceChat)
        #expect(call.sampleRate == 48_000)
        let ratesSeen = MessageLog()
        _ = call.addObserver { [weak call] notification in
            if notification.routeChange != nil, let call { ratesSeen.append("\(Int(call.sampleRate))") }
        }

        hardware.connect(.bluetoothHeadset())

        #expect(call.sampleRate == 16_000)
        #expect(ratesSeen.messages == ["16000"], "the hardware is configured before the route change is delivered")
    }

    @Test("Invalid preferred sample rates and durations are errors; the preference is unchanged",
          arguments: [-1, -48_000, .nan, .infinity, -.infinity] as [Double])
    func invalidPreferredValues(value: Double) throws {
        let (system, _) = makeSystem()
        let session = system.makeSession(name: "app")
        try session.setPreferredSampleRate(16_000)

        #expect(throws: AudioSessionError.self) { try session.setPreferredSampleRate(value) }
        #expect(throws: AudioSessionError.self) { try session.setPreferredIOBufferDuration(value) }
        #expect(session.preferredSampleRate == 16_000)
        #expect(session.preferredIOBufferDuration == 0)
    }

    @Test("A negative rate's error names the value and is badParam")
    func negativeRateError() {
        let (system, _) = makeSystem()
        let session = system.makeSession(name: "app")
        #expect(throws: AudioSessionError.invalidPreferredValue(name: "sample rate", value: -1)) {
            try session.setPreferredSampleRate(-1)
        }
        #expect(throws: AudioSessionError.invalidPreferredValue(name: "input number of channels", value: -2)) {
            try session.setPreferredInputNumberOfChannels(-2)
        }
        #expect(AudioSessionError.invalidPreferredValue(name: "sample rate", value: -1).code == .badParam)
    }

    @Test("0 clears a preference")
    func zeroClearsPreference() throws {
        let (system, _) = makeSystem()
        let session = system.makeSession(name: "app")
        try session.setPreferredSampleRate(16_000)
        try session.setPreferredSampleRate(0)
        #expect(session.preferredSampleRate == 0)
        #expect(session.preferredHardwareValues == .none)
    }

    @Test("Setting a preference while active renegotiates at once when the session owns the route")
    func preferenceWhileActive() throws {
        let (system, _) = makeSystem()
        let call = try makeActiveCall(in: system)
        try call.setPreferredSampleRate(24_000)
        #expect(call.sampleRate == 24_000)
    }

    @Test("The hardware follows the route owner; deactivating everything applies an empty route")
    func hardwareFollowsRouteOwner() throws {
        let (system, hardware) = makeSystem()
        let game = system.makeSession(name: "game")
        try game.setCategory(.ambient)
        try game.setPreferredSampleRate(44_100)
        try game.setActive(true)
        #expect(system.hardwareValues.sampleRate == 44_100)

        let call = system.makeSession(name: "call")
        try call.setCategory(.playAndRecord)
        try call.setPreferredSampleRate(16_000)
        try call.setActive(true)
        #expect(hardware.lastAppliedRoute == call.currentRoute, "the non-mixable session owns the route")
        #expect(game.sampleRate == 16_000, "actual values are the hardware's, shared by all sessions")

        try call.setActive(false)
        #expect(hardware.lastAppliedRoute == game.currentRoute)
        try game.setActive(false)
        #expect(hardware.lastAppliedRoute == .empty, "no session active: the devices may be released")
    }

    @Test("Preferred input, data source and polar pattern are validated")
    func portPreferencesAreValidated() throws {
        let (system, hardware) = makeSystem()
        let call = system.makeSession(name: "call")
        try call.setCategory(.playAndRecord)
        let bluetooth = AudioDevice.bluetoothHeadset()
        hardware.connect(bluetooth)
        let mic = try #require(call.availableInputs.first { $0.portType == .builtInMic })

        #expect(throws: AudioSessionError.portNotAvailable(uid: bluetooth.inputs[0].uid)) {
            try call.setPreferredInput(bluetooth.inputs[0])  // HFP needs allowBluetooth
        }
        let front = try #require(mic.dataSources.first { $0.dataSourceName == "Front" })
        let bottom = try #require(mic.dataSources.first { $0.dataSourceName == "Bottom" })
        #expect(throws: AudioSessionError.polarPatternNotSupported(.subcardioid, dataSourceID: bottom.dataSourceID)) {
            try call.setPreferredPolarPattern(.subcardioid, for: bottom, of: mic)
        }
        var stranger = front
        stranger.dataSourceID = 99
        #expect(throws: AudioSessionError.dataSourceNotAvailable(dataSourceID: 99, portUID: mic.uid)) {
            try call.setPreferredDataSource(stranger, for: mic)
        }

        try call.setPreferredInput(mic)
        try call.setInputDataSource(front)
        try call.setPreferredPolarPattern(.cardioid, for: front, of: mic)
        try call.setActive(true)
        #expect(call.preferredInput?.uid == mic.uid)
        #expect(call.inputDataSource?.dataSourceName == "Front")
        #expect(call.inputDataSource?.selectedPolarPattern == .cardioid)
        #expect(call.inputDataSources.count == 3)
    }

    @Test("Changing the data source while active posts routeConfigurationChange with the previous route")
    func dataSourceChangeWhileActive() throws {
        let (system, _) = makeSystem()
        let call = try makeActiveCall(in: system)
        let events = NotificationRecorder(call)
        let back = try #require(call.inputDataSources.first { $0.dataSourceName == "Back" })

        try call.setInputDataSource(back)

        let change = try #require(events.routeChanges.only)
        #expect(change.reason == .routeConfigurationChange)
        #expect(change.previousRoute.inputs.first?.selectedDataSource?.dataSourceName == "Bottom")
        #expect(change.currentRoute.inputs.first?.selectedDataSource?.dataSourceName == "Back")
    }

    @Test("Choosing a preferred input while active posts reason override; a new input device replaces the preference")
    func preferredInputWhileActive() throws {
        let (system, hardware) = makeSystem()
        hardware.connect(.wiredHeadset())
        let call = try makeActiveCall(in: system)
        let events = NotificationRecorder(call)
        let mic = try #require(call.availableInputs.first { $0.portType == .builtInMic })

        try call.setPreferredInput(mic)
        #expect(call.currentRoute.ports == Ports(in: [.builtInMic], out: [.headphones]))
        #expect(events.routeChanges.only?.reason == .override)
        #expect(events.routeChanges.only?.previousRoute.ports == Ports(in: [.headsetMic], out: [.headphones]))

        hardware.connect(.usbAudio())
        #expect(call.preferredInput == nil, "last in wins over an older preference")
        #expect(call.currentRoute.ports == Ports(in: [.usbAudio], out: [.usbAudio]))
    }
}
