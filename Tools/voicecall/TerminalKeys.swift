import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Single keys from a terminal, without Enter and without echo, read on a thread of their own.
/// Ctrl-C still raises SIGINT. The terminal's settings come back with ``restore()``.
///
/// Thread safety: create and restore on one thread; `onKey` runs on the reading thread.
final class TerminalKeys: @unchecked Sendable {
    // @unchecked: `saved` is written once in init and read by restore().
    private var saved = termios()

    /// Starts reading keys, or returns nil when standard input is not a terminal.
    init?(onKey: @escaping @Sendable (Character) -> Void) {
        guard isatty(STDIN_FILENO) != 0, tcgetattr(STDIN_FILENO, &saved) == 0 else { return nil }
        var raw = saved
        raw.c_lflag &= ~tcflag_t(ICANON | ECHO)
        withUnsafeMutableBytes(of: &raw.c_cc) { cc in
            cc[Int(VMIN)] = 1
            cc[Int(VTIME)] = 0
        }
        guard tcsetattr(STDIN_FILENO, TCSANOW, &raw) == 0 else { return nil }
        Thread.detachNewThread {
            var byte: UInt8 = 0
            while read(STDIN_FILENO, &byte, 1) == 1 { onKey(Character(Unicode.Scalar(byte))) }
        }
    }

    /// Puts the terminal back as it was.
    func restore() {
        _ = tcsetattr(STDIN_FILENO, TCSANOW, &saved)
    }
}

/// Ctrl-C (SIGINT) and SIGTERM as events instead of the process's end, so a call hangs up
/// and its session deactivates before the tool exits. A second signal exits at once.
final class StopSignals: @unchecked Sendable {
    // @unchecked: the sources are created in init and only cancelled afterwards.
    private var sources: [any DispatchSourceSignal] = []
    private let count = Mutex(0)

    init(onStop: @escaping @Sendable () -> Void) {
        for number in [SIGINT, SIGTERM] {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { [self] in
                let n = count.withLock { $0 += 1; return $0 }
                if n > 1 { exit(130) }
                onStop()
            }
            source.resume()
            sources.append(source)
        }
    }

    func cancel() { for source in sources { source.cancel() } }
}
