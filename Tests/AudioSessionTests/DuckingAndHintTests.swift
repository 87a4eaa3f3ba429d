import AudioSession
import Testing

/// Spec section 4: ducking, isOtherAudioPlaying, and the secondary-audio hint.
@Suite("Ducking, other audio and the secondary audio hint")
struct DuckingAndHintTests {
    @Test("duckOthers ducks other sessions while active and un-ducks them on deactivation")
    func duckOthersDucksWhileActive() throws {
        let (system, _) = makeSystem()
        let music = system.makeSession(name: "music")
        try music.setCategory(.playback)
        try music.setActive(true)
        let navigation = system.makeSession(name: "navigation")
        try navigation.setCategory(.playback, mode: .voicePrompt, options: [.duckOthers])
        #expect(!music.isDucked)

        try navigation.setActive(true)
        #expect(music.isActive, "ducked, not interrupted")
        #expect(music.isDucked)
        #expect(!navigation.isDucked, "a session does not duck itself")

        try navigation.setActive(false)
        #expect(!music.isDucked)
    }

    @Test("ambient accepts duckOthers, and a session activated later is ducked too")
    func ambientDucksLaterSessions() throws {
        let (system, _) = makeSystem()
        let ducker = system.makeSession(name: "ducker")
        try ducker.setCategory(.ambient, options: [.duckOthers])
        try ducker.setActive(true)
        let game = system.makeSession(name: "game")
        try game.setCategory(.ambient)
        try game.setActive(true)
        #expect(game.isDucked)
    }

    @Test("The phone is never ducked")
    func phoneIsNotDucked() throws {
        let (system, _) = makeSystem()
        let phone = system.makeSession(name: "phone", priority: .phoneCall)
        try phone.setCategory(.playAndRecord, mode: .voiceChat)
        try phone.setActive(true)
        let navigation = system.makeSession(name: "navigation")
        try navigation.setCategory(.playback, options: [.duckOthers])
        try navigation.setActive(true)
        #expect(!phone.isDucked)
    }

    @Test("isOtherAudioPlaying reports any other active session that plays")
    func otherAudioPlaying() throws {
        let (system, _) = makeSystem()
        let game = system.makeSession(name: "game")
        try game.setCategory(.ambient)
        #expect(!game.isOtherAudioPlaying)

        let music = system.makeSession(name: "music")
        try music.setCategory(.playback, options: .mixWithOthers)
        try music.setActive(true)
        #expect(game.isOtherAudioPlaying)
        #expect(!music.isOtherAudioPlaying, "not its own audio")

        try music.setActive(false)
        #expect(!game.isOtherAudioPlaying)
    }

    @Test("The secondary audio hint begins when a non-mixable session plays and ends when it stops")
    func secondaryAudioHint() throws {
        let (system, _) = makeSystem()
        let game = system.makeSession(name: "game")
        try game.setCategory(.ambient)
        try game.setActive(true)
        let gameEvents = NotificationRecorder(game)
        #expect(!game.secondaryAudioShouldBeSilencedHint)

        let music = system.makeSession(name: "music")
        try music.setCategory(.playback)
        try music.setActive(true)
        #expect(game.secondaryAudioShouldBeSilencedHint)
        #expect(gameEvents.hints == [.begin])
        #expect(game.isActive, "ambient keeps playing: the hint is advice")

        try music.setActive(false)
        #expect(!game.secondaryAudioShouldBeSilencedHint)
        #expect(gameEvents.hints == [.begin, .end])
    }

    @Test("A mixable session playing does not raise the hint")
    func mixableSessionRaisesNoHint() throws {
        let (system, _) = makeSystem()
        let game = system.makeSession(name: "game")
        try game.setCategory(.ambient)
        let gameEvents = NotificationRecorder(game)
        let music = system.makeSession(name: "music")
        try music.setCategory(.playback, options: .mixWithOthers)
        try music.setActive(true)
        #expect(!game.secondaryAudioShouldBeSilencedHint)
        #expect(gameEvents.hints.isEmpty)
    }
}
