public import Foundation

/// Programs the tests run beside them (the testbed's script, a second sound-server client),
/// started with posix_spawn and reaped with waitpid: Foundation's `Process` waits on a run
/// loop that can miss the exit of a child, above all of a script whose daemons outlive it.
///
/// Thread safety: every function is safe from any thread.
public enum ChildProcess {
    /// Whether an executable is on PATH (so a test can be skipped where it is not installed).
    public static func isInstalled(_ name: String) -> Bool {
        let paths = (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":")
        return paths.contains { FileManager.default.isExecutableFile(atPath: "\($0)/\(name)") }
    }

    /// Starts `arguments[0]` (a path, or a name found on PATH) with this process's environment;
    /// its standard output and error go to the files given (/dev/null by default).
    public static func spawn(_ arguments: [String], output: String = "/dev/null",
                             errors: String = "/dev/null") throws -> pid_t {
        var pid: pid_t = 0
        let argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 1, output, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_addopen(&actions, 2, errors, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        guard posix_spawnp(&pid, arguments[0], &actions, nil, argv, environ) == 0 else {
            throw TestbedError(message: "cannot run \(arguments.joined(separator: " "))")
        }
        return pid
    }

    /// Runs a program to its end and returns its exit status and standard output and error.
    /// They go through files, not pipes: daemons the program leaves running would hold a pipe
    /// open, and reading it to its end would never return.
    public static func run(_ arguments: [String]) throws -> (status: Int32, output: String, errors: String) {
        let base = "\(NSTemporaryDirectory())/callaudio-child-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        defer { unlink("\(base).out"); unlink("\(base).err") }
        let status = wait(try spawn(arguments, output: "\(base).out", errors: "\(base).err"))
        let read = { (path: String) in (try? String(contentsOfFile: path, encoding: .utf8)) ?? "" }
        return (status, read("\(base).out"), read("\(base).err"))
    }

    /// Waits for the child to exit and returns its wait status (0: exited with 0).
    @discardableResult
    public static func wait(_ pid: pid_t) -> Int32 {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0, errno == EINTR {}
        return status
    }

    /// Asks the child to end (SIGTERM) and reaps it.
    public static func stop(_ pid: pid_t) {
        kill(pid, SIGTERM)
        wait(pid)
    }
}
