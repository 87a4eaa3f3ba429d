import AudioSession
import Testing

/// Spec section 2: modes choose microphones. The chat modes pick the microphone for speech,
/// videoRecording the one facing the main camera's way, measurement the primary one.
@Suite("Modes choose microphones")
struct ModeMicrophoneTests {
    typealias Mode = AudioSession.Mode

    /// A laptop-like device whose microphones are separate capture PCMs: an array (primary),
    /// a voice microphone, and one facing back.
    static let severalMics = AudioDevice(
        id: "builtIn", name: "Built-In",
        inputs: [
            AudioSessionPortDescription(portType: .builtInMic, portName: "Array", uid: "mic-array", orientation: .front),
            AudioSessionPortDescription(portType: .builtInMic, portName: "Voice", uid: "mic-voice", isForVoice: true),
            AudioSessionPortDescription(portType: .builtInMic, portName: "Rear", uid: "mic-rear", orientation: .back),
        ],
        outputs: [AudioSessionPortDescription(portType: .builtInSpeaker, portName: "Speaker", uid: "speaker")])

    @Test("With several microphone ports, each mode picks its own", arguments: [
        (Mode.default, "mic-array"), (.voiceChat, "mic-voice"), (.videoChat, "mic-voice"), (.gameChat, "mic-voice"),
        (.videoRecording, "mic-rear"), (.measurement, "mic-array"),
    ])
    func portChoice(mode: Mode, uid: String) {
        let route = RoutePolicy.route(for: .init(category: .playAndRecord, mode: mode, devices: [Self.severalMics]))
        #expect(route.inputs.map(\.uid) == [uid])
    }

    @Test("With one microphone port, each mode picks its data source", arguments: [
        (Mode.default, "Bottom"), (.voiceChat, "Bottom"), (.videoRecording, "Back"), (.measurement, "Bottom"),
    ])
    func dataSourceChoice(mode: Mode, source: String) {
        let route = RoutePolicy.route(for: .init(category: .playAndRecord, mode: mode, devices: [.builtIn()]))
        #expect(route.inputs.first?.selectedDataSource?.dataSourceName == source)
    }

    @Test("The app's data source wins over the mode's choice, except in measurement")
    func preferenceWinsOverMode() throws {
        let (system, _) = makeSystem()
        let session = system.makeSession(name: "camera")
        try session.setCategory(.record, mode: .videoRecording)
        let mic = try #require(session.availableInputs.first)
        let front = try #require(mic.dataSources.first { $0.orientation == .front })
        #expect(session.inputDataSource?.orientation == .back)

        try session.setPreferredDataSource(front, for: mic)
        #expect(session.inputDataSource?.orientation == .front)

        try session.setCategory(.record, mode: .measurement)
        try session.setPreferredDataSource(front, for: mic)
        #expect(session.inputDataSource?.dataSourceName == "Bottom", "the primary microphone")
    }

    @Test("A preferred input port wins over the mode's choice")
    func preferredPortWins() throws {
        let (system, _) = makeSystem(devices: [Self.severalMics])
        let call = try makeActiveCall(in: system, mode: .voiceChat)
        #expect(call.currentRoute.inputs.map(\.uid) == ["mic-voice"])
        let rear = try #require(call.availableInputs.first { $0.uid == "mic-rear" })
        try call.setPreferredInput(rear)
        #expect(call.currentRoute.inputs.map(\.uid) == ["mic-rear"])
    }
}
