import AudioSession
import Testing

/// Spec section 3: which category accepts which option, written out here rather than derived
/// from the implementation, so a change to either side shows up.
@Suite("Category x option table")
struct CategoryOptionTableTests {
    typealias Category = AudioSession.Category
    typealias Options = AudioSession.CategoryOptions

    /// Columns in this order.
    static let columns: [Options] = [
        .mixWithOthers, .duckOthers, .allowBluetooth, .allowBluetoothA2DP, .allowAirPlay,
        .defaultToSpeaker, .interruptSpokenAudioAndMixWithOthers, .overrideMutedMicrophoneInterruption,
    ]

    static let accepted: [Category: [Bool]] = [
        //               mixWith duck   BT(HFP) A2DP   AirPlay toSpkr interruptSpoken mutedMic
        .ambient:        [true,  true,  false, true,  false, false, false, false],
        .soloAmbient:    [false, false, false, true,  false, false, false, false],
        .playback:       [true,  true,  false, true,  false, false, true,  false],
        .record:         [false, false, true,  false, false, false, false, false],
        .playAndRecord:  [true,  true,  true,  true,  true,  true,  true,  true],
        .multiRoute:     [true,  true,  false, false, false, false, true,  true],
        .audioProcessing: [false, false, false, false, false, false, false, false],
    ]

    static func isAccepted(_ option: Options, by category: Category) -> Bool {
        accepted[category]![columns.firstIndex(of: option)!]
    }

    @Test("The table covers every category and every option")
    func tableIsComplete() {
        #expect(Set(Self.accepted.keys) == Set(Category.allCases))
        #expect(Self.columns == Options.allOptions)
    }

    @Test("setCategory accepts exactly the options of the spec's table", arguments: Category.allCases, Options.allOptions)
    func categoryAcceptsOptionPerTable(category: Category, option: Options) throws {
        let (system, _) = makeSystem()
        let session = system.makeSession(name: "app")
        // A distinctive previous configuration, so "unchanged" is meaningful.
        try session.setCategory(.playAndRecord, mode: .voiceChat, options: [.allowAirPlay])
        let before = session.configuration

        if Self.isAccepted(option, by: category) {
            try session.setCategory(category, options: option)
            #expect(session.category == category)
            #expect(session.categoryOptions.contains(option))
            #expect(session.configuration.requestedOptions == option)
        } else {
            #expect(throws: AudioSessionError.categoryOptionNotAccepted(option: option, category: category)) {
                try session.setCategory(category, options: option)
            }
            #expect(session.configuration == before, "an error leaves the session unchanged")
        }
    }

    @Test("The error names the option and the category and carries Apple's badParam code")
    func errorNamesOptionAndCategory() {
        let error = AudioSessionError.categoryOptionNotAccepted(option: .defaultToSpeaker, category: .playback)
        #expect(error.code == .badParam)
        #expect(error.code.rawValue == -50)
        #expect(error.description.contains("'defaultToSpeaker'"))
        #expect(error.description.contains("'playback'"))
        #expect(error.description.contains("'playAndRecord'"), "it says which category would accept it")
    }

    @Test("With several refused options the first one (in declaration order) is named")
    func firstRefusedOptionIsNamed() {
        let (system, _) = makeSystem()
        let session = system.makeSession(name: "app")
        #expect(throws: AudioSessionError.categoryOptionNotAccepted(option: .allowBluetooth, category: .playback)) {
            try session.setCategory(.playback, options: [.defaultToSpeaker, .allowBluetooth, .mixWithOthers])
        }
        #expect(session.configuration == .initial)
    }

    @Test("A refused option on an active session changes nothing and posts nothing")
    func refusedOptionWhileActivePostsNothing() throws {
        let (system, _) = makeSystem()
        let session = try makeActiveCall(in: system, options: [.defaultToSpeaker])
        let recorder = NotificationRecorder(session)
        let route = session.currentRoute

        #expect(throws: AudioSessionError.self) { try session.setCategory(.ambient, options: .defaultToSpeaker) }

        #expect(session.category == .playAndRecord)
        #expect(session.categoryOptions == [.defaultToSpeaker])
        #expect(session.isActive)
        #expect(session.currentRoute == route)
        #expect(recorder.all.isEmpty)
    }
}
