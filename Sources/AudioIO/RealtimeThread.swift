#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import AudioAnalysis

/// A joinable POSIX thread that asks for real-time (`SCHED_FIFO`) priority.
///
/// Thread safety: ``start(priority:body:)`` and ``join()`` are called from the
/// control thread that owns the value.
struct RealtimeThread: ~Copyable {
    private let thread: pthread_t
    /// Whether `SCHED_FIFO` was granted (set by the thread before `body` runs).
    let priorityGranted: Bool

    /// Starts `body` on a new thread and waits until it has tried to raise its priority.
    ///
    /// - Parameters:
    ///   - name: the thread's name as `top` and `perf` show it (at most 15 bytes are kept).
    ///   - priority: the `SCHED_FIFO` priority to ask for (1 ... 99), or nil for normal scheduling.
    init(name: String, priority: Int32?, body: @escaping @Sendable () -> Void) throws(IOError) {
        let context = Context(name: name, priority: priority, body: body)
        var thread = pthread_t()
        let r = pthread_create(&thread, nil, { raw in
            let context = Unmanaged<Context>.fromOpaque(raw!).takeRetainedValue()
            context.run()
            return nil
        }, Unmanaged.passRetained(context).toOpaque())
        guard r == 0 else {
            Unmanaged.passUnretained(context).release()
            throw .threadCreation(r)
        }
        self.thread = thread
        self.priorityGranted = context.waitForPriorityResult()
    }

    /// Waits for the thread to finish.
    consuming func join() {
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

/// Monotonic time in nanoseconds (`CLOCK_MONOTONIC`); safe on the I/O thread.
@inline(__always)
func monotonicNanoseconds() -> UInt64 {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
}

/// Sleeps the calling (control) thread; never used on the I/O thread.
func usleepMicroseconds(_ us: UInt32) { usleep(us) }
