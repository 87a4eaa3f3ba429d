import ALSA
import Logging
import Platform
import Synchronization

/// Watches the jack switches of a route map on their ALSA control devices and
/// reports each change (jack name, control device, plugged).
///
/// Thread safety: ``start(_:)`` and ``stop()`` from one control thread; the
/// callback runs on the monitor's own thread.
final class JackPoller: Sendable {
    private let jacks: [String: Set<String>]  // control device -> jack names
    private let logger: Logger
    private let monitor = MonitorThread()

    init(entries: [RouteMap.Entry], logger: Logger) {
        var jacks: [String: Set<String>] = [:]
        for e in entries { if let c = e.control, let j = e.jack { jacks[c, default: []].insert(j) } }
        self.jacks = jacks
        self.logger = logger
    }

    func start(_ onChange: @escaping @Sendable (_ jack: String, _ control: String, _ plugged: Bool) -> Void) {
        let jacks = self.jacks, logger = self.logger
        monitor.start(name: "callaudio-jack", logger: logger, what: "plug events") { monitor in
            var controls: [NamedHandle<ControlDevice>] = []
            for name in jacks.keys.sorted() {
                do { controls.append(NamedHandle(name: name, handle: try ControlDevice(name: name))) } catch {
                    logger.debug("no jack events from \(name): \(error)")
                }
            }
            guard !controls.isEmpty else { return }
            while monitor.isRunning {
                for control in controls {
                    let changed = (try? control.handle.waitForChanges(timeoutMilliseconds: 200 / Int32(controls.count))) ?? []
                    for element in changed where jacks[control.name]?.contains(element) == true {
                        onChange(element, control.name, (try? control.handle.readSwitch(element)) ?? false)
                    }
                }
            }
        }
    }

    var isRunning: Bool { monitor.isRunning }

    func stop() { monitor.stop() }
}
