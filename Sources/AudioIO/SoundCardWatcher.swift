public import ALSA
import Logging
import Glibc

/// Where ``ALSAAudioHardware`` learns which sound cards are present: ``ALSASoundCards`` on a
/// machine; a test gives its own, since no USB headset can be plugged in there.
///
/// Thread safety: ``cards()`` is called on the card watcher's thread.
public protocol SoundCardSource: Sendable {
    /// The cards present now.
    func cards() -> [SoundCard]
}

/// The kernel's sound cards through alsa-lib (`ALSA/ALSALibrary/soundCards()`).
///
/// Thread safety: a value type; safe from any thread.
public struct ALSASoundCards: SoundCardSource {
    public init() {}
    public func cards() -> [SoundCard] { ALSALibrary.soundCards() }
}

/// Asks a ``SoundCardSource`` once a second which cards are present and reports the list when
/// it changed (a USB headset plugged in or pulled out). ALSA has no event for a card coming
/// or going short of udev; one control open per card a second costs nothing.
///
/// Thread safety: ``start(_:)`` and ``stop()`` from one control thread; the callback runs on
/// the watcher's own thread.
final class SoundCardWatcher: Sendable {
    private let source: any SoundCardSource
    private let logger: Logger
    private let monitor = MonitorThread()

    init(source: any SoundCardSource, logger: Logger) {
        self.source = source
        self.logger = logger
    }

    /// Starts watching; `initial` is the list the owner already knows (a change between its
    /// read and this thread's first is then reported, not taken as the starting point).
    func start(initial: [SoundCard], _ onChange: @escaping @Sendable ([SoundCard]) -> Void) {
        let source = self.source
        monitor.start(name: "callaudio-cards", logger: logger, what: "USB audio plug events") { monitor in
            var last = initial
            while monitor.isRunning {
                for _ in 0..<10 where monitor.isRunning { usleep(100_000) }
                let now = source.cards()
                if now != last { onChange(now) }
                last = now
            }
        }
    }

    func stop() { monitor.stop() }
}
