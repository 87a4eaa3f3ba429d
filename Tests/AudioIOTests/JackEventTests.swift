@testable import AudioIO
import AudioSession
import Synchronization
import Testing

/// A laptop's headset is one device behind two jack switches (HDA's "Headphone Jack" and
/// "Headset Mic Jack"); the jack poller reports them one at a time. These feed the poller's
/// event sequences into the ALSA hardware (no sound card here: the control device `hw:7`
/// does not open, so the headset starts unplugged and no poller thread runs).
@Suite("Jack events on ALSA")
struct JackEventTests {
    static let map = RouteMap(ports: [
        .init(device: "builtIn", port: .builtInSpeaker, name: "Speaker", playback: "null"),
        .init(device: "builtIn", port: .builtInMic, name: "Built-In Microphone", capture: "null"),
        .init(device: "headset", port: .headphones, name: "Headphones", playback: "null", control: "hw:7", jack: "Headphone Jack"),
        .init(device: "headset", port: .headsetMic, name: "Headset Microphone", capture: "null", control: "hw:7", jack: "Headset Mic Jack"),
    ])

    /// The route changes a session is told of.
    final class Changes: Sendable {
        private let list = Mutex<[AudioSession.RouteChange]>([])
        func append(_ change: AudioSession.RouteChange) { list.withLock { $0.append(change) } }
        func removeAll() { list.withLock { $0.removeAll() } }
        var all: [AudioSession.RouteChange] { list.withLock { $0 } }
    }

    /// A session of `category`, active, and the route changes it is told of.
    static func observe(_ category: AudioSession.Category) throws -> (ALSAAudioHardware, AudioSession, Changes) {
        let hardware = ALSAAudioHardware(routeMap: map)
        let system = AudioSystem(hardware: hardware)
        let session = system.makeSession(name: "app")
        try session.setCategory(category)
        try session.setActive(true)
        let changes = Changes()
        _ = session.addObserver { notification in
            if let change = notification.routeChange { changes.append(change) }
        }
        return (hardware, session, changes)
    }

    @Test("A two-jack headset plugged in is one new device, either jack first, and its mic takes the input",
          arguments: [["Headphone Jack", "Headset Mic Jack"], ["Headset Mic Jack", "Headphone Jack"]])
    func plugIsOneNewDevice(order: [String]) throws {
        let (hardware, session, changes) = try Self.observe(.playAndRecord)
        for jack in order { hardware.jackChanged(jack, control: "hw:7", plugged: true) }
        let reasons = changes.all.map(\.reason)
        #expect(reasons.filter { $0 == .newDeviceAvailable }.count == 1)
        #expect(!reasons.contains(.oldDeviceUnavailable))
        #expect(session.currentRoute.outputTypes == [.headphones])
        #expect(session.currentRoute.inputTypes == [.headsetMic])
        #expect(hardware.devices.map(\.id) == ["builtIn", "headset"])
    }

    @Test("A playback session hears a headset plug as a plug: no oldDeviceUnavailable from headphones, the route never back on the speaker")
    func playbackNeverSeesAnUnplug() throws {
        let (hardware, session, changes) = try Self.observe(.playback)
        hardware.jackChanged("Headphone Jack", control: "hw:7", plugged: true)
        hardware.jackChanged("Headset Mic Jack", control: "hw:7", plugged: true)
        let seen = changes.all
        #expect(seen.map(\.reason) == [.newDeviceAvailable])
        #expect(!seen.contains { $0.currentRoute.outputTypes == [.builtInSpeaker] })
        #expect(session.currentRoute.outputTypes == [.headphones])
    }

    @Test("Unplugged, the headset leaves once, when its last jack opens; a jack reported twice changes nothing")
    func unplugIsOneOldDevice() throws {
        let (hardware, session, changes) = try Self.observe(.playAndRecord)
        for jack in ["Headphone Jack", "Headset Mic Jack"] { hardware.jackChanged(jack, control: "hw:7", plugged: true) }
        changes.removeAll()
        hardware.jackChanged("Headset Mic Jack", control: "hw:7", plugged: false)
        hardware.jackChanged("Headset Mic Jack", control: "hw:7", plugged: false)
        #expect(session.currentRoute.inputTypes == [.builtInMic])
        #expect(session.currentRoute.outputTypes == [.headphones])
        hardware.jackChanged("Headphone Jack", control: "hw:7", plugged: false)
        let reasons = changes.all.map(\.reason)
        #expect(reasons == [.routeConfigurationChange, .oldDeviceUnavailable])
        #expect(session.currentRoute.outputTypes == [.builtInSpeaker])
        #expect(hardware.devices.map(\.id) == ["builtIn"])
    }
}
