import AudioSession
import Testing

/// Spec section 8: the VoIP session lifecycle, end to end, with a music player in the background.
@Suite("VoIP call lifecycle")
struct VoIPLifecycleTests {
    @Test("No call: inactive; call: playAndRecord/voiceChat active with I/O; hang-up: I/O stopped, music resumes")
    func fullCall() throws {
        let (system, hardware) = makeSystem()
        let music = system.makeSession(name: "music")
        try music.setCategory(.playback)
        try music.setActive(true)
        let musicEvents = NotificationRecorder(music)

        let softphone = system.makeSession(name: "softphone")
        #expect(!softphone.isActive, "waiting for calls holds no audio")

        // Call starts.
        try softphone.setCategory(.playAndRecord, mode: .voiceChat, options: [.allowBluetooth])
        try softphone.setActive(true)
        let io = try softphone.beginIO(named: "voice-processing") {}
        #expect(softphone.mode.usesVoiceProcessing)
        #expect(softphone.currentRoute.outputs.first?.portType == .builtInReceiver)
        #expect(musicEvents.interruptions.map(\.type) == [.began])

        // A route change during the call: the call keeps running.
        hardware.connect(.bluetoothHeadset())
        #expect(softphone.isActive)
        #expect(io.isRunning)
        #expect(softphone.currentRoute.outputs.first?.portType == .bluetoothHFP)
        hardware.disconnect(.bluetoothHeadset())
        #expect(softphone.isActive)

        // Call ends: stop I/O, then deactivate with notifyOthersOnDeactivation.
        io.end()
        try softphone.setActive(false, options: .notifyOthersOnDeactivation)
        #expect(!softphone.isActive)
        #expect(musicEvents.interruptions.last == .init(type: .ended, options: .shouldResume))
        #expect(hardware.lastAppliedRoute == .empty)
    }
}
