import Logging
import Platform
import Synchronization

/// Starts a ``PlatformThread`` for AudioIO, its failure as an ``IOError``.
func startThread(name: String, priority: Int32?, body: @escaping @Sendable () -> Void) throws(IOError) -> PlatformThread {
    do {
        return try PlatformThread(name: name, priority: priority, body: body)
    } catch {
        throw .threadCreation(error.code)
    }
}

/// A handle the monitor thread owns, with the name it was opened by (non-copyable values
/// cannot be array elements, so a list holds these).
final class NamedHandle<Handle: ~Copyable> {
    let name: String
    let handle: Handle
    init(name: String, handle: consuming Handle) {
        self.name = name
        self.handle = handle
    }
}

/// A background thread that watches the hardware (jacks, mixers) until stopped: its body loops
/// while ``isRunning``.
///
/// Thread safety: ``start(name:logger:what:body:)`` and ``stop()`` from one control thread;
/// ``isRunning`` from any thread.
final class MonitorThread: Sendable {
    private let running = Atomic<Bool>(false)
    private let thread = Mutex<PlatformThread?>(nil)

    /// Starts `body` on a thread named `name`; without a thread, logs that `what` will not come.
    func start(name: String, logger: Logger, what: String, body: @escaping @Sendable (MonitorThread) -> Void) {
        running.store(true, ordering: .releasing)
        var started: PlatformThread?
        do { started = try startThread(name: name, priority: nil) { [self] in body(self) } } catch {
            logger.warning("cannot start the \(name) thread (\(error)): no \(what)")
            return
        }
        thread.withLock { $0 = started.take() }
    }

    /// Whether the body should go on.
    var isRunning: Bool { running.load(ordering: .acquiring) }

    /// Asks the body to return and waits for the thread.
    func stop() {
        running.store(false, ordering: .releasing)
        let t = thread.withLock { $0.take() }
        t?.join()
    }
}
