import AudioSession
import Testing
import TestSupport
@testable import VoiceCall

/// The device list and the app's choice among its devices, during a call: a USB headset plugged
/// in takes the call (last in wins), choosing the built-in device brings the call back to it,
/// and giving the choice back returns it to the headset (simulated devices: no sound card here).
@Suite("Audio device list and selection")
struct AudioDeviceSelectionTests {
    @Test("The list names the devices; a chosen device takes the call's audio and nil gives the choice back")
    func chooseADeviceDuringACall() async throws {
        let alice = try Phone("alice"), bob = try Phone("bob")
        let (call, _) = try await alice.call(bob)
        let headset = AudioDevice.usbAudio(id: "usb:Headset", name: "Jabra EVOLVE 20 MS")
        alice.hardware.connect(headset)
        #expect(alice.controller.audioDevices.map(\.name).last == "Jabra EVOLVE 20 MS")
        #expect(alice.session.currentRoute.outputTypes == [.usbAudio])

        let builtIn = try #require(alice.controller.audioDevices.first { $0.isBuiltIn })
        try alice.controller.selectAudioDevice(builtIn)
        #expect(alice.session.currentRoute.inputTypes == [.builtInMic])
        #expect(alice.session.currentRoute.outputTypes == [.builtInSpeaker])
        try alice.controller.selectAudioDevice(headset)
        #expect(alice.session.currentRoute.outputTypes == [.usbAudio] && alice.session.currentRoute.inputTypes == [.usbAudio])
        try alice.controller.selectAudioDevice(builtIn)
        try alice.controller.selectAudioDevice(nil)
        #expect(alice.session.currentRoute.outputTypes == [.usbAudio])
        #expect(call.state == .active)

        // A device that is gone, or one without a microphone, is refused and changes nothing.
        let dac = AudioDevice.usbAudio(id: "usb:DAC", name: "DAC", hasInput: false)
        #expect(throws: CallError.self) { try alice.controller.selectAudioDevice(AudioDevice.wiredHeadset()) }
        alice.hardware.connect(dac)
        let route = alice.session.currentRoute
        #expect(throws: CallError.self) { try alice.controller.selectAudioDevice(dac) }
        #expect(alice.session.currentRoute == route)
        await call.hangUp()
        await alice.shutdown(); await bob.shutdown()
    }
}
