public import Foundation

/// The sound server's null-sink loopback (`Tools/testbed`), started on demand for real-time
/// tests: PipeWire, or PulseAudio itself when `CALLAUDIO_TESTBED_SERVER=pulseaudio`.
public enum Testbed {
    /// The server the tests run against: `pipewire` (the default) or `pulseaudio`.
    public static let server: String = ProcessInfo.processInfo.environment["CALLAUDIO_TESTBED_SERVER"] ?? "pipewire"

    /// Whether the ALSA `pipewire` PCM reaches the testbed (PipeWire is the server).
    public static var hasPipeWire: Bool { server == "pipewire" }

    /// The repository root, found from this file's location.
    public static let repositoryRoot: String = {
        var parts = String(#filePath).split(separator: "/", omittingEmptySubsequences: false)
        parts.removeLast(3)  // Tests/TestSupport/Testbed.swift
        return parts.joined(separator: "/")
    }()

    private static let started: Result<Void, TestbedError> = {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "\(repositoryRoot)/Tools/testbed")
        process.arguments = ["start", server]
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        do { try process.run() } catch { return .failure(TestbedError(message: "cannot run Tools/testbed: \(error)")) }
        process.waitUntilExit()
        let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        guard process.terminationStatus == 0 else {
            let why = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            return .failure(TestbedError(message: "Tools/testbed start failed: \(why)"))
        }
        // Lines look like: export NAME='value'
        for line in text.split(separator: "\n") where line.hasPrefix("export ") {
            let assignment = line.dropFirst("export ".count)
            guard let eq = assignment.firstIndex(of: "=") else { continue }
            let name = String(assignment[..<eq])
            let value = assignment[assignment.index(after: eq)...].trimmingCharacters(in: CharacterSet(charactersIn: "'"))
            setenv(name, value, 1)
        }
        return .success(())
    }()

    /// Starts the loopback if it is not running and points this process's PulseAudio clients at it.
    public static func start() throws { try started.get() }

    /// The process id of the sound server (PipeWire's `pipewire`, or `pulseaudio`).
    public static func serverPID() throws -> pid_t {
        try start()
        let dir = ProcessInfo.processInfo.environment["CALLAUDIO_TESTBED_DIR"] ?? ""
        let text = try String(contentsOfFile: "\(dir)/\(server)/server.pid", encoding: .utf8)
        guard let pid = pid_t(text.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            throw TestbedError(message: "no server pid in \(dir)/\(server)/server.pid")
        }
        return pid
    }

    /// Stops the server (every process of it).
    public static func stop() throws { try testbed(["stop"]) }

    /// Starts the server again after a test stopped or killed it (same sockets, same sinks).
    public static func restart() throws { try testbed(["stop", "start"]) }

    private static func testbed(_ commands: [String]) throws {
        for command in commands {
            // posix_spawn and waitpid: Foundation's Process waits on a run loop that missed the
            // exit of a script whose daemons outlive it.
            let script = "\(repositoryRoot)/Tools/testbed"
            var pid: pid_t = 0
            let argv: [UnsafeMutablePointer<CChar>?] = [script, command, server].map { (word: String) in strdup(word) } + [nil]
            defer { argv.forEach { free($0) } }
            var actions = posix_spawn_file_actions_t()
            posix_spawn_file_actions_init(&actions)
            defer { posix_spawn_file_actions_destroy(&actions) }
            posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)  // the env lines it prints
            guard posix_spawn(&pid, script, &actions, nil, argv, environ) == 0 else {
                throw TestbedError(message: "cannot run Tools/testbed \(command)")
            }
            var status: Int32 = 0
            while waitpid(pid, &status, 0) < 0, errno == EINTR {}
            guard status == 0 else { throw TestbedError(message: "Tools/testbed \(command) failed (status \(status))") }
        }
    }
}

public struct TestbedError: Error, CustomStringConvertible {
    public let message: String
    public var description: String { message }
}
