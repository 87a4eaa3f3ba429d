import AudioSession
import Testing

/// Spec sections 1 and 4: a category, mode or option change on an active session is arbitrated
/// exactly as an activation would be: it interrupts whom it now interrupts, or it throws the
/// activation's error and leaves the session as it was.
@Suite("Changing the configuration while active")
struct ChangeWhileActiveTests {
    typealias Category = AudioSession.Category

    /// Categories that interrupt other non-mixable sessions with no options (spec section 1,
    /// last column; audioProcessing has no I/O and interrupts no one), written out.
    static let nonMixable: Set<Category> = [.soloAmbient, .playback, .record, .playAndRecord, .multiRoute]
    /// The categories that record (Apple's header, `setActive`: playback may start during a call, recording may not).
    static let refusedDuringPhoneCall: Set<Category> = [.record, .playAndRecord, .multiRoute]

    /// An ambient session, active: it mixes with everything, so it can start next to anyone.
    static func makeActiveGame(in system: AudioSystem, inBackground: Bool = false) throws -> AudioSession {
        let game = system.makeSession(name: "game")
        try game.setCategory(.ambient)
        game.isInBackground = inBackground
        try game.setActive(true)
        return game
    }

    static func makeActive(_ category: Category, name: String, in system: AudioSystem,
                           priority: AudioSession.Priority = .normal) throws -> AudioSession {
        let session = system.makeSession(name: name, priority: priority)
        try session.setCategory(category)
        try session.setActive(true)
        return session
    }

    @Test("An active ambient game that switches to playback interrupts the music, and lets it resume")
    func ambientToPlaybackInterruptsMusic() throws {
        let (system, _) = makeSystem()
        let music = try Self.makeActive(.playback, name: "music", in: system)
        let game = try Self.makeActiveGame(in: system)
        let musicEvents = NotificationRecorder(music)
        #expect(music.isActive, "ambient mixes: the music keeps playing")

        try game.setCategory(.playback)

        #expect(game.isActive)
        #expect(!music.isActive, "two non-mixable sessions are never active together")
        #expect(musicEvents.interruptions == [.init(type: .began, reason: .default)])
        try game.setActive(false, options: .notifyOthersOnDeactivation)
        #expect(musicEvents.interruptions.last == .init(type: .ended, options: .shouldResume))
    }

    @Test("During a phone call an active ambient session cannot switch to a call: insufficientPriority, nothing changes")
    func phoneRefusesRecordingChange() throws {
        let (system, _) = makeSystem()
        let phone = system.makeSession(name: "phone", priority: .phoneCall)
        try phone.setCategory(.playAndRecord, mode: .voiceChat)
        try phone.setActive(true)
        let game = try Self.makeActiveGame(in: system)
        let gameEvents = NotificationRecorder(game)
        let phoneEvents = NotificationRecorder(phone)
        let before = game.configuration

        #expect(throws: AudioSessionError.insufficientPriority(heldBy: "phone")) {
            try game.setCategory(.playAndRecord, mode: .voiceChat)
        }

        #expect(game.configuration == before)
        #expect(game.isActive && phone.isActive)
        #expect(gameEvents.all.isEmpty && phoneEvents.all.isEmpty)
    }

    @Test("In the background, a change that would interrupt someone throws cannotInterruptOthers")
    func backgroundChangeCannotInterrupt() throws {
        let (system, _) = makeSystem()
        let music = try Self.makeActive(.playback, name: "music", in: system)
        let game = try Self.makeActiveGame(in: system, inBackground: true)

        #expect(throws: AudioSessionError.cannotInterruptOthers) { try game.setCategory(.playback) }

        #expect(game.category == .ambient && game.isActive)
        #expect(music.isActive)
    }

    static let pairs: [(Category, Category)] = Category.allCases.flatMap { other in
        Category.allCases.map { (other, $0) }
    }

    @Test("Every category pair: a change interrupts an active session exactly when an activation would",
          arguments: pairs)
    func changeInterruptsLikeActivation(other: Category, new: Category) throws {
        let (system, _) = makeSystem()
        let game = try Self.makeActiveGame(in: system)
        let otherSession = try Self.makeActive(other, name: "other", in: system)
        #expect(game.isActive && otherSession.isActive)
        let otherEvents = NotificationRecorder(otherSession)

        try game.setCategory(new)

        let interrupts = Self.nonMixable.contains(other) && Self.nonMixable.contains(new)
        #expect(game.isActive && game.category == new)
        #expect(otherSession.isActive == !interrupts)
        #expect(otherEvents.interruptions == (interrupts ? [.init(type: .began, reason: .default)] : []))
    }

    @Test("Every category during a phone call: a change throws insufficientPriority or is allowed, never both",
          arguments: Category.allCases)
    func changeDuringPhoneCall(new: Category) throws {
        let (system, _) = makeSystem()
        let phone = try Self.makeActive(.playAndRecord, name: "phone", in: system, priority: .phoneCall)
        let game = try Self.makeActiveGame(in: system)

        if Self.refusedDuringPhoneCall.contains(new) {
            #expect(throws: AudioSessionError.insufficientPriority(heldBy: "phone")) { try game.setCategory(new) }
            #expect(game.category == .ambient)
        } else {
            try game.setCategory(new)
            #expect(game.category == new)
        }
        #expect(game.isActive && phone.isActive)
    }

    @Test("Every category in the background: a change that would interrupt throws cannotInterruptOthers",
          arguments: Category.allCases)
    func changeInBackground(new: Category) throws {
        let (system, _) = makeSystem()
        let music = try Self.makeActive(.playback, name: "music", in: system)
        let game = try Self.makeActiveGame(in: system, inBackground: true)

        if Self.nonMixable.contains(new) {
            #expect(throws: AudioSessionError.cannotInterruptOthers) { try game.setCategory(new) }
            #expect(game.category == .ambient)
        } else {
            try game.setCategory(new)
            #expect(game.category == new)
        }
        #expect(game.isActive && music.isActive)
    }

    @Test("Dropping mixWithOthers while active interrupts the music; adding duckOthers ducks it")
    func optionChanges() throws {
        let (system, _) = makeSystem()
        let music = try Self.makeActive(.playback, name: "music", in: system)
        let navigation = system.makeSession(name: "navigation")
        try navigation.setCategory(.playback, options: .mixWithOthers)
        try navigation.setActive(true)

        try navigation.setCategory(.playback, options: .duckOthers)
        #expect(music.isActive && music.isDucked)

        try navigation.setCategory(.playback)
        #expect(!music.isActive)
    }

    @Test("A mode change is arbitrated too: voiceChat without a voice output throws cannotStartPlaying, nothing changes")
    func modeChangeWithoutVoiceRoute() throws {
        // A desktop whose only output is an A2DP speaker: fine for playAndRecord with A2DP,
        // not for voiceChat, which uses voice routes only.
        let (system, _) = makeSystem(devices: [.builtIn(hasReceiver: false, hasSpeaker: false), .bluetoothA2DP()])
        let session = try makeActiveCall(in: system, options: .allowBluetoothA2DP)
        let events = NotificationRecorder(session)
        #expect(session.currentRoute.ports == Ports(in: [.builtInMic], out: [.bluetoothA2DP]))

        #expect(throws: AudioSessionError.cannotStartPlaying) { try session.setMode(.voiceChat) }

        #expect(session.mode == .default && session.isActive)
        #expect(events.all.isEmpty)
    }

    @Test("A refused change keeps the speaker override; an accepted one clears it")
    func refusedChangeKeepsOverride() throws {
        let (system, _) = makeSystem()
        let music = try Self.makeActive(.playback, name: "music", in: system)
        let call = system.makeSession(name: "call")
        try call.setCategory(.playAndRecord, options: .mixWithOthers)
        call.isInBackground = true
        try call.setActive(true)
        try call.overrideOutputAudioPort(.speaker)

        #expect(throws: AudioSessionError.cannotInterruptOthers) { try call.setCategory(.playAndRecord) }
        #expect(call.outputPortOverride == .speaker)
        #expect(music.isActive)

        try call.setCategory(.playAndRecord, options: [.mixWithOthers, .defaultToSpeaker])
        #expect(call.outputPortOverride == .none)
    }

    @Test("Setting the same configuration again changes nothing and posts nothing")
    func sameConfigurationIsNoChange() throws {
        let (system, _) = makeSystem()
        let music = try Self.makeActive(.playback, name: "music", in: system)
        let events = NotificationRecorder(music)
        try music.setCategory(.playback)
        #expect(music.isActive)
        #expect(events.all.isEmpty)
    }
}
