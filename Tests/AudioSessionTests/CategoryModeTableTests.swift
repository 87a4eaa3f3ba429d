@testable import AudioSession
import Testing

/// Spec section 2: which category supports which mode. An unsupported mode is not an error:
/// the session reads back `default` and logs a warning.
@Suite("Category x mode table")
struct CategoryModeTableTests {
    typealias Category = AudioSession.Category
    typealias Mode = AudioSession.Mode

    static let columns: [Mode] = [
        .default, .voiceChat, .videoChat, .gameChat, .videoRecording, .measurement, .moviePlayback, .spokenAudio,
        .voicePrompt,
    ]

    static let supported: [Category: [Bool]] = [
        //                default voice  video  game   vidRec measure movie  spoken prompt
        .ambient:         [true, false, false, false, false, false, false, false, false],
        .soloAmbient:     [true, false, false, false, false, false, false, false, false],
        .playback:        [true, false, false, false, false, true,  true,  true,  true],
        .record:          [true, false, false, false, true,  true,  false, false, false],
        .playAndRecord:   [true, true,  true,  true,  true,  true,  false, false, false],
        .multiRoute:      [true, false, false, false, false, false, false, false, false],
        .audioProcessing: [true, false, false, false, false, false, false, false, false],
    ]

    static func isSupported(_ mode: Mode, by category: Category) -> Bool {
        supported[category]![columns.firstIndex(of: mode)!]
    }

    /// A system whose warnings are collected (the warning sink sees what the logger logs).
    static func makeSystemCollectingWarnings() -> (AudioSystem, MessageLog) {
        let warnings = MessageLog()
        let system = AudioSystem(
            hardware: SimulatedAudioHardware(), recordPermissionPolicy: .alwaysGrant,
            warningSink: { warnings.append($0) })
        return (system, warnings)
    }

    @Test("The table covers every category and every mode")
    func tableIsComplete() {
        #expect(Set(Self.supported.keys) == Set(Category.allCases))
        #expect(Self.columns == Mode.allCases)
    }

    @Test("setCategory with any mode never throws; an unsupported one reads back as default with a warning",
          arguments: Category.allCases, Mode.allCases)
    func modeFallsBackVisibly(category: Category, mode: Mode) throws {
        let (system, warnings) = Self.makeSystemCollectingWarnings()
        let session = system.makeSession(name: "app")

        try session.setCategory(category, mode: mode)

        #expect(session.category == category)
        #expect(session.requestedMode == mode)
        let logged = warnings.messages
        if Self.isSupported(mode, by: category) {
            #expect(session.mode == mode)
            #expect(!session.configuration.modeFellBack)
            #expect(logged.isEmpty)
        } else {
            #expect(session.mode == .default)
            #expect(session.configuration.modeFellBack)
            #expect(logged.count == 1)
            #expect(logged.first?.contains("'\(mode)'") == true)
            #expect(logged.first?.contains("'\(category)'") == true)
        }
    }

    @Test("A fallen-back mode implies nothing: voiceChat on playback does not add allowBluetooth")
    func fallenBackModeImpliesNoOptions() throws {
        let (system, _) = makeSystem()
        let session = system.makeSession(name: "app")
        try session.setCategory(.record, mode: .videoChat)
        #expect(session.mode == .default)
        #expect(session.categoryOptions == [])
    }

    @Test("setMode keeps the category and options and falls back the same way")
    func setModeFallsBack() throws {
        let (system, warnings) = Self.makeSystemCollectingWarnings()
        let session = system.makeSession(name: "app")
        try session.setCategory(.playback, options: [.mixWithOthers])

        try session.setMode(.spokenAudio)
        #expect(session.mode == .spokenAudio)
        #expect(session.category == .playback)
        #expect(session.categoryOptions == [.mixWithOthers])

        try session.setMode(.voiceChat)
        #expect(session.mode == .default)
        #expect(session.requestedMode == .voiceChat)
        #expect(warnings.messages.count == 1)
    }

    @Test("On an active session, a mode the category does not support posts no route change; a supported one that changes the category's behaviour does")
    func unsupportedModePostsNothing() throws {
        let (system, _) = makeSystem()
        let session = system.makeSession(name: "app")
        try session.setCategory(.playback)
        try session.setActive(true)
        let recorder = NotificationRecorder(session)

        try session.setMode(.voiceChat)
        #expect(recorder.routeChanges.isEmpty)
        try session.setMode(.spokenAudio)
        #expect(recorder.routeChanges.map(\.reason) == [.categoryChange])
    }
}

/// Spec section 9: common mistakes are loud (logged), not silent.
@Suite("Common mistakes are logged")
struct CommonMistakeWarningTests {
    @Test("Deactivating without notifyOthersOnDeactivation after interrupting someone logs a warning naming them")
    func forgettingNotifyOthersIsLogged() throws {
        let (system, warnings) = CategoryModeTableTests.makeSystemCollectingWarnings()
        let music = system.makeSession(name: "music")
        try music.setCategory(.playback)
        try music.setActive(true)
        let call = try makeActiveCall(in: system, mode: .voiceChat)

        try call.setActive(false)

        #expect(warnings.messages.count == 1)
        #expect(warnings.messages.first?.contains("notifyOthersOnDeactivation") == true)
        #expect(warnings.messages.first?.contains("'music'") == true)
    }

    @Test("With notifyOthersOnDeactivation, or with nobody interrupted, nothing is logged")
    func correctDeactivationIsQuiet() throws {
        let (system, warnings) = CategoryModeTableTests.makeSystemCollectingWarnings()
        let music = system.makeSession(name: "music")
        try music.setCategory(.playback)
        try music.setActive(true)
        let call = try makeActiveCall(in: system, mode: .voiceChat)
        try call.setActive(false, options: .notifyOthersOnDeactivation)
        try call.setActive(true)
        try call.setActive(false)
        #expect(warnings.messages.isEmpty)
    }

    @Test("A playAndRecord session outside the chat modes that lands in the receiver logs a warning")
    func receiverOutsideCallIsLogged() throws {
        let (system, warnings) = CategoryModeTableTests.makeSystemCollectingWarnings()
        _ = try makeActiveCall(in: system, mode: .default, name: "recorder-app")
        #expect(warnings.messages.count == 1)
        #expect(warnings.messages.first?.contains("defaultToSpeaker") == true)

        // A call in voiceChat mode belongs in the receiver: no warning.
        _ = try makeActiveCall(in: system, mode: .voiceChat)
        #expect(warnings.messages.count == 1)
    }
}
