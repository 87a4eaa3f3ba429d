import AudioSession
import Testing

/// Spec section 6, output selection for playAndRecord without an override.
@Suite("playAndRecord routing")
struct PlayAndRecordRoutingTests {
    struct RoutingCase: Sendable, CustomStringConvertible {
        var description: String
        var options: AudioSession.CategoryOptions
        var connected: [AudioDevice]
        var expected: Ports
    }

    static let receiver = Ports(in: [.builtInMic], out: [.builtInReceiver])
    static let speaker = Ports(in: [.builtInMic], out: [.builtInSpeaker])
    static let headset = Ports(in: [.headsetMic], out: [.headphones])
    static let bluetooth = Ports(in: [.bluetoothHFP], out: [.bluetoothHFP])

    static let cases: [RoutingCase] = [
        .init(description: "no options, nothing connected: receiver", options: [], connected: [], expected: receiver),
        .init(description: "no options, wired headset: headset", options: [], connected: [.wiredHeadset()], expected: headset),
        .init(description: "no options, Bluetooth only: receiver (HFP not allowed)", options: [],
              connected: [.bluetoothHeadset()], expected: receiver),
        .init(description: "no options, wired then Bluetooth: wired", options: [],
              connected: [.wiredHeadset(), .bluetoothHeadset()], expected: headset),
        .init(description: "defaultToSpeaker, nothing connected: speaker", options: [.defaultToSpeaker], connected: [],
              expected: speaker),
        .init(description: "defaultToSpeaker, wired headset: headset", options: [.defaultToSpeaker],
              connected: [.wiredHeadset()], expected: headset),
        .init(description: "defaultToSpeaker, Bluetooth only: speaker", options: [.defaultToSpeaker],
              connected: [.bluetoothHeadset()], expected: speaker),
        .init(description: "allowBluetooth, nothing connected: receiver", options: [.allowBluetooth], connected: [],
              expected: receiver),
        .init(description: "allowBluetooth, Bluetooth only: Bluetooth", options: [.allowBluetooth],
              connected: [.bluetoothHeadset()], expected: bluetooth),
        .init(description: "allowBluetooth, wired then Bluetooth: Bluetooth (last in wins)", options: [.allowBluetooth],
              connected: [.wiredHeadset(), .bluetoothHeadset()], expected: bluetooth),
        .init(description: "allowBluetooth, Bluetooth then wired: wired (last in wins)", options: [.allowBluetooth],
              connected: [.bluetoothHeadset(), .wiredHeadset()], expected: headset),
    ]

    @Test("The pure route policy picks the spec's route", arguments: cases)
    func policyPicksRoute(testCase: RoutingCase) {
        let input = RoutePolicy.Input(
            category: .playAndRecord, options: testCase.options, devices: [.builtIn()] + testCase.connected)
        #expect(RoutePolicy.route(for: input).ports == testCase.expected)
    }

    @Test("An active session on simulated hardware gets the same route, and the hardware is given it",
          arguments: cases)
    func sessionFollowsPlugEvents(testCase: RoutingCase) throws {
        let (system, hardware) = makeSystem()
        let session = try makeActiveCall(in: system, options: testCase.options)
        for device in testCase.connected { hardware.connect(device) }

        #expect(session.currentRoute.ports == testCase.expected)
        #expect(hardware.lastAppliedRoute == session.currentRoute, "apply(route:) receives the full description")
    }

    @Test("With defaultToSpeaker, unplugging the headset returns to the speaker, not the receiver")
    func unplugReturnsToSpeaker() throws {
        let (system, hardware) = makeSystem()
        let session = try makeActiveCall(in: system, options: [.defaultToSpeaker])
        hardware.connect(.wiredHeadset())
        let recorder = NotificationRecorder(session)

        hardware.disconnect(.wiredHeadset())

        #expect(session.currentRoute.ports == Self.speaker)
        let change = try #require(recorder.routeChanges.only)
        #expect(change.reason == .oldDeviceUnavailable)
        #expect(change.previousRoute.ports == Self.headset)
        #expect(change.currentRoute.ports == Self.speaker)
    }

    @Test("Plugging a headset in posts newDeviceAvailable with the previous route")
    func plugPostsNewDeviceAvailable() throws {
        let (system, hardware) = makeSystem()
        let session = try makeActiveCall(in: system)
        let recorder = NotificationRecorder(session)

        hardware.connect(.wiredHeadset())

        let change = try #require(recorder.routeChanges.only)
        #expect(change.reason == .newDeviceAvailable)
        #expect(change.previousRoute.ports == Self.receiver)
        #expect(change.currentRoute.ports == Self.headset)
    }

    @Test("availableInputs includes the Bluetooth microphone only with allowBluetooth",
          arguments: [([], false), ([.allowBluetooth], true)] as [(AudioSession.CategoryOptions, Bool)])
    func bluetoothInputNeedsAllowBluetooth(options: AudioSession.CategoryOptions, includesBluetooth: Bool) throws {
        let (system, hardware) = makeSystem()
        hardware.connect(.wiredHeadset())
        hardware.connect(.bluetoothHeadset())
        let session = system.makeSession(name: "call")
        try session.setCategory(.playAndRecord, options: options)

        let types = session.availableInputs.map(\.portType)
        #expect(types.contains(.bluetoothHFP) == includesBluetooth)
        #expect(types.first == .builtInMic)
        #expect(types.contains(.headsetMic))
    }

    @Test("voiceChat implies allowBluetooth, so a Bluetooth headset carries the call")
    func voiceChatUsesBluetooth() throws {
        let (system, hardware) = makeSystem()
        hardware.connect(.bluetoothHeadset())
        let session = try makeActiveCall(in: system, mode: .voiceChat)
        #expect(session.currentRoute.ports == Self.bluetooth)
    }

    @Test("videoChat implies defaultToSpeaker")
    func videoChatUsesSpeaker() throws {
        let (system, _) = makeSystem()
        let session = try makeActiveCall(in: system, mode: .videoChat)
        #expect(session.currentRoute.ports == Self.speaker)
    }

    @Test("A device that changes nothing for the session posts nothing")
    func irrelevantDevicePostsNothing() throws {
        let (system, hardware) = makeSystem()
        let session = try makeActiveCall(in: system)
        let recorder = NotificationRecorder(session)
        hardware.connect(.bluetoothA2DP())  // A2DP not allowed: still the receiver
        #expect(recorder.routeChanges.isEmpty)
        #expect(session.currentRoute.ports == Self.receiver)
    }
}

extension Collection {
    /// The single element, or nil if there are zero or several.
    var only: Element? { count == 1 ? first : nil }
}
