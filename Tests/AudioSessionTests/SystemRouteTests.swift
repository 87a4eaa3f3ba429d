import AudioSession
import Testing

/// One hardware route for the system: an active session's `currentRoute` is where its audio
/// actually goes, and a route change reaches every session whose audio it moves.
@Suite("One system route")
struct SystemRouteTests {
    static func makeActiveGame(in system: AudioSystem) throws -> AudioSession {
        let game = system.makeSession(name: "game")
        try game.setCategory(.ambient)
        try game.setActive(true)
        return game
    }

    @Test("A mixable session plays where the hardware plays: the call's receiver, not its own speaker")
    func mixableSessionSharesTheRoute() throws {
        let (system, hardware) = makeSystem()
        let call = try makeActiveCall(in: system, mode: .voiceChat)
        let game = try Self.makeActiveGame(in: system)

        #expect(hardware.lastAppliedRoute?.ports == Ports(in: [.builtInMic], out: [.builtInReceiver]))
        #expect(game.currentRoute.ports == Ports(in: [], out: [.builtInReceiver]), "ambient has no input")
        #expect(call.currentRoute.ports == Ports(in: [.builtInMic], out: [.builtInReceiver]))
    }

    @Test("The call's speaker override moves the game too, with the same reason and its previous route")
    func overrideReachesEverySession() throws {
        let (system, _) = makeSystem()
        let call = try makeActiveCall(in: system, mode: .voiceChat)
        let game = try Self.makeActiveGame(in: system)
        let gameEvents = NotificationRecorder(game)

        try call.overrideOutputAudioPort(.speaker)

        let change = try #require(gameEvents.routeChanges.only)
        #expect(change.reason == .override)
        #expect(change.previousRoute.ports == Ports(in: [], out: [.builtInReceiver]))
        #expect(change.currentRoute.ports == Ports(in: [], out: [.builtInSpeaker]))
    }

    @Test("A call that starts or ends moves the sessions already playing (reason categoryChange)")
    func ownerChangeReachesEverySession() throws {
        let (system, _) = makeSystem()
        let game = try Self.makeActiveGame(in: system)
        let gameEvents = NotificationRecorder(game)
        #expect(game.currentRoute.ports == Ports(in: [], out: [.builtInSpeaker]))

        let call = try makeActiveCall(in: system, mode: .voiceChat)
        #expect(gameEvents.routeChanges.map(\.reason) == [.categoryChange])
        #expect(gameEvents.routeChanges.last?.currentRoute.ports == Ports(in: [], out: [.builtInReceiver]))

        try call.setActive(false)
        #expect(gameEvents.routeChanges.map(\.reason) == [.categoryChange, .categoryChange])
        #expect(game.currentRoute.ports == Ports(in: [], out: [.builtInSpeaker]))
    }

    @Test("A session that moves nothing for the others posts nothing to them")
    func unmovedSessionsAreNotTold() throws {
        let (system, _) = makeSystem()
        let music = system.makeSession(name: "music")
        try music.setCategory(.playback)
        try music.setActive(true)
        let game = try Self.makeActiveGame(in: system)
        let gameEvents = NotificationRecorder(game)
        try game.setActive(false)
        try game.setActive(true)
        #expect(gameEvents.routeChanges.isEmpty, "the music owns the speaker throughout")
    }

    @Test("A recorder owns the input; the output comes from the next session that plays")
    func ownerWithoutOutput() throws {
        let (system, hardware) = makeSystem(devices: [.builtIn(), .wiredHeadset()])
        let recorder = system.makeSession(name: "recorder")
        try recorder.setCategory(.record)
        try recorder.setActive(true)
        let game = try Self.makeActiveGame(in: system)

        #expect(hardware.lastAppliedRoute?.ports == Ports(in: [.headsetMic], out: [.headphones]))
        #expect(recorder.currentRoute.ports == Ports(in: [.headsetMic], out: []))
        #expect(game.currentRoute.ports == Ports(in: [], out: [.headphones]))
    }

    @Test("An inactive session reads the route it would ask for")
    func inactiveSessionReadsItsOwnRoute() throws {
        let (system, _) = makeSystem()
        _ = try makeActiveCall(in: system, mode: .voiceChat)
        let music = system.makeSession(name: "music")
        try music.setCategory(.playback, options: .mixWithOthers)
        #expect(music.currentRoute.ports == Ports(in: [], out: [.builtInSpeaker]))
    }
}
