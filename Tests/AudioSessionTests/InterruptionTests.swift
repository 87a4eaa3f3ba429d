import AudioSession
import Testing

/// Spec sections 4 and 5: activation arbitrates between sessions.
@Suite("Interruptions and activation")
struct InterruptionTests {
    static func makeMusic(in system: AudioSystem, options: AudioSession.CategoryOptions = []) throws -> AudioSession {
        let music = system.makeSession(name: "music")
        try music.setCategory(.playback, options: options)
        try music.setActive(true)
        return music
    }

    static func makePhone(in system: AudioSystem) throws -> AudioSession {
        let phone = system.makeSession(name: "phone", priority: .phoneCall)
        try phone.setCategory(.playAndRecord, mode: .voiceChat)
        return phone
    }

    @Test("A call interrupts the music player; ending it with notifyOthersOnDeactivation lets the music resume")
    func callInterruptsMusicAndLetsItResume() throws {
        let (system, _) = makeSystem()
        let music = try Self.makeMusic(in: system)
        let musicEvents = NotificationRecorder(music)

        let call = try makeActiveCall(in: system, mode: .voiceChat)
        #expect(!music.isActive, "on began the session is already inactive")
        #expect(musicEvents.interruptions == [.init(type: .began, reason: .default)])

        try call.setActive(false, options: .notifyOthersOnDeactivation)
        #expect(musicEvents.interruptions.last == .init(type: .ended, options: .shouldResume))
        #expect(!music.isActive, "nothing restarts by itself")

        try music.setActive(true)
        #expect(music.isActive)
    }

    @Test("Without notifyOthersOnDeactivation the music gets ended without shouldResume")
    func endedWithoutShouldResume() throws {
        let (system, _) = makeSystem()
        let music = try Self.makeMusic(in: system)
        let musicEvents = NotificationRecorder(music)
        let call = try makeActiveCall(in: system)

        try call.setActive(false)

        #expect(musicEvents.interruptions == [
            .init(type: .began, reason: .default),
            .init(type: .ended, options: []),
        ])
    }

    @Test("A phone call interrupts the VoIP call and refuses its reactivation until it ends")
    func phoneAlwaysWins() throws {
        let (system, _) = makeSystem()
        let voip = try makeActiveCall(in: system, mode: .voiceChat, name: "voip")
        let voipEvents = NotificationRecorder(voip)
        let phone = try Self.makePhone(in: system)

        try phone.setActive(true)
        #expect(!voip.isActive)
        #expect(voipEvents.interruptions == [.init(type: .began, reason: .default)])

        #expect(throws: AudioSessionError.insufficientPriority(heldBy: "phone")) { try voip.setActive(true) }
        #expect(AudioSessionError.insufficientPriority(heldBy: "phone").code == .insufficientPriority)
        #expect(!voip.isActive)

        try phone.setActive(false, options: .notifyOthersOnDeactivation)
        #expect(voipEvents.interruptions.last == .init(type: .ended, options: .shouldResume))
        try voip.setActive(true)
        #expect(voip.isActive)
    }

    @Test("During a phone call an output-only session may play, mixable or not, but nothing that records")
    func phoneCallAdmitsOnlyPlayback() throws {
        let (system, _) = makeSystem()
        let phone = try Self.makePhone(in: system)
        try phone.setActive(true)

        let game = system.makeSession(name: "game")
        try game.setCategory(.ambient)
        try game.setActive(true)
        #expect(game.isActive)

        let mixingRecorder = system.makeSession(name: "mixing recorder")
        try mixingRecorder.setCategory(.playAndRecord, options: [.mixWithOthers])
        #expect(throws: AudioSessionError.insufficientPriority(heldBy: "phone")) { try mixingRecorder.setActive(true) }

        let recorder = system.makeSession(name: "recorder")
        try recorder.setCategory(.record)
        #expect(throws: AudioSessionError.insufficientPriority(heldBy: "phone")) { try recorder.setActive(true) }

        // Apple's header (iOS 15): a playback session may activate during a call (SharePlay).
        let music = system.makeSession(name: "music")
        try music.setCategory(.playback)
        try music.setActive(true)
        #expect(music.isActive)
        #expect(phone.isActive, "a lower-priority session never interrupts the phone")
    }

    @Test("The phone interrupts even mixable sessions")
    func phoneInterruptsMixableSessions() throws {
        let (system, _) = makeSystem()
        let game = system.makeSession(name: "game")
        try game.setCategory(.ambient)
        try game.setActive(true)
        let gameEvents = NotificationRecorder(game)

        let phone = try Self.makePhone(in: system)
        try phone.setActive(true)

        #expect(!game.isActive)
        #expect(gameEvents.interruptions == [.init(type: .began, reason: .default)])
        #expect(phone.isActive)
    }

    @Test("A chain: music, then a VoIP call, then the phone; each ending resumes the one before")
    func interruptionChain() throws {
        let (system, _) = makeSystem()
        let music = try Self.makeMusic(in: system)
        let musicEvents = NotificationRecorder(music)
        let voip = try makeActiveCall(in: system, mode: .voiceChat, name: "voip")
        let phone = try Self.makePhone(in: system)
        try phone.setActive(true)

        try phone.setActive(false, options: .notifyOthersOnDeactivation)
        #expect(musicEvents.interruptions.count == 1, "the music waits for the VoIP call, not for the phone")
        try voip.setActive(true)
        try voip.setActive(false, options: .notifyOthersOnDeactivation)
        #expect(musicEvents.interruptions.last == .init(type: .ended, options: .shouldResume))
    }

    @Test("A VoIP call interrupted (on hold) and then hung up still releases the music it interrupted")
    func hangUpWhileOnHoldReleasesMusic() throws {
        let (system, _) = makeSystem()
        let music = try Self.makeMusic(in: system)
        let musicEvents = NotificationRecorder(music)
        let voip = try makeActiveCall(in: system, name: "voip")
        let phone = try Self.makePhone(in: system)
        try phone.setActive(true)

        try voip.setActive(false, options: .notifyOthersOnDeactivation)  // already inactive: hang up while on hold

        #expect(musicEvents.interruptions.last == .init(type: .ended, options: .shouldResume))
    }

    @Test("Mixable sessions do not interrupt and are not interrupted by non-mixable ones",
          arguments: [
              (.ambient, []),
              (.playback, [.mixWithOthers]),
              (.playAndRecord, [.mixWithOthers]),
              (.playback, [.duckOthers]),
              (.multiRoute, [.mixWithOthers]),
          ] as [(AudioSession.Category, AudioSession.CategoryOptions)])
    func mixableSessionsDoNotInterrupt(category: AudioSession.Category, options: AudioSession.CategoryOptions) throws {
        let (system, _) = makeSystem()
        let music = try Self.makeMusic(in: system)
        let musicEvents = NotificationRecorder(music)
        let mixer = system.makeSession(name: "mixer")
        try mixer.setCategory(category, options: options)

        try mixer.setActive(true)
        #expect(music.isActive)
        #expect(musicEvents.interruptions.isEmpty)

        // And a non-mixable session activated later leaves the mixable one playing.
        let call = try makeActiveCall(in: system)
        #expect(call.isActive)
        #expect(mixer.isActive)
        #expect(!music.isActive)
    }

    @Test("Two non-mixable sessions: the newer interrupts the older", arguments: [
        AudioSession.Category.soloAmbient, .playback, .record, .playAndRecord, .multiRoute,
    ])
    func nonMixableCategoriesInterrupt(category: AudioSession.Category) throws {
        let (system, _) = makeSystem()
        let music = try Self.makeMusic(in: system)
        let session = system.makeSession(name: "other")
        try session.setCategory(category)
        try session.setActive(true)
        #expect(!music.isActive)
    }

    @Test("interruptSpokenAudioAndMixWithOthers interrupts a spokenAudio session but mixes with music")
    func interruptSpokenAudio() throws {
        let (system, _) = makeSystem()
        let podcast = system.makeSession(name: "podcast")
        try podcast.setCategory(.playback, mode: .spokenAudio)
        try podcast.setActive(true)
        let podcastEvents = NotificationRecorder(podcast)
        let game = system.makeSession(name: "game")
        try game.setCategory(.ambient)
        try game.setActive(true)

        let navigation = system.makeSession(name: "navigation")
        try navigation.setCategory(.playback, mode: .voicePrompt, options: [.interruptSpokenAudioAndMixWithOthers])
        try navigation.setActive(true)

        #expect(!podcast.isActive, "spoken audio is paused, not ducked")
        #expect(podcastEvents.interruptions == [.init(type: .began, reason: .default)])
        #expect(game.isActive)

        try navigation.setActive(false, options: .notifyOthersOnDeactivation)
        #expect(podcastEvents.interruptions.last == .init(type: .ended, options: .shouldResume))
    }

    @Test("A non-mixable activation in the background that would interrupt others fails with cannotInterruptOthers")
    func backgroundActivationCannotInterrupt() throws {
        let (system, _) = makeSystem()
        let music = try Self.makeMusic(in: system)
        let app = system.makeSession(name: "app")
        try app.setCategory(.playback)
        app.isInBackground = true

        #expect(throws: AudioSessionError.cannotInterruptOthers) { try app.setActive(true) }
        #expect(music.isActive)

        // Mixing in from the background is fine, and so is a background activation with nobody to interrupt.
        try app.setCategory(.playback, options: .mixWithOthers)
        try app.setActive(true)
        try app.setActive(false)
        try music.setActive(false)
        try app.setCategory(.playback)
        try app.setActive(true)
        #expect(app.isActive)
    }

    @Test("Activating an active session and deactivating an inactive one are harmless")
    func idempotentActivation() throws {
        let (system, _) = makeSystem()
        let session = system.makeSession(name: "app")
        let events = NotificationRecorder(session)
        try session.setActive(false)
        try session.setActive(true)
        try session.setActive(true)
        #expect(session.isActive)
        #expect(events.all.isEmpty)
    }

    @Test("The built-in microphone muted by hardware interrupts a session recording from it (reason builtInMicMuted)")
    func builtInMicMutedInterrupts() throws {
        let (system, hardware) = makeSystem()
        let call = try makeActiveCall(in: system)
        let events = NotificationRecorder(call)
        let music = try makeMusicThatMixes(in: system)

        hardware.setBuiltInMicMuted(true)
        #expect(!call.isActive)
        #expect(music.isActive, "a session that does not record is not affected")
        #expect(events.interruptions == [.init(type: .began, reason: .builtInMicMuted)])
        #expect(call.capturesSilence)

        hardware.setBuiltInMicMuted(false)
        #expect(events.interruptions.last == .init(type: .ended, options: .shouldResume))
        #expect(!call.capturesSilence)
    }

    func makeMusicThatMixes(in system: AudioSystem) throws -> AudioSession {
        try Self.makeMusic(in: system, options: [.mixWithOthers])
    }

    @Test("Losing the only route interrupts with routeDisconnected after a noSuitableRouteForCategory route change")
    func routeDisconnected() throws {
        // A desktop with no built-in audio: a USB headset is the only device.
        let (system, hardware) = makeSystem(devices: [.usbAudio()])
        let call = try makeActiveCall(in: system)
        let events = NotificationRecorder(call)

        hardware.disconnect(deviceID: "usb")

        #expect(!call.isActive)
        #expect(events.all.count == 3, "a route change, an interruption, and the input going away")
        #expect(events.all.last == .inputAvailabilityChanged(false))
        let change = try #require(events.routeChanges.only)
        #expect(change.reason == .noSuitableRouteForCategory)
        #expect(change.previousRoute.ports == Ports(in: [.usbAudio], out: [.usbAudio]))
        #expect(change.currentRoute.isEmpty)
        #expect(events.interruptions == [.init(type: .began, reason: .routeDisconnected)])
        #expect(throws: AudioSessionError.cannotStartPlaying) { try call.setActive(true) }

        hardware.connect(.usbAudio())
        #expect(events.interruptions.last == .init(type: .ended, options: .shouldResume))
        try call.setActive(true)
    }

    @Test("Releasing an active session deactivates it: those it interrupted get ended without shouldResume")
    func releasingActiveSessionDeactivates() throws {
        let (system, _) = makeSystem()
        let music = try Self.makeMusic(in: system)
        let musicEvents = NotificationRecorder(music)
        var call: AudioSession? = try makeActiveCall(in: system)
        #expect(call?.isActive == true)
        call = nil
        #expect(musicEvents.interruptions.last == .init(type: .ended, options: []))
        try music.setActive(true)
    }

    @Test("Without a microphone a recording category cannot start")
    func cannotStartRecording() throws {
        let (system, _) = makeSystem(devices: [.builtIn(hasMic: false)])
        let recorder = system.makeSession(name: "recorder")
        try recorder.setCategory(.record)
        #expect(throws: AudioSessionError.cannotStartRecording) { try recorder.setActive(true) }
        #expect(AudioSessionError.cannotStartRecording.code == .cannotStartRecording)
    }
}
