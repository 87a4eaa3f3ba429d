import AudioSession
import Testing

/// Spec section 6, rule 1: the speaker override wins, is announced, and is transient.
@Suite("Speaker override")
struct SpeakerOverrideTests {
    static let speaker = Ports(in: [.builtInMic], out: [.builtInSpeaker])
    static let headset = Ports(in: [.headsetMic], out: [.headphones])

    /// An active call on a wired headset with the speaker override set.
    static func callOnSpeakerDespiteHeadset() throws -> (AudioSystem, SimulatedAudioHardware, AudioSession) {
        let (system, hardware) = makeSystem()
        hardware.connect(.wiredHeadset())
        let call = try makeActiveCall(in: system, mode: .voiceChat)
        try call.overrideOutputAudioPort(.speaker)
        return (system, hardware, call)
    }

    @Test("The override wins over a headset and posts reason override with the previous route")
    func overrideWinsOverHeadset() throws {
        let (system, hardware) = makeSystem()
        hardware.connect(.wiredHeadset())
        let call = try makeActiveCall(in: system, mode: .voiceChat)
        let recorder = NotificationRecorder(call)

        try call.overrideOutputAudioPort(.speaker)

        #expect(call.currentRoute.ports == Self.speaker)
        #expect(call.outputPortOverride == .speaker)
        #expect(hardware.lastAppliedRoute?.ports == Self.speaker)
        let change = try #require(recorder.routeChanges.only)
        #expect(change.reason == .override)
        #expect(change.previousRoute.ports == Self.headset)
        #expect(change.currentRoute.ports == Self.speaker)
    }

    @Test("Setting .none clears it and posts reason override")
    func noneClearsOverride() throws {
        let (_, _, call) = try Self.callOnSpeakerDespiteHeadset()
        let recorder = NotificationRecorder(call)

        try call.overrideOutputAudioPort(.none)

        #expect(call.currentRoute.ports == Self.headset)
        let change = try #require(recorder.routeChanges.only)
        #expect(change.reason == .override)
        #expect(change.previousRoute.ports == Self.speaker)
    }

    @Test("The next route change (a device connected) clears it")
    func deviceConnectionClearsOverride() throws {
        let (_, hardware, call) = try Self.callOnSpeakerDespiteHeadset()
        let recorder = NotificationRecorder(call)

        hardware.connect(.usbAudio())

        #expect(call.outputPortOverride == .none)
        #expect(call.currentRoute.ports == Ports(in: [.usbAudio], out: [.usbAudio]))
        let change = try #require(recorder.routeChanges.only)
        #expect(change.reason == .newDeviceAvailable)
        #expect(change.previousRoute.ports == Self.speaker)
    }

    @Test("The next route change (a device disconnected) clears it")
    func deviceDisconnectionClearsOverride() throws {
        let (system, hardware) = makeSystem()
        hardware.connect(.wiredHeadset())
        hardware.connect(.usbAudio())
        let call = try makeActiveCall(in: system, options: [.defaultToSpeaker])
        try call.overrideOutputAudioPort(.speaker)
        let recorder = NotificationRecorder(call)

        hardware.disconnect(.wiredHeadset())

        #expect(call.outputPortOverride == .none)
        #expect(call.currentRoute.ports == Ports(in: [.usbAudio], out: [.usbAudio]))
        #expect(recorder.routeChanges.only?.reason == .oldDeviceUnavailable)
        #expect(recorder.routeChanges.only?.previousRoute.ports == Self.speaker)
    }

    @Test("An override cleared while the route looks the same is still announced (never lost silently)")
    func clearedOverrideIsAnnounced() throws {
        let (system, hardware) = makeSystem()
        let call = try makeActiveCall(in: system, options: [.defaultToSpeaker])
        try call.overrideOutputAudioPort(.speaker)
        let recorder = NotificationRecorder(call)

        hardware.connect(.bluetoothA2DP())  // not allowed: the route stays on the speaker

        #expect(call.outputPortOverride == .none)
        let change = try #require(recorder.routeChanges.only)
        #expect(change.reason == .newDeviceAvailable)
        #expect(change.previousRoute == change.currentRoute)
    }

    @Test("An interruption clears it")
    func interruptionClearsOverride() throws {
        let (system, _, call) = try Self.callOnSpeakerDespiteHeadset()
        let phone = system.makeSession(name: "phone", priority: .phoneCall)
        try phone.setCategory(.playAndRecord, mode: .voiceChat)
        try phone.setActive(true)
        #expect(call.outputPortOverride == .none)

        try phone.setActive(false, options: .notifyOthersOnDeactivation)
        try call.setActive(true)
        #expect(call.currentRoute.ports == Self.headset)
    }

    @Test("A category change clears it, with reason categoryChange")
    func categoryChangeClearsOverride() throws {
        let (_, _, call) = try Self.callOnSpeakerDespiteHeadset()
        let recorder = NotificationRecorder(call)

        try call.setCategory(.playAndRecord, mode: .voiceChat)

        #expect(call.outputPortOverride == .none)
        #expect(call.currentRoute.ports == Self.headset)
        let change = try #require(recorder.routeChanges.only)
        #expect(change.reason == .categoryChange)
        #expect(change.previousRoute.ports == Self.speaker)
    }

    @Test("Outside playAndRecord the override throws",
          arguments: AudioSession.Category.allCases.filter { $0 != .playAndRecord })
    func overrideNeedsPlayAndRecord(category: AudioSession.Category) throws {
        let (system, _) = makeSystem()
        let session = system.makeSession(name: "app")
        try session.setCategory(category)
        #expect(throws: AudioSessionError.overrideRequiresPlayAndRecord(category: category)) {
            try session.overrideOutputAudioPort(.speaker)
        }
        #expect(session.outputPortOverride == .none)
    }
}
