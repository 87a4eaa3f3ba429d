import Foundation
import WAV

/// The repository's root: `CALLAUDIO_ROOT`, else found from this source file's place
/// (`Tools/aecbench/PythonTools.swift`).
enum Repository {
    static let root: String = {
        if let root = ProcessInfo.processInfo.environment["CALLAUDIO_ROOT"] { return root }
        var parts = String(#filePath).split(separator: "/", omittingEmptySubsequences: false)
        parts.removeLast(3)
        return parts.joined(separator: "/")
    }()

    static var venvPython: String { "\(root)/.venv/bin/python" }
}

/// Runs a command; returns its exit status and standard output.
@discardableResult
func runCommand(_ executable: String, _ arguments: [String], echoStderr: Bool = false) throws -> (status: Int32, output: String) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    let out = Pipe()
    process.standardOutput = out
    process.standardError = echoStderr ? FileHandle.standardError : FileHandle.nullDevice
    try process.run()
    let data = out.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return (process.terminationStatus, String(decoding: data, as: UTF8.self))
}

/// The last line of `text` that parses as a JSON object.
func lastJSONObject(_ text: String) -> [String: Any]? {
    for line in text.split(separator: "\n").reversed() {
        if let data = line.data(using: .utf8), let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any] {
            return object
        }
    }
    return nil
}

/// WebRTC AEC3 through `Tools/scoring/aec3.py` (the `aec-audio-processing` wheel in `.venv`).
enum AEC3 {
    struct Unavailable: Error, CustomStringConvertible {
        var description: String
    }

    /// Whether the wheel imports; with `install`, builds it into `.venv` first if needed
    /// (it compiles WebRTC's audio processing: a few minutes, once).
    static func isAvailable(install: Bool) -> Bool {
        if check() { return true }
        guard install else { return false }
        FileHandle.standardError.write(Data("aecbench: installing WebRTC AEC3 (aec-audio-processing) into .venv; it compiles, a few minutes, once\n".utf8))
        _ = try? runCommand("/usr/bin/env", ["python3", "\(Repository.root)/Tools/scoring/aec3.py", "--install"], echoStderr: true)
        return check()
    }

    private static func check() -> Bool {
        guard FileManager.default.isExecutableFile(atPath: Repository.venvPython) else { return false }
        return (try? runCommand(Repository.venvPython, ["-c", "import aec_audio_processing"]).status) == 0
    }

    static func run(far: [Float], mic: [Float], sampleRate: Int, workDirectory: String) throws -> EngineResult {
        guard check() else { throw Unavailable(description: "WebRTC AEC3 is not installed (run Tools/scoring/aec3.py --install)") }
        let farPath = "\(workDirectory)/aec3-far.wav", micPath = "\(workDirectory)/aec3-mic.wav", outPath = "\(workDirectory)/aec3-out.wav"
        try WAV.write(WAVAudio(sampleRate: sampleRate, samples: far), to: farPath)
        try WAV.write(WAVAudio(sampleRate: sampleRate, samples: mic), to: micPath)
        defer { for p in [farPath, micPath, outPath] { try? FileManager.default.removeItem(atPath: p) } }
        let result = try runCommand(Repository.venvPython, ["\(Repository.root)/Tools/scoring/aec3.py",
                                                             "--far", farPath, "--mic", micPath, "--out", outPath])
        guard result.status == 0, let json = lastJSONObject(result.output) else {
            throw Unavailable(description: "aec3.py failed (status \(result.status))")
        }
        let output = try WAV.read(outPath).samples
        return EngineResult(output: output, linear: nil, seconds: (json["seconds"] as? Double) ?? 0)
    }
}

/// PESQ (wideband) and STOI through `Tools/score` (pesq and pystoi in `.venv`, installed on first use).
enum SpeechQuality {
    static func isAvailable() -> Bool {
        FileManager.default.isExecutableFile(atPath: "\(Repository.root)/Tools/score")
    }

    static func score(reference: [Float], degraded: [Float], sampleRate: Int, workDirectory: String) -> (pesq: Double, stoi: Double)? {
        let ref = "\(workDirectory)/score-ref.wav", deg = "\(workDirectory)/score-deg.wav"
        defer { try? FileManager.default.removeItem(atPath: ref); try? FileManager.default.removeItem(atPath: deg) }
        guard (try? WAV.write(WAVAudio(sampleRate: sampleRate, samples: reference), to: ref)) != nil,
              (try? WAV.write(WAVAudio(sampleRate: sampleRate, samples: degraded), to: deg)) != nil,
              let result = try? runCommand("\(Repository.root)/Tools/score", [ref, deg], echoStderr: true),
              result.status == 0, let json = lastJSONObject(result.output),
              let pesq = json["pesq"] as? Double, let stoi = json["stoi"] as? Double
        else { return nil }
        return (pesq, stoi)
    }
}
