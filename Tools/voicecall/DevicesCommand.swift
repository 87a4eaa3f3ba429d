import ALSA
import ArgumentParser
import ToolSupport
import AudioIO
import AudioSession

struct DevicesCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "devices",
        abstract: "List ALSA PCMs, the route map, and the audio ports present now."
    )

    @Option(help: "A route map JSON file (default: the built-in laptop map).")
    var routeMap: String?

    @OptionGroup var logging: LoggingOptions

    func run() throws {
        logging.bootstrap()
        let map: RouteMap
        do { map = try routeMap.map(RouteMap.load) ?? .laptop } catch { throw ValidationError("\(error)") }

        print("ALSA PCMs:")
        let devices = ALSALibrary.pcmDevices()
        if devices.isEmpty { print("  (none defined: is alsa-lib's configuration installed?)") }
        for device in devices {
            let streams = device.streams.map(\.rawValue).sorted().joined(separator: "+")
            print("  \(device.name.padding(toLength: 26))  \(streams.padding(toLength: 16))  \(device.description)")
        }

        print("\nSound cards (a USB one is a device of its own, on its plughw PCM):")
        let cards = ALSALibrary.soundCards()
        if cards.isEmpty { print("  (none)") }
        for card in cards {
            let streams = [card.hasPlayback ? "playback" : nil, card.hasCapture ? "capture" : nil].compactMap { $0 }.joined(separator: "+")
            print("  hw:\(card.index) \(card.id.padding(toLength: 12))  \(card.driver.padding(toLength: 10))  \(streams.padding(toLength: 16))  \(card.name)")
        }

        print("\nSound server ALSA's 'default' reaches: \(SoundServer.reached(by: "default")?.description ?? "none (a card or another plugin)")")
        if SoundServer.pipeWireIsRunning {
            print("PipeWire runs: for calls use --device pipewire (or a 'default' that is PipeWire); 'pulse' goes through "
                  + "pipewire-pulse, whose timing is too loose for echo cancellation")
        }

        print("\nRoute map (\(routeMap ?? "built-in laptop default")):")
        for entry in map.ports {
            var how = [entry.playback.map { "playback \($0)" }, entry.capture.map { "capture \($0)" }].compactMap { $0 }
            if let jack = entry.jack, let control = entry.control { how.append("jack '\(jack)' on \(control)") }
            if entry.probe == true { how.append("present when its PCM opens") }
            print("  \(entry.uid.padding(toLength: 26))  \(how.joined(separator: ", "))")
        }

        print("\nPorts present now (oldest connection first):")
        let hardware = ALSAAudioHardware(routeMap: map)
        for device in hardware.devices {
            let outs = device.outputs.map { "\($0.portType) \"\($0.portName)\"" }
            let ins = device.inputs.map { "\($0.portType) \"\($0.portName)\"" }
            print("  \(device.id): outputs [\(outs.joined(separator: ", "))], inputs [\(ins.joined(separator: ", "))]")
        }
        if hardware.devices.isEmpty { print("  (none)") }
    }
}

extension String {
    /// Pads with spaces on the right to at least `length` characters.
    func padding(toLength length: Int) -> String {
        count >= length ? self : self + String(repeating: " ", count: length - count)
    }
}
