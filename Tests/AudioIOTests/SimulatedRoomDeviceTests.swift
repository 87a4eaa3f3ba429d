@testable import AudioIO
import AudioAnalysis
import Foundation
import Simulation
import Testing
import TestSupport

@Suite("Simulated room device")
struct SimulatedRoomDeviceTests {
    static let rate = 16000, period = 320

    /// A room whose response is a single tap `tap` samples in, at half amplitude.
    static func singleTapRoom(tap: Int, paced: Bool = false, near: [Float] = [], seconds: Double = 12) throws -> SimulatedRoomDevice {
        var ir = [Float](repeating: 0, count: tap + 1)
        ir[tap] = 0.5
        return try SimulatedRoomDevice(.init(sampleRate: rate, periodFrames: period, prefillPeriods: 3,
                                             echoPath: EchoPathConfiguration(sampleRate: rate, impulseResponse: ir),
                                             nearSpeech: near, noiseRMS: 0, paced: paced, recordSeconds: seconds))
    }

    @Test("A click comes back after the reported round trip plus the room's own delay, without allocation")
    func echoArrivesAfterReportedRoundTrip() async throws {
        let device = try Self.singleTapRoom(tap: 40)
        // One click per second.
        let recorder = CallbackRecorder(seconds: 11, sampleRate: Self.rate, periodFrames: Self.period) { _, playback, frame in
            for i in 0..<playback.count { playback[i] = (frame + i) % Self.rate == 1000 ? 20000 : 0 }
        }
        let engine = AudioIOEngine(device: device, realtimePriority: nil) { recorder.process($0) }
        try await recorder.run(engine, periods: 500)  // 10 s
        let captured = recorder.capturedArray
        let onsets = (0..<captured.count).filter { captured[$0] > 5000 }
        #expect(onsets.count >= 9)
        for c in onsets {
            let p = (c - 40 - 3 * Self.period)
            #expect(p % Self.rate == 1000, "echo at \(c) is not 3 periods + 40 samples after a click")
            #expect(recorder.timings[c / Self.period].roundTripFrames == 3 * Self.period)
        }
        #expect(recorder.allocationsAfterWarmUp == 0, "the I/O thread allocated \(recorder.allocationsAfterWarmUp) times")
        // The device recorded the loudspeaker and the microphone.
        let recording = device.recording
        #expect(recording.played.count == recording.captured.count)
        #expect(recording.played.count >= 10 * Self.rate)
    }

    @Test("Paced, the room runs in real time")
    func pacedRunsInRealTime() async throws {
        let device = try Self.singleTapRoom(tap: 0, paced: true, seconds: 3)
        let recorder = CallbackRecorder(seconds: 3, sampleRate: Self.rate, periodFrames: Self.period) { _, playback, _ in
            playback.update(repeating: 0)
        }
        let engine = AudioIOEngine(device: device, realtimePriority: nil) { recorder.process($0) }
        try await recorder.run(engine, periods: 101)
        let t = recorder.timings
        let wall = Double(t[100].hostTimeNanoseconds - t[0].hostTimeNanoseconds) / 1e9
        #expect(abs(wall - 2) <= 0.04, "100 periods of 20 ms took \(wall) s")
    }

    @Test("Near-end speech reaches the capture as given when nothing plays")
    func nearSpeechPassesThrough() async throws {
        let speech = Tone.sine(frequency: 440, sampleRate: Self.rate, seconds: 1, amplitude: 0.25)
        let device = try Self.singleTapRoom(tap: 0, near: speech, seconds: 2)
        let recorder = CallbackRecorder(seconds: 2, sampleRate: Self.rate, periodFrames: Self.period) { _, playback, _ in
            playback.update(repeating: 0)
        }
        let engine = AudioIOEngine(device: device, realtimePriority: nil) { recorder.process($0) }
        try await recorder.run(engine, periods: 40)
        let got = recorder.capturedArray.prefix(Self.rate).map { Float($0) / 32768 }
        #expect(Alignment.correlation(speech, got, lag: 0) > 0.9999)
    }
}
