public import ALSA
public import AudioSession
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Which ALSA PCM and which jack control stand for each audio port of a machine.
///
/// A small JSON file:
/// ```json
/// { "pcms": { "earpiece": "type pulse device loop2" },
///   "ports": [
///     { "device": "builtIn", "port": "builtInSpeaker", "name": "Speaker", "playback": "default" },
///     { "device": "builtIn", "port": "builtInReceiver", "name": "Receiver", "playback": "earpiece" },
///     { "device": "builtIn", "port": "builtInMic", "name": "Microphone", "capture": "default" },
///     { "device": "headset", "port": "headphones", "name": "Headset", "playback": "default",
///       "control": "hw:0", "jack": "Headphone Jack" },
///     { "device": "bt", "port": "bluetoothHFP", "name": "Bluetooth", "playback": "bluealsa:PROFILE=sco",
///       "capture": "bluealsa:PROFILE=sco", "probe": true } ] }
/// ```
/// - `pcms` (optional) defines PCMs inline, as the body of an ALSA `pcm.NAME { ... }` block;
///   any other name is looked up in the system's ALSA configuration.
/// - Ports with the same `device` form one device (a headset's headphones and mic plug in together).
/// - A port with a `jack` is present while that switch of control device `control` is on;
///   a port with `"probe": true` is present when its PCM opens; any other port is always present.
/// - `volume` names the simple mixer element behind an output's volume or an input's gain
///   ("Master", "Capture"), on control device `mixer` (default: `control`, else `default`; the
///   `pulse` and `pipewire` control plugins give the sound server's default sink and source).
///
/// Thread safety: a value type; safe to use from any thread.
public struct RouteMap: Sendable, Equatable, Codable {
    /// One port of the map.
    public struct Entry: Sendable, Equatable, Codable {
        public var device: String
        public var port: String
        public var name: String?
        public var playback: String?
        public var capture: String?
        public var control: String?
        public var jack: String?
        public var probe: Bool?
        /// The simple mixer element of the port's volume ("Master", "Capture", "Headphone").
        public var volume: String?
        /// The control device of `volume` (default: `control`, else ALSA's `default`).
        public var mixer: String?

        public init(device: String, port: AudioSession.Port, name: String? = nil, playback: String? = nil,
                    capture: String? = nil, control: String? = nil, jack: String? = nil, probe: Bool? = nil,
                    volume: String? = nil, mixer: String? = nil) {
            self.device = device
            self.port = port.rawValue
            self.name = name
            self.playback = playback
            self.capture = capture
            self.control = control
            self.jack = jack
            self.probe = probe
            self.volume = volume
            self.mixer = mixer
        }

        /// The port type.
        public var portType: AudioSession.Port { AudioSession.Port(rawValue: port) }
        /// The port's UID as the session sees it.
        public var uid: String { "\(device):\(port)" }
        /// The mixer control of the port's volume (an output's) or gain (an input's), if it has one.
        public var volumeControl: MixerControl? {
            volume.map { MixerControl(mixer: mixer ?? control ?? "default", element: $0, direction: playback != nil ? .playback : .capture) }
        }
    }

    /// PCMs defined inline: name -> body of `pcm.NAME { ... }`.
    public var pcms: [String: String]
    /// The ports, in the order devices are listed (built-in first, by convention).
    public var ports: [Entry]

    public init(pcms: [String: String] = [:], ports: [Entry]) {
        self.pcms = pcms
        self.ports = ports
    }

    enum CodingKeys: String, CodingKey { case pcms, ports }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        pcms = try c.decodeIfPresent([String: String].self, forKey: .pcms) ?? [:]
        ports = try c.decode([Entry].self, forKey: .ports)
    }

    /// A typical laptop: speaker and built-in mic on ALSA's `default` PCM, a headset jack on
    /// card 0 (HDA's "Headphone Jack" / "Headset Mic Jack"), and a Bluetooth headset through
    /// BlueALSA when its PCM opens. No receiver: laptops have none. Volume and gain are the
    /// `default` control device's "Master" and "Capture" (the sound server's, through its plugin).
    public static let laptop = RouteMap(ports: [
        Entry(device: "builtIn", port: .builtInSpeaker, name: "Speaker", playback: "default", volume: "Master", mixer: "default"),
        Entry(device: "builtIn", port: .builtInMic, name: "Built-In Microphone", capture: "default", volume: "Capture", mixer: "default"),
        Entry(device: "headset", port: .headphones, name: "Headphones", playback: "default", control: "hw:0", jack: "Headphone Jack",
              volume: "Master", mixer: "default"),
        Entry(device: "headset", port: .headsetMic, name: "Headset Microphone", capture: "default", control: "hw:0", jack: "Headset Mic Jack",
              volume: "Capture", mixer: "default"),
        Entry(device: "bluetooth", port: .bluetoothHFP, name: "Bluetooth Headset", playback: "bluealsa:PROFILE=sco",
              capture: "bluealsa:PROFILE=sco", probe: true),
        Entry(device: "bluetooth", port: .bluetoothA2DP, name: "Bluetooth Headset", playback: "bluealsa:PROFILE=a2dp", probe: true),
    ])

    /// Reads and validates a route map file.
    /// - Throws: ``RouteMapError`` naming the offending key.
    public static func load(_ path: String) throws(RouteMapError) -> RouteMap {
        let data: Data
        do { data = try Data(contentsOf: URL(fileURLWithPath: path)) } catch {
            throw RouteMapError(key: "", message: "cannot read '\(path)': \(error)")
        }
        return try decode(Array(data))
    }

    /// Parses and validates route map JSON.
    /// - Throws: ``RouteMapError`` naming the offending key.
    public static func decode(_ json: [UInt8]) throws(RouteMapError) -> RouteMap {
        let map: RouteMap
        do {
            map = try JSONDecoder().decode(RouteMap.self, from: Data(json))
        } catch let DecodingError.keyNotFound(key, context) {
            throw RouteMapError(key: RouteMapError.path(context.codingPath + [key]), message: "missing")
        } catch let DecodingError.typeMismatch(type, context) {
            throw RouteMapError(key: RouteMapError.path(context.codingPath), message: "expected \(type)")
        } catch let DecodingError.valueNotFound(type, context) {
            throw RouteMapError(key: RouteMapError.path(context.codingPath), message: "expected \(type), found null")
        } catch let DecodingError.dataCorrupted(context) {
            throw RouteMapError(key: RouteMapError.path(context.codingPath), message: "not valid JSON: \(context.debugDescription)")
        } catch {
            throw RouteMapError(key: "", message: "\(error)")
        }
        try map.validate()
        return map
    }

    /// Checks what JSON decoding cannot: known port types, directions, jack controls.
    public func validate() throws(RouteMapError) {
        let inputs: Set<AudioSession.Port> = [.builtInMic, .headsetMic, .lineIn]
        let outputs: Set<AudioSession.Port> = [.builtInReceiver, .builtInSpeaker, .headphones, .bluetoothA2DP, .lineOut, .HDMI, .airPlay]
        var seen = Set<String>()
        for (i, entry) in ports.enumerated() {
            let key = "ports[\(i)]"
            guard AudioSession.Port.allKnown.contains(entry.portType) else {
                throw RouteMapError(key: "\(key).port", message: "unknown port type '\(entry.port)'")
            }
            guard !entry.device.isEmpty else { throw RouteMapError(key: "\(key).device", message: "empty") }
            guard entry.playback != nil || entry.capture != nil else {
                throw RouteMapError(key: key, message: "needs a 'playback' or 'capture' PCM")
            }
            if inputs.contains(entry.portType), entry.playback != nil {
                throw RouteMapError(key: "\(key).playback", message: "'\(entry.port)' is an input port")
            }
            if outputs.contains(entry.portType), entry.capture != nil {
                throw RouteMapError(key: "\(key).capture", message: "'\(entry.port)' is an output port")
            }
            if entry.volume?.isEmpty == true { throw RouteMapError(key: "\(key).volume", message: "empty") }
            if entry.mixer != nil, entry.volume == nil {
                throw RouteMapError(key: "\(key).volume", message: "a mixer needs the element of the port's volume (e.g. \"Master\")")
            }
            if entry.jack != nil, entry.control == nil {
                throw RouteMapError(key: "\(key).control", message: "a jack needs the control device it belongs to (e.g. \"hw:0\")")
            }
            guard seen.insert(entry.uid).inserted else {
                throw RouteMapError(key: key, message: "port '\(entry.port)' appears twice in device '\(entry.device)'")
            }
        }
    }

    /// Where to open PCM `name`: inline configuration if the map defines it, else the system's.
    public func source(_ name: String) -> PCMSource {
        if let body = pcms[name] { return .configuration(name: name, text: "pcm.\(name) { \(body) }") }
        return .named(name)
    }

    /// The entry for a port UID of a route.
    public func entry(uid: String) -> Entry? { ports.first { $0.uid == uid } }
}

/// A mixer element behind a port's volume: control device, simple element, direction.
///
/// Thread safety: a value type; safe to use from any thread.
public struct MixerControl: Sendable, Hashable, CustomStringConvertible {
    public var mixer: String
    public var element: String
    public var direction: MixerDirection

    public var description: String { "'\(element)' (\(direction)) on '\(mixer)'" }
}

/// A route map that is not valid, with the key that makes it so.
///
/// Thread safety: a value type; safe to use from any thread.
public struct RouteMapError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The path of the offending key, e.g. `ports[2].port`.
    public var key: String
    public var message: String

    public var description: String { key.isEmpty ? "route map: \(message)" : "route map: '\(key)': \(message)" }

    static func path(_ keys: [any CodingKey]) -> String {
        var out = ""
        for k in keys {
            if let i = k.intValue { out += "[\(i)]" } else { out += out.isEmpty ? k.stringValue : ".\(k.stringValue)" }
        }
        return out
    }
}
