import AudioSession
import Testing

/// Spec section 4: media services lost and reset.
@Suite("Media services lost and reset")
struct MediaServicesTests {
    @Test("Lost: every session is inactive, its I/O stopped, and told; activation fails until the reset")
    func lost() throws {
        let (system, _) = makeSystem()
        let call = try makeActiveCall(in: system, mode: .voiceChat)
        let stops = MessageLog()
        let io = try call.beginIO(named: "vpio") { stops.append("stopped") }
        let idle = system.makeSession(name: "idle")
        let callEvents = NotificationRecorder(call)
        let idleEvents = NotificationRecorder(idle)

        system.simulateMediaServicesLost()

        #expect(!call.isActive)
        #expect(!io.isRunning)
        #expect(stops.messages == ["stopped"])
        #expect(callEvents.all == [.mediaServicesWereLost])
        // The idle session is told too; as the call's primary audio stopped, its hint ends as well.
        #expect(idleEvents.all == [.mediaServicesWereLost, .silenceSecondaryAudioHint(.end)])
        #expect(system.isMediaServicesLost)
        #expect(throws: AudioSessionError.mediaServicesFailed) { try call.setActive(true) }
        #expect(throws: AudioSessionError.mediaServicesFailed) { try call.setCategory(.playback) }
    }

    @Test("Reset: session properties return to their defaults, every session is told, and it can reactivate")
    func reset() throws {
        let (system, hardware) = makeSystem()
        hardware.connect(.wiredHeadset())
        let call = system.makeSession(name: "call")
        try call.setCategory(.playAndRecord, mode: .voiceChat, options: [.defaultToSpeaker])
        try call.setPreferredSampleRate(16_000)
        call.isProximityRoutingEnabled = true
        try call.setActive(true)
        try call.overrideOutputAudioPort(.speaker)
        let events = NotificationRecorder(call)

        system.simulateMediaServicesLost()
        system.simulateMediaServicesReset()

        #expect(events.all == [.mediaServicesWereLost, .mediaServicesWereReset])
        #expect(call.configuration == .initial)
        #expect(call.preferredSampleRate == 0)
        #expect(!call.isProximityRoutingEnabled)
        #expect(call.outputPortOverride == .none)
        #expect(!call.isActive)

        // The app sets its category again and reactivates.
        try call.setCategory(.playAndRecord, mode: .voiceChat)
        try call.setActive(true)
        #expect(call.currentRoute.ports == Ports(in: [.headsetMic], out: [.headphones]))
    }

    @Test("The hardware can report loss and reset too")
    func hardwareReportsMediaServices() throws {
        let (system, hardware) = makeSystem()
        let call = try makeActiveCall(in: system)
        let events = NotificationRecorder(call)
        hardware.loseMediaServices()
        hardware.resetMediaServices()
        #expect(events.all == [.mediaServicesWereLost, .mediaServicesWereReset])
    }

    @Test("A reset without a loss first still deactivates everything")
    func resetWithoutLoss() throws {
        let (system, _) = makeSystem()
        let call = try makeActiveCall(in: system)
        let events = NotificationRecorder(call)
        system.simulateMediaServicesReset()
        #expect(!call.isActive)
        #expect(events.all == [.mediaServicesWereReset])
    }
}
