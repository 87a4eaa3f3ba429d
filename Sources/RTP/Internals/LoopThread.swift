import AudioAnalysis
import Glibc
import Synchronization

/// Work that runs on a ``LoopThread``: a loop that blocks in `poll` for short waits.
protocol ThreadLoop: AnyObject, Sendable {
    /// The thread's body: returns soon after `stopping` becomes true.
    func run(stopping: borrowing Atomic<Bool>)
}

/// The POSIX thread of a ``ThreadLoop``: the network thread of an ``RTPSession`` and the
/// thread of an ``ImpairmentRelay``. A plain thread rather than a task: the loop blocks in
/// `poll`, which a task must not do.
///
/// The loop runs once: started again after ``stop()``, it returns at once.
///
/// Thread safety: ``start()`` and ``stop()`` from any thread (a lock orders them).
final class LoopThread: Sendable {
    private let loop: any ThreadLoop
    private let name: String
    private let stopping = Atomic<Bool>(false)
    private let thread = Mutex<pthread_t?>(nil)

    /// - Parameter name: the thread's name as `top` and `perf` show it (at most 15 bytes are kept).
    init(name: String, _ loop: any ThreadLoop) {
        self.name = name
        self.loop = loop
    }

    /// Starts the thread, unless it is running.
    func start() {
        thread.withLock { current in
            guard current == nil else { return }
            var t = pthread_t()
            // The thread holds a reference to `self` (so to the loop) until the loop returns.
            let context = Unmanaged.passRetained(self).toOpaque()
            let result = pthread_create(&t, nil, { raw in
                let owner = Unmanaged<LoopThread>.fromOpaque(raw!).takeRetainedValue()
                nameCurrentThread(owner.name)
                owner.loop.run(stopping: owner.stopping)
                return nil
            }, context)
            precondition(result == 0, "pthread_create failed: \(result)")
            current = t
        }
    }

    /// Asks the loop to return and waits for the thread to end; nothing if it is not running.
    func stop() {
        let running = thread.withLock { current -> pthread_t? in
            defer { current = nil }
            return current
        }
        guard let running else { return }
        stopping.store(true, ordering: .releasing)
        pthread_join(running, nil)
    }
}
