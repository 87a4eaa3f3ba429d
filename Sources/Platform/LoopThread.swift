package import Synchronization

/// Work that runs on a ``LoopThread``: a loop that blocks in `poll` for short waits.
package protocol ThreadLoop: AnyObject, Sendable {
    /// The thread's body: returns soon after `stopping` becomes true.
    func run(stopping: borrowing Atomic<Bool>)
}

/// A ``PlatformThread`` that runs a ``ThreadLoop`` until asked to stop: the network thread of
/// an RTP session and the thread of an impairment relay.
///
/// The loop runs once: started again after ``stop()``, it returns at once.
///
/// Thread safety: ``start()`` and ``stop()`` from any thread (a lock orders them).
package final class LoopThread: Sendable {
    private let loop: any ThreadLoop
    private let name: String
    private let stopping = Atomic<Bool>(false)
    private let thread = Mutex<PlatformThread?>(nil)

    /// - Parameter name: the thread's name as `top` and `perf` show it (at most 15 bytes are kept).
    package init(name: String, _ loop: any ThreadLoop) {
        self.name = name
        self.loop = loop
    }

    /// Starts the thread, unless it is running.
    package func start() {
        thread.withLock { current in
            guard current == nil else { return }
            do {
                // The thread holds a reference to `self` (so to the loop) until the loop returns.
                current = try PlatformThread(name: name, priority: nil) { [self] in loop.run(stopping: stopping) }
            } catch {
                preconditionFailure("cannot start thread \(name): \(error)")
            }
        }
    }

    /// Asks the loop to return and waits for the thread to end; nothing if it is not running.
    package func stop() {
        guard let running = thread.withLock({ $0.take() }) else { return }
        stopping.store(true, ordering: .releasing)
        running.join()
    }
}
