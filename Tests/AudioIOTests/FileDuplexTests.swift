import ALSA
@testable import AudioIO
import AudioAnalysis
import Foundation
import Testing
import TestSupport

@Suite("Full-duplex engine on file-backed ALSA PCMs")
struct FileDuplexTests {
    static let rate = 48000, period = 960

    /// Writes `samples` as a raw 16-bit file.
    static func writeRaw(_ samples: [Int16], to path: String) throws {
        try samples.withUnsafeBytes { try Data($0).write(to: URL(fileURLWithPath: path)) }
    }

    /// The first `count` samples of a raw 16-bit file (an unpaced playback file can be far longer).
    static func readRaw(_ path: String, count: Int) throws -> [Int16] {
        let handle = try FileHandle(forReadingFrom: URL(fileURLWithPath: path))
        defer { try? handle.close() }
        let data = try handle.read(upToCount: count * 2) ?? Data()
        return data.withUnsafeBytes { Array($0.bindMemory(to: Int16.self)) }
    }

    static func device(_ dir: TemporaryDirectory, _ tag: String) throws -> ALSADuplexDevice {
        try ALSADuplexDevice(
            capture: .file(FilePCMConfiguration(name: "cap\(tag)", inputFile: dir.file("in\(tag).raw"))),
            playback: .file(FilePCMConfiguration(name: "play\(tag)", outputFile: dir.file("out\(tag).raw"))),
            preferred: IOFormat(sampleRate: rate, periodFrames: period, bufferFrames: period * 4))
    }

    @Test("10 s of capture reach the callback and its output reaches the playback file, byte-exact, faster than real time, without allocating")
    func byteExactDuplex() async throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let input = Tone.noise(count: Self.rate * 10, rms: 0.2, seed: 21).map(WAVSample.int16)
        try Self.writeRaw(input, to: dir.file("inA.raw"))
        let device = try Self.device(dir, "A")
        #expect(device.format == IOFormat(sampleRate: Self.rate, periodFrames: Self.period, bufferFrames: Self.period * 4))
        // The callback's output is the bitwise complement of its input: distinct, and checkable.
        let recorder = CallbackRecorder(seconds: 10, sampleRate: Self.rate, periodFrames: Self.period) { capture, playback, frame in
            for i in 0..<capture.count { playback[i] = ~capture[i] }
            // File devices are unpaced: past the input, slow to 1 period per ms, so a test runner
            // that is late to stop the engine does not write gigabytes of playback file meanwhile.
            if frame >= input.count + 4 * Self.period { usleep(1000) }
        }
        // Real-time priority, as in production: the speed measured is the engine's, not the
        // share of the CPU the parallel test runner leaves it.
        let engine = AudioIOEngine(device: device) { recorder.process($0) }
        let periods = input.count / Self.period
        try await recorder.run(engine, periods: periods)
        // The engine's own clock: when the first and the last of the 500 periods were read. (Wall
        // time seen by this test task would include how long the test runner took to wake it.)
        let elapsed = Double(recorder.timings[periods - 1].hostTimeNanoseconds - recorder.timings[0].hostTimeNanoseconds) / 1e9

        #expect(engine.lastError == nil)
        // File devices are not paced, so the engine may run a few periods past the input
        // (capture then reads silence) before the test stops it: compare the first 10 s.
        let seen = Array(recorder.capturedArray.prefix(input.count))
        let played = Array(recorder.playedArray.prefix(input.count))
        #expect(firstDifference(seen, input) == nil)
        #expect(firstDifference(played, input.map { ~$0 }) == nil)
        let prefill = Self.period * 3  // three silent periods queued before playback started
        let file = try Self.readRaw(dir.file("outA.raw"), count: prefill + input.count)
        #expect(file.prefix(prefill).allSatisfy { $0 == 0 })
        #expect(firstDifference(Array(file.dropFirst(prefill).prefix(input.count)), played) == nil)
        #expect(elapsed < 5, "10 s of audio took \(elapsed) s")
        #expect(engine.statistics.xruns == 0)
        #expect(AllocationCounter.isActive)
        #expect(recorder.allocationsAfterWarmUp == 0, "the I/O thread allocated \(recorder.allocationsAfterWarmUp) times")
    }

    @Test("Switching the running stream to another device loses no period and reports the gap")
    func switchesDevicesMidStream() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        // A is long enough that the switch lands inside it however fast the unpaced engine runs.
        let a = Tone.noise(count: Self.rate * 20, rms: 0.2, seed: 22).map(WAVSample.int16)
        let b = Tone.noise(count: Self.rate * 2, rms: 0.2, seed: 23).map(WAVSample.int16)
        try Self.writeRaw(a, to: dir.file("inA.raw"))
        try Self.writeRaw(b, to: dir.file("inB.raw"))
        // File devices are not paced, so the test holds the I/O thread at period 20 until the switch
        // is posted: the switch then lands inside A however loaded the machine is. The test is
        // synchronous so that it keeps its thread and posts the switch at once (see `waitBlocking`).
        let gate = EngineGate()
        let recorder = CallbackRecorder(seconds: 30, sampleRate: Self.rate, periodFrames: Self.period) { capture, playback, frame in
            if frame == 20 * Self.period { gate.waitForPendingSwitch() }
            _ = playback.update(fromContentsOf: capture)
        }
        let engine = AudioIOEngine(device: try Self.device(dir, "A"), realtimePriority: nil) { recorder.process($0) }
        gate.engine = engine
        try engine.start()
        recorder.waitBlocking(forPeriods: 20, of: engine)
        let gap = try engine.switchDevice(to: try Self.device(dir, "B"))
        let switchedAfter = recorder.periods
        recorder.waitBlocking(forPeriods: switchedAfter + 50, of: engine)
        engine.stop()

        #expect(engine.lastError == nil)
        #expect(engine.statistics.deviceSwitches == 1)
        #expect(gap < 2 * 0.020)
        // Capture: a prefix of A, then B from its start, with nothing lost in between.
        let seen = recorder.capturedArray
        guard let switchAt = (0..<(seen.count / Self.period)).first(where: { seen[$0 * Self.period] == b[0] && Array(seen[($0 * Self.period)...].prefix(Self.period)) == Array(b.prefix(Self.period)) }) else {
            Issue.record("B's first period never reached the callback")
            return
        }
        let split = switchAt * Self.period
        #expect(split < a.count, "the switch happened after A ran out")
        #expect(firstDifference(Array(seen[0..<split]), Array(a.prefix(split))) == nil)
        #expect(firstDifference(Array(seen[split...].prefix(b.count)), Array(b.prefix(seen.count - split))) == nil)
    }

    @Test("A PCM that does not exist gives a typed error listing the PCMs that do")
    func missingPCMListsAvailable() {
        let error = #expect(throws: IOError.self) {
            _ = try ALSADuplexDevice(capture: .named("callaudio_missing"), playback: .named("null"),
                                     preferred: IOFormat(sampleRate: 48000, periodFrames: 960, bufferFrames: 3840))
        }
        guard case let .noSuchPCM(name, available)? = error else {
            Issue.record("expected noSuchPCM, got \(String(describing: error))")
            return
        }
        #expect(name == "callaudio_missing")
        #expect(available.contains("null"))
        #expect(error?.description.contains("available: ") == true)
    }
}

/// Lets a test's callback wait (on the I/O thread: a test may block it) until a device switch is posted.
final class EngineGate: @unchecked Sendable {
    // @unchecked: `engine` is set once before the engine starts and only read afterwards.
    var engine: AudioIOEngine?

    /// Holds the I/O thread until the test has posted its switch. The test posts it from the
    /// thread it runs on, so the bound is only there so that a failed test cannot hang the engine.
    func waitForPendingSwitch() {
        let deadline = ContinuousClock.now + .seconds(120)
        while engine?.hasPendingSwitch != true, ContinuousClock.now < deadline { usleep(200) }
    }
}

/// Where two sample arrays first differ, described briefly (nil when equal), so a failure
/// prints one line rather than both arrays.
func firstDifference(_ a: [Int16], _ b: [Int16]) -> String? {
    if let i = (0..<min(a.count, b.count)).first(where: { a[$0] != b[$0] }) { return "index \(i): \(a[i]) vs \(b[i])" }
    return a.count == b.count ? nil : "lengths \(a.count) vs \(b.count)"
}

/// 16-bit conversion shared by these tests.
enum WAVSample {
    static func int16(_ x: Float) -> Int16 { Int16(max(-32768, min(32767, (x * 32768).rounded()))) }
}
