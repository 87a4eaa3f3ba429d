import AudioIO
import AudioSession
import Foundation
import Synchronization
import Testing
import TestSupport

@Suite("Proximity sensors")
struct ProximitySensorTests {
    @Test("The IIO reader turns raw values into near and far with hysteresis")
    func iioThresholdAndHysteresis() async throws {
        // The reader's interface is a sysfs file; a folder with that file stands in for the device.
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let raw = dir.file("in_proximity_raw")
        func write(_ v: Int) throws { try "\(v)\n".write(toFile: raw, atomically: true, encoding: .utf8) }
        try write(10)
        let sensor = try IIOProximitySensor(devicePath: dir.path, nearThreshold: 100, hysteresis: 20, interval: .milliseconds(5))
        let seen = Mutex<[AudioSession.Proximity]>([])
        sensor.setHandler { value in seen.withLock { $0.append(value) } }
        #expect(sensor.proximity == .far)
        // The reader polls every 5 ms, but a loaded machine may starve it for longer: wait on the state.
        try write(150)
        #expect(await eventually { sensor.proximity == .near })
        try write(90); try await Task.sleep(for: .milliseconds(60))   // inside the hysteresis band: still near
        #expect(sensor.proximity == .near)
        try write(70)   // below threshold - hysteresis: far
        #expect(await eventually { sensor.proximity == .far })
        #expect(seen.withLock { $0 } == [.near, .far])
    }

    @Test("An IIO device without a proximity channel is a typed error")
    func missingIIODevice() {
        #expect(throws: IOError.self) { _ = try IIOProximitySensor(devicePath: "/nonexistent/iio:device9", nearThreshold: 100) }
    }

    @Test("The simulated sensor reports changes only")
    func simulatedReportsChanges() {
        let sensor = SimulatedProximitySensor()
        let seen = Mutex<[AudioSession.Proximity]>([])
        sensor.setHandler { value in seen.withLock { $0.append(value) } }
        sensor.set(.near); sensor.set(.near); sensor.set(.far)
        #expect(seen.withLock { $0 } == [.near, .far])
    }

    @Test("ALSA hardware passes proximity changes to the session's system")
    func hardwareForwardsProximity() throws {
        let sensor = SimulatedProximitySensor()
        let hardware = ALSAAudioHardware(routeMap: RouteMap(ports: [
            .init(device: "builtIn", port: .builtInReceiver, playback: "null"),
            .init(device: "builtIn", port: .builtInSpeaker, playback: "null"),
            .init(device: "builtIn", port: .builtInMic, capture: "null"),
        ]), proximitySensor: sensor)
        let system = AudioSystem(hardware: hardware)
        let session = system.makeSession(name: "call")
        try session.setCategory(.playAndRecord, mode: .voiceChat, options: [.defaultToSpeaker])
        session.isProximityRoutingEnabled = true
        try session.setActive(true)
        #expect(session.currentRoute.outputs.first?.portType == .builtInSpeaker)
        sensor.set(.near)
        #expect(session.currentRoute.outputs.first?.portType == .builtInReceiver)
        sensor.set(.far)
        #expect(session.currentRoute.outputs.first?.portType == .builtInSpeaker)
        try session.setActive(false)
    }
}
