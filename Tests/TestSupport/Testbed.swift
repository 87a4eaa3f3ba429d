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
        let result: (status: Int32, output: String, errors: String)
        do { result = try ChildProcess.run(["\(repositoryRoot)/Tools/testbed", "start", server]) } catch {
            return .failure(TestbedError(message: "cannot run Tools/testbed: \(error)"))
        }
        guard result.status == 0 else { return .failure(TestbedError(message: "Tools/testbed start failed: \(result.errors)")) }
        let text = result.output
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
            let result = try ChildProcess.run(["\(repositoryRoot)/Tools/testbed", command, server])
            guard result.status == 0 else {
                throw TestbedError(message: "Tools/testbed \(command) failed (status \(result.status)): \(result.errors)")
            }
        }
    }
}

public struct TestbedError: Error, CustomStringConvertible {
    public let message: String
    public var description: String { message }
}
