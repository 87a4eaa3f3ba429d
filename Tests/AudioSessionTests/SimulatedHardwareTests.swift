import AudioSession
import Testing

/// The simulated hardware used by tests and demos, and the system's use of the hardware protocol.
@Suite("Simulated hardware")
struct SimulatedHardwareTests {
    @Test("A preferred rate the device cannot do yields the nearest supported rate",
          arguments: [(44_100, 48_000), (22_050, 24_000), (11_025, 8_000), (96_000, 48_000), (16_000, 16_000)]
              as [(Double, Double)])
    func nearestRate(preferred: Double, actual: Double) {
        let hardware = SimulatedAudioHardware(supportedSampleRates: [8_000, 16_000, 24_000, 48_000])
        let values = hardware.negotiate(.init(sampleRate: preferred), for: .init(outputs: AudioDevice.builtIn().outputs))
        #expect(values.sampleRate == actual)
    }

    @Test("Buffer durations become a power-of-two number of frames between 64 and 4096")
    func bufferFrames() {
        let hardware = SimulatedAudioHardware()
        let route = AudioSessionRouteDescription(outputs: AudioDevice.builtIn().outputs)
        for (duration, frames) in [(0.0001, 64.0), (0.005, 256), (0.02, 1024), (10, 4096)] {
            let values = hardware.negotiate(.init(sampleRate: 48_000, ioBufferDuration: duration), for: route)
            #expect(values.ioBufferDuration * 48_000 == frames, "\(duration) s")
        }
    }

    @Test("Devices are kept in connection order; reconnecting moves a device to the end")
    func connectionOrder() {
        let hardware = SimulatedAudioHardware()
        hardware.connect(.wiredHeadset())
        hardware.connect(.usbAudio())
        hardware.connect(.wiredHeadset())
        #expect(hardware.devices.map(\.id) == ["builtIn", "usb", "wired-headset"])
        hardware.disconnect(deviceID: "usb")
        #expect(hardware.devices.map(\.id) == ["builtIn", "wired-headset"])
    }

    @Test("Events reach the system; repeated or empty changes send nothing")
    func eventsReachSystem() throws {
        let (system, hardware) = makeSystem()
        let call = try makeActiveCall(in: system)
        let events = NotificationRecorder(call)
        hardware.disconnect(deviceID: "not-connected")
        hardware.setProximity(.far)  // already far
        #expect(events.all.isEmpty)
        hardware.connect(.wiredHeadset())
        #expect(system.devices.map(\.id) == ["builtIn", "wired-headset"])
        hardware.setProximity(.near)
        #expect(system.proximity == .near)
    }

    @Test("The hardware records every applied route, and a Bluetooth headset offers HFP and A2DP")
    func recordsAppliedRoutes() throws {
        let (system, hardware) = makeSystem()
        #expect(hardware.appliedRoutes.isEmpty, "nothing is applied before a session activates")
        let call = try makeActiveCall(in: system, mode: .voiceChat)
        hardware.connect(.bluetoothHeadset())
        #expect(hardware.appliedRoutes.map(\.ports) == [
            Ports(in: [.builtInMic], out: [.builtInReceiver]),
            Ports(in: [.bluetoothHFP], out: [.bluetoothHFP]),
        ])
        #expect(AudioDevice.bluetoothHeadset().outputs.map(\.portType) == [.bluetoothHFP, .bluetoothA2DP])
        try call.setActive(false)
    }

    @Test("Replacing the hardware re-reads its devices and reconfigures it")
    func replaceHardware() throws {
        let (system, oldHardware) = makeSystem()
        let call = try makeActiveCall(in: system)
        let events = NotificationRecorder(call)
        let newHardware = SimulatedAudioHardware(devices: [.builtIn(), .wiredHeadset()])

        system.replaceHardware(newHardware)

        #expect(system.hardware === newHardware)
        #expect(call.currentRoute.ports == Ports(in: [.headsetMic], out: [.headphones]))
        #expect(newHardware.lastAppliedRoute == call.currentRoute)
        #expect(events.routeChanges.only?.reason == .routeConfigurationChange)
        // The old hardware no longer reaches the system; the new one does.
        oldHardware.connect(.usbAudio())
        #expect(events.routeChanges.count == 1)
        newHardware.disconnect(.wiredHeadset())
        #expect(events.routeChanges.last?.reason == .oldDeviceUnavailable)
    }

    @Test("Replacement hardware is configured even when the route stays the same, and left alone with no session active")
    func replaceHardwareSameRoute() throws {
        let (system, _) = makeSystem()
        let call = try makeActiveCall(in: system)
        let same = SimulatedAudioHardware()
        system.replaceHardware(same)
        #expect(same.appliedRoutes == [call.currentRoute])
        #expect(same.negotiatedPreferences.count == 2, "the startup reading, then the route owner's")

        try call.setActive(false)
        let idle = SimulatedAudioHardware()
        system.replaceHardware(idle)
        #expect(idle.appliedRoutes.isEmpty)
    }
}
