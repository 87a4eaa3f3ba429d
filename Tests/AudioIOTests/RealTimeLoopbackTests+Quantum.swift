import ALSA
@testable import AudioIO
import Foundation
import Testing
import TestSupport

/// Another application that plays with a short latency (a notification sound, a game) makes the
/// PipeWire graph run at a smaller quantum, and a stream already running gets a shorter round
/// trip without any xrun. The echo canceller's reference is placed from the device's report, so
/// the report must follow such a step quickly: while it lags, the echo arrives before the
/// reference and passes uncancelled.
extension RealTimeLoopbackTests {
    /// Clicks 200 ms apart, so the report is checked five times a second; the round trip
    /// (under 100 ms here) stays shorter than the spacing, so each click pairs with its echo.
    static func renderDenseClicks(_ capture: UnsafeBufferPointer<Int16>, _ playback: UnsafeMutableBufferPointer<Int16>,
                                  _ frame: Int) {
        writeClicks(playback, from: frame, every: rate / 5, offset: 0)
    }

    @Test("Another client shrinking PipeWire's quantum: the report follows the new round trip within 0.2 s",
          .enabled(if: Testbed.hasPipeWire && ChildProcess.isInstalled("pw-play")))
    func roundTripFollowsAQuantumChange() async throws {
        try Testbed.start()
        let device = try Self.loopbackDevice("pipewire")
        let recorder = CallbackRecorder(seconds: 8, sampleRate: Self.rate, periodFrames: Self.period,
                                        render: Self.renderDenseClicks)
        let engine = AudioIOEngine(device: device) { recorder.process($0) }
        try engine.start()
        try await recorder.wait(forPeriods: 150, of: engine, timeout: .seconds(10))
        // Silent, so the loopback hears only the clicks; its latency is what moves the graph.
        let player = try ChildProcess.spawn(["pw-play", "--latency", "128", "--volume", "0",
                                     "\(Testbed.repositoryRoot)/Tests/Fixtures/speech/en_f_congrats_16k.wav"])
        defer { ChildProcess.stop(player) }
        try await recorder.wait(forPeriods: 301, of: engine, timeout: .seconds(10))
        engine.stop()
        #expect(engine.lastError == nil)

        let spacing = Self.rate / 5
        let played = Self.onsets(recorder.playedArray, gap: spacing / 2)
        let heard = Self.onsets(recorder.capturedArray, gap: spacing / 2)
        let t = recorder.timings
        // A click the step cut pairs with the next one's echo: not a round trip.
        let clicks = played.compactMap { p in
            heard.first { $0 > p }.map { (played: p, delay: $0 - p, reported: t[p / Self.period].roundTripFrames) }
        }.filter { $0.delay < spacing }
        print("quantum change through pipewire: \(engine.statistics.xruns) xruns; click round trips \(clicks.map(\.delay)), "
              + "reported \(clicks.map(\.reported))")
        let ms = Self.rate / 1000
        guard let first = clicks.first, clicks.contains(where: { abs($0.delay - first.delay) > ms }) else {
            Issue.record("the round trip did not move: \(clicks.map(\.delay))")
            return
        }
        // A click is held to the report once the click before it (0.2 s earlier) took the same
        // round trip: a click played just after a move may come before the report could know.
        for (previous, click) in zip(clicks, clicks.dropFirst()) where abs(previous.delay - click.delay) <= ms {
            let k = click.played / Self.period
            let readings = (max(0, k - 20)...k).map { Self.period + t[$0].playbackDelayFrames + t[$0].captureDelayFrames }
            #expect(abs(click.delay - click.reported) <= 3 * ms,
                    "at \(click.played) frames clicks came back after \(click.delay) frames, the device reported \(click.reported); readings in the 0.4 s before: \(readings)")
        }
    }
}
