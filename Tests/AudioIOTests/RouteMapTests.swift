import AudioIO
import AudioSession
import Testing

@Suite("Route map")
struct RouteMapTests {
    func decode(_ json: String) throws(RouteMapError) -> RouteMap { try RouteMap.decode(Array(json.utf8)) }

    @Test("The built-in laptop map is valid and has a speaker and a mic on the default PCM")
    func laptopDefault() throws {
        try RouteMap.laptop.validate()
        #expect(RouteMap.laptop.ports.contains { $0.portType == .builtInSpeaker && $0.playback == "default" })
        #expect(RouteMap.laptop.ports.contains { $0.portType == .builtInMic && $0.capture == "default" })
    }

    @Test("A map round-trips through JSON, inline PCMs included")
    func parsesInlinePCMs() throws {
        let map = try decode("""
            { "pcms": { "earpiece": "type pulse device loop2" },
              "ports": [ { "device": "builtIn", "port": "builtInReceiver", "playback": "earpiece" } ] }
            """)
        #expect(map.source("earpiece") == .configuration(name: "earpiece", text: "pcm.earpiece { type pulse device loop2 }"))
        #expect(map.source("default") == .named("default"))
        #expect(map.entry(uid: "builtIn:builtInReceiver")?.portType == .builtInReceiver)
    }

    @Test("Malformed maps name the offending key", arguments: [
        (#"{ "ports": [ { "device": "b", "port": "earpeice", "playback": "default" } ] }"#, "ports[0].port"),
        (#"{ "ports": [ { "port": "builtInSpeaker", "playback": "default" } ] }"#, "ports[0].device"),
        (#"{ "ports": 3 }"#, "ports"),
        (#"{ "ports": [ { "device": "b", "port": "builtInMic", "playback": "default" } ] }"#, "ports[0].playback"),
        (#"{ "ports": [ { "device": "b", "port": "builtInSpeaker", "capture": "default" } ] }"#, "ports[0].capture"),
        (#"{ "ports": [ { "device": "h", "port": "headphones", "playback": "default", "jack": "Headphone Jack" } ] }"#, "ports[0].control"),
        (#"{ "ports": [ { "device": "b", "port": "builtInSpeaker" } ] }"#, "ports[0]"),
        (#"{ "ports": [ { "device": "b", "port": "builtInSpeaker", "playback": 7 } ] }"#, "ports[0].playback"),
        (#"{ "ports": [ { "device": "b", "port": "builtInSpeaker", "playback": "default", "mixer": "hw:0" } ] }"#, "ports[0].volume"),
        (#"{ "ports": [ { "device": "b", "port": "builtInSpeaker", "playback": "default", "volume": "" } ] }"#, "ports[0].volume"),
    ])
    func malformedMapNamesKey(json: String, key: String) {
        let error = #expect(throws: RouteMapError.self) { _ = try decode(json) }
        #expect(error?.key == key)
        #expect(error?.description.contains("'\(key)'") == true)
    }

    @Test("Ports of the map become session devices, grouped by device, absent jacks left out")
    func discoversPorts() {
        // No sound card here: the jack's control device does not open, so the headset is absent.
        let hardware = ALSAAudioHardware(routeMap: RouteMap(ports: [
            .init(device: "builtIn", port: .builtInSpeaker, name: "Speaker", playback: "null"),
            .init(device: "builtIn", port: .builtInMic, name: "Mic", capture: "null"),
            .init(device: "headset", port: .headphones, playback: "null", control: "hw:7", jack: "Headphone Jack"),
            .init(device: "bt", port: .bluetoothHFP, playback: "callaudio_missing", capture: "callaudio_missing", probe: true),
        ]))
        #expect(hardware.devices.map(\.id) == ["builtIn"])
        #expect(hardware.devices.first?.outputs.map(\.portType) == [.builtInSpeaker])
        #expect(hardware.devices.first?.inputs.map(\.portType) == [.builtInMic])
        #expect(hardware.proximity == .unknown)
    }

    /// A call holds its device open; the session negotiates again after a route change. Opening
    /// an exclusive `hw:` PCM a second time would block until the call ends, so the hardware
    /// reads the held device. (The `null` PCM grants any rate, which tells the two apart.)
    @Test("Negotiating a route whose PCMs a held device has open reads that device; once released, the PCMs are opened")
    func negotiationReadsTheHeldDevice() throws {
        let hardware = ALSAAudioHardware(routeMap: RouteMap(ports: [
            .init(device: "builtIn", port: .builtInSpeaker, name: "Speaker", playback: "null"),
            .init(device: "builtIn", port: .builtInMic, name: "Mic", capture: "null"),
        ]))
        let builtIn = try #require(hardware.devices.first)
        let route = AudioSessionRouteDescription(inputs: builtIn.inputs, outputs: builtIn.outputs)
        hardware.apply(route: route)
        let preferred = PreferredHardwareValues(sampleRate: 48000, ioBufferDuration: 0.01)
        var device: ALSADuplexDevice? = try hardware.makeDevice(preferred: IOFormat(sampleRate: 8000, ioBufferDuration: 0.02))
        #expect(device?.format.sampleRate == 8000)
        #expect(hardware.negotiate(preferred, for: route).sampleRate == 8000)
        device = nil
        #expect(hardware.negotiate(preferred, for: route).sampleRate == 48000)
    }
}
