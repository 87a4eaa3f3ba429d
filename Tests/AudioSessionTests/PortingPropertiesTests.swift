import AudioSession
import Testing

/// Properties a port of an iOS app reaches for: output volume, input gain, the available
/// categories and modes, wasSuspended, and input availability changes.
@Suite("Properties for porting")
struct PortingPropertiesTests {
    @Test("outputVolume follows the hardware's volume control, and every session is told")
    func outputVolume() throws {
        let (system, hardware) = makeSystem()
        let call = try makeActiveCall(in: system)
        let idle = system.makeSession(name: "idle")
        let callEvents = NotificationRecorder(call)
        let idleEvents = NotificationRecorder(idle)
        #expect(call.outputVolume == 1)

        hardware.setOutputVolume(0.25)

        #expect(call.outputVolume == 0.25 && idle.outputVolume == 0.25)
        #expect(callEvents.all == [.outputVolumeChanged(0.25)])
        #expect(idleEvents.all == [.outputVolumeChanged(0.25)], "inactive sessions observe the volume too")
    }

    @Test("setInputGain reaches the hardware; out-of-range values throw and change nothing",
          arguments: [-0.1, 1.5, .nan] as [Float])
    func inputGain(invalid: Float) throws {
        let (system, hardware) = makeSystem()
        let call = try makeActiveCall(in: system)
        #expect(call.isInputGainSettable)

        try call.setInputGain(0.5)
        #expect(call.inputGain == 0.5 && hardware.inputGain == 0.5)

        #expect(throws: AudioSessionError.self) { try call.setInputGain(invalid) }
        #expect(call.inputGain == 0.5 && hardware.inputGain == 0.5)
    }

    @Test("Hardware without a gain control: isInputGainSettable is false and setInputGain throws")
    func inputGainNotSettable() throws {
        let hardware = SimulatedAudioHardware(isInputGainSettable: false)
        let system = AudioSystem(hardware: hardware)
        let call = system.makeSession(name: "call")
        #expect(!call.isInputGainSettable)
        #expect(throws: AudioSessionError.inputGainNotSettable) { try call.setInputGain(0.5) }
        #expect(call.inputGain == 1)
        #expect(AudioSessionError.inputGainNotSettable.code == .badParam)
    }

    @Test("availableCategories lists every category; availableModes the current category's modes")
    func availableCategoriesAndModes() throws {
        let (system, _) = makeSystem()
        let session = system.makeSession(name: "app")
        #expect(session.availableCategories == AudioSession.Category.allCases)
        #expect(session.availableModes == [.default])
        try session.setCategory(.record)
        #expect(session.availableModes == [.default, .videoRecording, .measurement])
    }

    @Test("An interruption that begins while the app is suspended carries wasSuspended")
    func wasSuspended() throws {
        let (system, _) = makeSystem()
        let music = system.makeSession(name: "music")
        try music.setCategory(.playback)
        try music.setActive(true)
        music.isSuspended = true
        let events = NotificationRecorder(music)

        let call = try makeActiveCall(in: system)

        #expect(events.interruptions == [.init(type: .began, reason: .default, wasSuspended: true)])
        #expect(call.isActive)
    }

    @Test("Input availability is the hardware's, notified to every session when a microphone comes and goes, whatever the category")
    func inputAvailability() throws {
        let (system, hardware) = makeSystem(devices: [.builtIn(hasMic: false)])
        let recorder = system.makeSession(name: "recorder")
        try recorder.setCategory(.record)
        let player = system.makeSession(name: "player")
        try player.setCategory(.playback)
        let events = NotificationRecorder(recorder)
        let playerEvents = NotificationRecorder(player)
        #expect(!recorder.isInputAvailable)

        hardware.connect(.wiredHeadset())
        #expect(recorder.isInputAvailable)
        hardware.disconnect(deviceID: "wired-headset")
        try recorder.setCategory(.playback)
        hardware.connect(.wiredHeadset())

        let expected: [AudioSessionNotification] = [.inputAvailabilityChanged(true), .inputAvailabilityChanged(false), .inputAvailabilityChanged(true)]
        #expect(events.all == expected)
        #expect(playerEvents.all == expected)
    }

    @Test("The common iOS guard holds: isInputAvailable under soloAmbient and playback, then playAndRecord records",
          arguments: [AudioSession.Category.soloAmbient, .playback, .ambient])
    func inputAvailableBeforeRecording(category: AudioSession.Category) throws {
        let (system, _) = makeSystem()
        let session = system.makeSession(name: "app")
        try session.setCategory(category)
        #expect(session.isInputAvailable)
        #expect(session.availableInputs.isEmpty, "availableInputs stays scoped to the category")
        try session.setCategory(.playAndRecord)
        #expect(session.availableInputs.map(\.portType) == [.builtInMic])
    }
}
