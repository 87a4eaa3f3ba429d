import ALSA
import Logging
import Platform
import Synchronization

/// Watches the mixers of a route map's volume controls and reports which mixer changed (a
/// volume turned in the desktop's mixer, with `pactl` or `wpctl`, or on the card).
///
/// Thread safety: ``start(_:)`` and ``stop()`` from one control thread; the callback runs on
/// the watcher's own thread.
final class MixerWatcher: Sendable {
    private let mixers: [String]
    private let logger: Logger
    private let monitor = MonitorThread()

    init(controls: [MixerControl], logger: Logger) {
        mixers = Array(Set(controls.map(\.mixer))).sorted()
        self.logger = logger
    }

    /// Starts the thread; `onChange` gets the control device whose elements changed.
    func start(_ onChange: @escaping @Sendable (_ mixer: String) -> Void) {
        guard !mixers.isEmpty else { return }
        let names = mixers, logger = self.logger
        monitor.start(name: "callaudio-mixer", logger: logger, what: "volume events") { monitor in
            var open: [NamedHandle<Mixer>] = []
            for name in names {
                do { open.append(NamedHandle(name: name, handle: try Mixer(device: name))) } catch {
                    logger.debug("no volume events from mixer \(name): \(error)")
                }
            }
            guard !open.isEmpty else { return }
            // Each mixer waits its share of 60 ms: a change is seen within that of being made.
            let share = Int32(60 / open.count)
            while monitor.isRunning {
                for watched in open {
                    do {
                        if try watched.handle.waitForChanges(timeoutMilliseconds: share) { onChange(watched.name) }
                    } catch {
                        logger.warning("mixer \(watched.name) stopped reporting: \(error)")
                        return
                    }
                }
            }
        }
    }

    func stop() { monitor.stop() }
}

extension MixerControl {
    /// The control's volume now (0 to 1); nil when its mixer or element is not there.
    func read() -> Float? {
        guard let mixer = try? Mixer(device: mixer) else { return nil }
        return try? mixer.volume(element, direction)
    }

    /// Whether the control's switch is on (off: muted); nil without a mixer, element or switch.
    func readSwitch() -> Bool? {
        guard let mixer = try? Mixer(device: mixer) else { return nil }
        return mixer.isSwitchedOn(element, direction)
    }

    /// Sets the control's volume (0 to 1).
    func write(_ volume: Float) throws(ALSAError) {
        let mixer = try Mixer(device: mixer)
        try mixer.setVolume(element, direction, to: volume)
    }
}
