import AudioSession
import Testing

/// Spec section 6, rule 4: the proximity override (CallAudio's addition).
@Suite("Proximity override")
struct ProximityTests {
    static let receiver = Ports(in: [.builtInMic], out: [.builtInReceiver])
    static let speaker = Ports(in: [.builtInMic], out: [.builtInSpeaker])

    static func callWithProximity(options: AudioSession.CategoryOptions = []) throws
        -> (AudioSystem, SimulatedAudioHardware, AudioSession) {
        let (system, hardware) = makeSystem(proximity: .far)
        let call = try makeActiveCall(in: system, mode: .voiceChat, options: options)
        call.isProximityRoutingEnabled = true
        return (system, hardware, call)
    }

    @Test("Near the ear: receiver; away: speaker; each switch posts reason override with the previous route")
    func nearReceiverFarSpeaker() throws {
        let (_, hardware, call) = try Self.callWithProximity()
        #expect(call.currentRoute.ports == Self.speaker)
        let events = NotificationRecorder(call)

        hardware.setProximity(.near)
        #expect(call.currentRoute.ports == Self.receiver)
        hardware.setProximity(.far)
        #expect(call.currentRoute.ports == Self.speaker)

        #expect(events.routeChanges.map(\.reason) == [.override, .override])
        #expect(events.routeChanges.map(\.previousRoute.ports) == [Self.speaker, Self.receiver])
    }

    @Test("Near the ear wins over defaultToSpeaker")
    func nearWinsOverDefaultToSpeaker() throws {
        let (_, hardware, call) = try Self.callWithProximity(options: [.defaultToSpeaker])
        hardware.setProximity(.near)
        #expect(call.currentRoute.ports == Self.receiver)
    }

    @Test("With a headset connected proximity changes nothing")
    func headsetWinsOverProximity() throws {
        let (_, hardware, call) = try Self.callWithProximity()
        hardware.connect(.wiredHeadset())
        let events = NotificationRecorder(call)

        hardware.setProximity(.near)
        hardware.setProximity(.far)

        #expect(call.currentRoute.ports == Ports(in: [.headsetMic], out: [.headphones]))
        #expect(events.routeChanges.isEmpty)
    }

    @Test("The speaker override wins over proximity")
    func speakerOverrideWinsOverProximity() throws {
        let (_, hardware, call) = try Self.callWithProximity()
        try call.overrideOutputAudioPort(.speaker)
        hardware.setProximity(.near)
        #expect(call.currentRoute.ports == Self.speaker)
        #expect(call.outputPortOverride == .speaker, "a proximity switch is not a device change: the override stays")
    }

    @Test("Disabled (the default), proximity changes nothing")
    func disabledByDefault() throws {
        let (system, hardware) = makeSystem(proximity: .far)
        let call = try makeActiveCall(in: system, options: [.defaultToSpeaker])
        #expect(!call.isProximityRoutingEnabled)
        hardware.setProximity(.near)
        #expect(call.currentRoute.ports == Self.speaker)
        #expect(call.proximity == .near)
    }

    @Test("Enabling it while active applies at once with reason override")
    func enablingWhileActive() throws {
        let (system, _) = makeSystem(proximity: .far)
        let call = try makeActiveCall(in: system)
        let events = NotificationRecorder(call)
        call.isProximityRoutingEnabled = true
        #expect(call.currentRoute.ports == Self.speaker)
        #expect(events.routeChanges.only?.reason == .override)
        #expect(events.routeChanges.only?.previousRoute.ports == Self.receiver)
    }

    @Test("Without a sensor reading (unknown) the normal rules apply")
    func unknownProximity() throws {
        let input = RoutePolicy.Input(
            category: .playAndRecord, devices: [.builtIn()], proximity: .unknown, isProximityRoutingEnabled: true)
        #expect(RoutePolicy.route(for: input).ports == Self.receiver)
    }

    @Test("Proximity only concerns playAndRecord: playback stays on the speaker near the ear")
    func onlyPlayAndRecord() {
        let input = RoutePolicy.Input(
            category: .playback, devices: [.builtIn()], proximity: .near, isProximityRoutingEnabled: true)
        #expect(RoutePolicy.route(for: input).outputTypes == [.builtInSpeaker])
    }
}
