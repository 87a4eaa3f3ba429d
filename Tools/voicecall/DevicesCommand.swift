import ALSA
import ArgumentParser

struct DevicesCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "devices",
        abstract: "List the ALSA PCMs this machine's configuration defines."
    )

    func run() throws {
        let devices = ALSALibrary.pcmDevices()
        if devices.isEmpty { print("No PCMs defined (is alsa-lib's configuration installed?)") }
        for device in devices {
            let streams = device.streams.map(\.rawValue).sorted().joined(separator: "+")
            print("\(device.name.padding(toLength: 28))  \(streams.padding(toLength: 16))  \(device.description)")
        }
    }
}

extension String {
    /// Pads with spaces on the right to at least `length` characters.
    func padding(toLength length: Int) -> String {
        count >= length ? self : self + String(repeating: " ", count: length - count)
    }
}
