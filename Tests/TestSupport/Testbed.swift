import Foundation

/// The PulseAudio null-sink loopback (`Tools/testbed`), started on demand for real-time tests.
public enum Testbed {
    /// The repository root, found from this file's location.
    public static let repositoryRoot: String = {
        var parts = String(#filePath).split(separator: "/", omittingEmptySubsequences: false)
        parts.removeLast(3)  // Tests/TestSupport/Testbed.swift
        return parts.joined(separator: "/")
    }()

    private static let started: Result<Void, TestbedError> = {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "\(repositoryRoot)/Tools/testbed")
        process.arguments = ["start"]
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
}

public struct TestbedError: Error, CustomStringConvertible {
    public let message: String
    public var description: String { message }
}
