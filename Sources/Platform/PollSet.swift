import Glibc

/// What a descriptor is waited for, and what `poll` found.
///
/// Thread safety: a value type; safe to use from any thread.
package struct PollEntry: Sendable {
    package var descriptor: Int32
    package var wantsRead: Bool
    package var wantsWrite: Bool
    /// After ``PollSet/wait(timeoutMs:)``: readable (or a listener with a connection waiting).
    package private(set) var readable = false
    /// After ``PollSet/wait(timeoutMs:)``: writable (a connect finished, or room to send).
    package private(set) var writable = false
    /// After ``PollSet/wait(timeoutMs:)``: an error or hang-up (read to learn which).
    package private(set) var failed = false

    package init(descriptor: Int32, read: Bool = true, write: Bool = false) {
        self.descriptor = descriptor
        wantsRead = read
        wantsWrite = write
    }

    mutating func set(_ events: Int16) {
        readable = events & Int16(POLLIN) != 0
        writable = events & Int16(POLLOUT) != 0
        failed = events & Int16(POLLERR | POLLHUP | POLLNVAL) != 0
    }
}

/// Waits on several descriptors at once (`poll`): the network thread of a user agent waits on
/// its UDP socket, its listeners, its connections and its wake event together.
///
/// Thread safety: a value type, used by one thread.
package struct PollSet {
    package var entries: [PollEntry] = []
    private var fds: [pollfd] = []

    package init() {}

    /// Waits up to `timeoutMs` (0: do not wait) until one of the entries is ready, and marks
    /// each entry with what was found. Returns how many are ready (0 on a timeout or EINTR).
    @discardableResult
    package mutating func wait(timeoutMs: Int) -> Int {
        fds.removeAll(keepingCapacity: true)
        for entry in entries {
            var events: Int16 = 0
            if entry.wantsRead { events |= Int16(POLLIN) }
            if entry.wantsWrite { events |= Int16(POLLOUT) }
            fds.append(pollfd(fd: entry.descriptor, events: events, revents: 0))
        }
        let ready = fds.withUnsafeMutableBufferPointer { system_poll($0.baseAddress!, $0.count, Int32(clamping: timeoutMs)) }
        for index in entries.indices { entries[index].set(ready > 0 ? fds[index].revents : 0) }
        return max(0, Int(ready))
    }
}

/// Wakes a thread waiting in a ``PollSet`` from another thread (a non-blocking pipe, which
/// Glibc's module map offers where `eventfd` is not): the user agent's callers queue work for
/// its network thread and signal this.
///
/// Thread safety: safe from any thread. The descriptors are closed when it goes away.
package final class WakeEvent: Sendable {
    /// The end to wait on.
    package let descriptor: Int32
    private let writeEnd: Int32

    package init() throws(SocketError) {
        var ends: [Int32] = [0, 0]
        guard pipe(&ends) == 0 else { throw .last("pipe") }
        for fd in ends { makeNonBlocking(fd) }
        descriptor = ends[0]
        writeEnd = ends[1]
    }

    deinit {
        _ = system_close(descriptor)
        _ = system_close(writeEnd)
    }

    /// Makes the descriptor readable until ``drain()`` (a full pipe is signalled already).
    package func signal() {
        var one: UInt8 = 1
        _ = write(writeEnd, &one, 1)
    }

    /// Clears the signal (on the waiting thread, after `poll` found it readable).
    package func drain() {
        var bytes = (UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0))
        while withUnsafeMutableBytes(of: &bytes, { read(descriptor, $0.baseAddress, $0.count) }) > 0 {}
    }
}

/// Sets `O_NONBLOCK` and `FD_CLOEXEC` on a descriptor.
func makeNonBlocking(_ fd: Int32) {
    _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
    _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
}
