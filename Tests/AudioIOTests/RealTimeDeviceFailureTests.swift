import ALSA
@testable import AudioIO
import Foundation
import Synchronization
import Testing
import TestSupport

/// A sound server that stalls or dies under a running stream: the engine must notice within
/// half a second, stop its thread (no spinning, no poll that never returns) and say why; a
/// server that comes back must open again. These tests stop and kill the testbed's server, so
/// `Tools/test` runs them on their own, after the other real-time suites.
@Suite("Real-time device failure", .serialized)
struct RealTimeDeviceFailureTests {
    static let format = IOFormat(sampleRate: 48000, periodFrames: 960, bufferFrames: 3840)

    /// The testbed's default speakers and microphone through the PCM `pcm` (`pipewire` or `pulse`).
    static func device(_ pcm: String) throws -> ALSADuplexDevice {
        try ALSADuplexDevice(capture: .named(pcm), playback: .named(pcm), preferred: format)
    }

    static var pcms: [String] { Testbed.hasPipeWire ? ["pipewire", "pulse"] : ["pulse"] }

    /// Runs an engine on `pcm` for a second, then does `harm` to the server, and returns the
    /// error the engine reported and how long after the harm it came.
    static func failure(on pcm: String, after harm: (pid_t) -> Void) async throws -> (IOError?, Duration, AudioIOEngine) {
        try Testbed.start()
        let reported = Mutex<(IOError, ContinuousClock.Instant)?>(nil)
        let engine = AudioIOEngine(device: try device(pcm), onFailure: { error in
            reported.withLock { $0 = (error, .now) }
        }) { cycle in cycle.playback.update(repeating: 0) }
        try engine.start()
        try await Task.sleep(for: .seconds(1))
        #expect(engine.isRunning, "the stream did not run before the harm")
        let harmed = ContinuousClock.now
        harm(try Testbed.serverPID())
        let deadline = harmed + .seconds(5)
        while reported.withLock({ $0 }) == nil, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(5)) }
        let (error, at) = reported.withLock { $0 } ?? (nil, deadline)
        return (error.map { $0 }, harmed.duration(to: at), engine)
    }

    @Test("A stalled server (SIGSTOP) is detected within 500 ms and the I/O thread stops", arguments: pcms)
    func stalledServer(pcm: String) async throws {
        let (error, detection, engine) = try await Self.failure(on: pcm) { kill($0, SIGSTOP) }
        defer { _ = try? kill(Testbed.serverPID(), SIGCONT) }
        print("\(pcm): stall detected after \(detection), \(error.map(String.init(describing:)) ?? "no error")")
        #expect(error != nil)
        // 300 ms without progress, plus up to a period already under way.
        #expect(detection <= .milliseconds(500))
        #expect(!engine.isRunning)
        #expect(engine.lastError == error)
        engine.stop()  // returns: the thread has ended
    }

    @Test("A killed server is detected within 500 ms; once it is back a device opens and runs again", arguments: pcms)
    func killedServer(pcm: String) async throws {
        let (error, detection, engine) = try await Self.failure(on: pcm) { kill($0, SIGKILL) }
        print("\(pcm): death detected after \(detection), \(error.map(String.init(describing:)) ?? "no error")")
        #expect(error != nil)
        #expect(detection <= .milliseconds(500))
        #expect(!engine.isRunning)
        engine.stop()

        try Testbed.restart()
        let again = AudioIOEngine(device: try Self.device(pcm)) { cycle in cycle.playback.update(repeating: 0) }
        try again.start()
        let deadline = ContinuousClock.now + .seconds(5)
        while again.statistics.periods < 50, again.isRunning, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(10))
        }
        again.stop()
        #expect(again.lastError == nil)
        #expect(again.statistics.periods >= 50)
    }

    @Test("With the server gone, opening says which server is missing and where")
    func missingServerIsNamed() throws {
        try Testbed.start()
        try Testbed.stop()
        defer { try? Testbed.restart() }
        let error = try #require(throws: IOError.self) { try Self.device("pulse") }
        let words = error.explained(forPCM: "pulse")
        print("explained: \(words)")
        #expect(words.contains("PulseAudio"))
        #expect(words.contains("no PulseAudio server is running"))
    }
}
