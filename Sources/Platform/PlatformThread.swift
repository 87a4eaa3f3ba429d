#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The error of a thread that could not be created: `pthread_create`'s code.
public struct ThreadCreationError: Error, Sendable, Equatable {
    public let code: Int32
}

/// A named, joinable POSIX thread, optionally at real-time (`SCHED_FIFO`) priority: the one
/// thread type of the stack (the I/O thread, the network thread, pollers). A plain thread rather
/// than a task, because its body blocks (in `poll`, or in a device's wait), which a task must not.
///
/// Thread safety: ``init(name:priority:body:)`` and ``join()`` are called from the
/// control thread that owns the value; the value joins the thread when it is dropped.
package struct PlatformThread: ~Copyable {
    private let thread: pthread_t
    /// Whether `SCHED_FIFO` was granted (set by the thread before `body` runs).
    package let priorityGranted: Bool

    /// Starts `body` on a new thread and waits until it has tried to raise its priority.
    ///
    /// - Parameters:
    ///   - name: the thread's name as `top` and `perf` show it (at most 15 bytes are kept).
    ///   - priority: the `SCHED_FIFO` priority to ask for (1 ... 99), or nil for normal scheduling.
    package init(name: String, priority: Int32?, body: @escaping @Sendable () -> Void) throws(ThreadCreationError) {
        let context = Context(name: name, priority: priority, body: body)
        var thread = pthread_t()
        let r = pthread_create(&thread, nil, { raw in
            let context = Unmanaged<Context>.fromOpaque(raw!).takeRetainedValue()
            context.run()
            return nil
        }, Unmanaged.passRetained(context).toOpaque())
        guard r == 0 else {
            Unmanaged.passUnretained(context).release()
            throw ThreadCreationError(code: r)
        }
        self.thread = thread
        self.priorityGranted = context.waitForPriorityResult()
    }

    /// Waits for the thread to finish.
    package consuming func join() {
        pthread_join(thread, nil)
        discard self
    }

    deinit { pthread_join(thread, nil) }

    /// What the new thread needs, handed over with one retain.
    private final class Context: @unchecked Sendable {
        // @unchecked: `granted` is written once by the new thread before `ready` is released,
        // and read by the creator only after it has acquired `ready`.
        let name: String
        let priority: Int32?
        let body: @Sendable () -> Void
        private var granted = false
        private var ready = sem_t()

        init(name: String, priority: Int32?, body: @escaping @Sendable () -> Void) {
            self.name = name
            self.priority = priority
            self.body = body
            sem_init(&ready, 0, 0)
        }

        deinit { sem_destroy(&ready) }

        func run() {
            nameCurrentThread(name)
            if let priority {
                var param = sched_param()
                param.sched_priority = priority
                granted = pthread_setschedparam(pthread_self(), SCHED_FIFO, &param) == 0
            }
            sem_post(&ready)
            body()
        }

        func waitForPriorityResult() -> Bool {
            while sem_wait(&ready) != 0 && errno == EINTR {}
            return granted
        }
    }
}
