public import AudioSession

// The audio devices calls can use and the app's choice among them, on the controller's
// session: the list is the session system's devices (names a person recognises, USB and
// Bluetooth ones coming and going as they are plugged), the choice its preferred input and
// speaker override, so the session's routing rules (last in wins unless chosen) stay the rule.

extension CallController {
    /// The audio devices present now, oldest connection first: built in, headsets, USB and
    /// Bluetooth devices, each with its inputs and outputs. Changes come on ``events`` as
    /// ``Event/routeChanged(reason:route:)``.
    public nonisolated var audioDevices: [AudioDevice] { session.system.devices }

    /// Makes `device` the one calls use, the call that has the audio now and the ones after:
    /// its microphone, and its earpiece or loudspeaker with it (a built-in device: its
    /// microphone and loudspeaker, over a headset). Nil gives the choice back to the session
    /// (the newest device).
    ///
    /// - Throws: ``CallError/audioSession(_:)`` for a device that is not present or has no
    ///   microphone to choose it by (a DAC: unplugging the others is the way); nothing changes then.
    public nonisolated func selectAudioDevice(_ device: AudioDevice?) throws(CallError) {
        guard let device else {
            do {
                try session.overrideOutputAudioPort(.none)
                try session.setPreferredInput(nil)
            } catch { throw .audioSession("\(error)") }
            return
        }
        guard let present = audioDevices.first(where: { $0.id == device.id }) else {
            throw .audioSession("\(device) is not present")
        }
        guard let input = present.inputs.first else { throw .audioSession("\(device) has no microphone to choose it by") }
        do {
            try session.setPreferredInput(input)
            try session.overrideOutputAudioPort(present.isBuiltIn && !present.outputs.isEmpty ? .speaker : .none)
        } catch { throw .audioSession("\(error)") }
    }
}
