import AudioSession
import Testing

@Suite("Configuration")
struct ConfigurationTests {
    typealias Category = AudioSession.Category

    @Test("A new session is soloAmbient, default mode, no options, inactive")
    func newSessionDefaults() {
        let (system, _) = makeSystem()
        let session = system.makeSession(name: "app")
        #expect(session.category == .soloAmbient)
        #expect(session.mode == .default)
        #expect(session.categoryOptions == [])
        #expect(!session.isActive)
        #expect(session.outputPortOverride == .none)
        #expect(session.preferredSampleRate == 0)
    }

    @Test("The shared session lives in the shared system")
    func sharedSessionLivesInSharedSystem() {
        #expect(AudioSession.shared.system === AudioSystem.shared)
        #expect(AudioSession.shared.priority == .normal)
    }

    /// Spec section 1: input, output, mixing and silent-switch columns, written out.
    struct CategoryRow: Sendable, CustomStringConvertible {
        var category: Category
        var mixes: Bool
        var silencedBySwitch: Bool
        var input: Bool
        var output: Bool
        var description: String { category.rawValue }
    }

    static let categoryTable: [CategoryRow] = [
        .init(category: .ambient, mixes: true, silencedBySwitch: true, input: false, output: true),
        .init(category: .soloAmbient, mixes: false, silencedBySwitch: true, input: false, output: true),
        .init(category: .playback, mixes: false, silencedBySwitch: false, input: false, output: true),
        .init(category: .record, mixes: false, silencedBySwitch: false, input: true, output: false),
        .init(category: .playAndRecord, mixes: false, silencedBySwitch: false, input: true, output: true),
        .init(category: .multiRoute, mixes: false, silencedBySwitch: false, input: true, output: true),
        .init(category: .audioProcessing, mixes: false, silencedBySwitch: false, input: false, output: false),
    ]

    @Test("Category properties follow the spec's table", arguments: categoryTable)
    func categoryProperties(row: CategoryRow) {
        #expect(row.category.mixesWithOthersByDefault == row.mixes)
        #expect(row.category.isSilencedBySilentSwitch == row.silencedBySwitch)
        #expect(row.category.hasInput == row.input)
        #expect(row.category.hasOutput == row.output)
    }

    struct ImpliedCase: Sendable, CustomStringConvertible {
        var mode: AudioSession.Mode
        var options: AudioSession.CategoryOptions
        var readBack: AudioSession.CategoryOptions
        var description: String { "\(mode) \(options)" }
    }

    static let impliedCases: [ImpliedCase] = [
        .init(mode: .voiceChat, options: [], readBack: [.allowBluetooth]),
        .init(mode: .videoChat, options: [], readBack: [.allowBluetooth, .defaultToSpeaker]),
        .init(mode: .gameChat, options: [], readBack: [.allowBluetooth, .defaultToSpeaker]),
        .init(mode: .default, options: [.duckOthers], readBack: [.duckOthers, .mixWithOthers]),
        .init(mode: .default, options: [.interruptSpokenAudioAndMixWithOthers],
              readBack: [.interruptSpokenAudioAndMixWithOthers, .mixWithOthers]),
        .init(mode: .voiceChat, options: [.duckOthers], readBack: [.allowBluetooth, .duckOthers, .mixWithOthers]),
        .init(mode: .measurement, options: [], readBack: []),
    ]

    @Test("Implied options are visible when read back", arguments: impliedCases)
    func impliedOptionsAreVisible(testCase: ImpliedCase) throws {
        let (system, _) = makeSystem()
        let session = system.makeSession(name: "app")
        try session.setCategory(.playAndRecord, mode: testCase.mode, options: testCase.options)
        #expect(session.categoryOptions == testCase.readBack)
        #expect(session.configuration.requestedOptions == testCase.options)
    }

    @Test("ambient mixes implicitly, and its options say so; asking for mixWithOthers too is accepted, as iOS code does")
    func ambientShowsImpliedMixWithOthers() throws {
        let (system, _) = makeSystem()
        let session = system.makeSession(name: "game")
        try session.setCategory(.ambient)
        #expect(session.categoryOptions == [.mixWithOthers])
        #expect(session.configuration.requestedOptions == [])
        #expect(session.configuration.isMixable)
        try session.setCategory(.ambient, options: .mixWithOthers)
        #expect(session.categoryOptions == [.mixWithOthers])
        #expect(throws: AudioSessionError.categoryOptionNotAccepted(option: .mixWithOthers, category: .soloAmbient)) {
            try session.setCategory(.soloAmbient, options: .mixWithOthers)
        }
        #expect(session.category == .ambient)
    }

    @Test("setCategory replaces the whole triple: options are not sticky")
    func optionsAreNotSticky() throws {
        let (system, _) = makeSystem()
        let session = system.makeSession(name: "app")
        try session.setCategory(.playAndRecord, mode: .voiceChat, options: [.defaultToSpeaker, .allowAirPlay])
        try session.setCategory(.playAndRecord)
        #expect(session.mode == .default)
        #expect(session.categoryOptions == [])
    }

    @Test("Changing the category while inactive applies at activation, without a notification")
    func categoryChangeWhileInactive() throws {
        let (system, _) = makeSystem()
        let session = system.makeSession(name: "app")
        let recorder = NotificationRecorder(session)
        try session.setCategory(.playAndRecord, options: [.defaultToSpeaker])
        #expect(recorder.all.isEmpty)
        try session.setActive(true)
        #expect(session.currentRoute.ports == Ports(in: [.builtInMic], out: [.builtInSpeaker]))
    }

    @Test("Changing the category while active applies at once with reason categoryChange and the previous route")
    func categoryChangeWhileActive() throws {
        let (system, _) = makeSystem()
        let session = try makeActiveCall(in: system)
        let recorder = NotificationRecorder(session)

        try session.setCategory(.playback)

        #expect(session.isActive)
        #expect(recorder.routeChanges.count == 1)
        let change = try #require(recorder.routeChanges.first)
        #expect(change.reason == .categoryChange)
        #expect(change.previousRoute.ports == Ports(in: [.builtInMic], out: [.builtInReceiver]))
        #expect(change.currentRoute == session.currentRoute)
        #expect(change.currentRoute.ports == Ports(in: [], out: [.builtInSpeaker]))
    }

    @Test("Mode properties: voice processing in the chat modes, minimal processing in measurement")
    func modeProperties() {
        let voice: [AudioSession.Mode] = [.voiceChat, .videoChat, .gameChat]
        for mode in AudioSession.Mode.allCases {
            #expect(mode.usesVoiceProcessing == voice.contains(mode), "\(mode)")
            #expect(mode.usesMinimalProcessing == (mode == .measurement), "\(mode)")
        }
    }

    @Test("Error codes are Apple's four-character codes")
    func errorCodesMatchApple() {
        #expect(AudioSessionError.Code.insufficientPriority.rawValue == 561_017_449)  // '!pri'
        #expect(AudioSessionError.Code.cannotInterruptOthers.rawValue == 560_557_684)  // '!int'
        #expect(AudioSessionError.Code.isBusy.rawValue == 560_030_580)  // '!act'
        #expect(AudioSessionError.Code.mediaServicesFailed.rawValue == 1_836_282_486)  // 'msrv'
        #expect(AudioSessionError.Code.sessionNotActive.rawValue == 1_768_841_571)  // 'inac'
        #expect(AudioSessionError.overrideRequiresPlayAndRecord(category: .playback).code == .badParam)
    }
}
