import ALSA
@testable import AudioIO
import Foundation
import Testing
import TestSupport

/// An I/O thread that falls behind (a loaded machine, a page fault) makes the sound server's
/// streams run dry. After the recovery the device must report the round trip the streams now
/// have: the echo canceller models the path from the samples we write to the samples we read,
/// and a round trip that moves unreported is an echo path that changed under it.
///
/// Part of the loopback suite, which runs its tests one at a time: they share the sinks.
extension RealTimeLoopbackTests {
    /// The callback sleeps this long once, at 3 s: longer than the playback queue (3 periods).
    static let stallMilliseconds = 150
    static let stallPeriod = 150

    @Test("After a callback 150 ms late (an xrun), the round trip the device reports is the one the clicks take",
          arguments: loopbackPCMs)
    func roundTripSurvivesAnXrun(pcm: String) async throws {
        try Testbed.start()
        let device = try Self.loopbackDevice(pcm)
        let stallFrame = Self.stallPeriod * Self.period
        let recorder = CallbackRecorder(seconds: 11, sampleRate: Self.rate, periodFrames: Self.period) { capture, playback, frame in
            Self.renderClicks(capture, playback, frame)
            if frame == stallFrame { usleep(useconds_t(Self.stallMilliseconds * 1000)) }
        }
        let engine = AudioIOEngine(device: device) { recorder.process($0) }
        try engine.start()
        try await recorder.wait(forPeriods: 501, of: engine, timeout: .seconds(20))
        engine.stop()
        #expect(engine.lastError == nil)

        let played = Self.onsets(recorder.playedArray)
        let heard = Self.onsets(recorder.capturedArray)
        let t = recorder.timings
        var before: [Int] = [], after: [(delay: Int, reported: Int)] = []
        for p in played {
            // The click written during the stall's recovery is skipped: it may be cut.
            guard let c = heard.first(where: { $0 > p }), abs(p - stallFrame) > Self.rate / 4 else { continue }
            if p < stallFrame { before.append(c - p) } else { after.append((c - p, t[p / Self.period].roundTripFrames)) }
        }
        let xruns = engine.statistics.xruns
        print("xrun recovery through \(pcm) on \(Testbed.server): \(xruns) xruns; click round trips before the stall \(before), "
              + "after \(after.map(\.delay)) frames, reported after \(after.map(\.reported))")
        #expect(before.count >= 2 && after.count >= 5)
        // The `pulse` plugin hides underruns from ALSA (the server plays silence, and its stream
        // comes back with a longer latency); what it reports on pipewire-pulse does not follow
        // the stream (RealTimeLoopbackTests), so there is nothing to hold it to.
        guard !(pcm == "pulse" && Testbed.hasPipeWire) else { return }
        if pcm != "pulse" { #expect(xruns >= 1, "a 150 ms stall brought no xrun through \(pcm)") }
        // A restarted stream's round trip depends on where the server's cycle falls, so it may
        // move (PipeWire: by 512-frame steps); the report must move with it, within the 3 ms the
        // echo canceller's alignment allows, so that the canceller's reference moves and its
        // filter still fits. The stream may also move again later, without an xrun; the report,
        // read as each click is played, may then hold the old round trip for the first click
        // after the move (the tracker follows a step within half a second), not for the next.
        let ms = Self.rate / 1000
        let check = {
            for (i, a) in after.enumerated() {
                let previous = i > 0 ? after[i - 1].delay : nil
                let followingStep = previous.map { abs($0 - a.delay) > 3 * ms && abs($0 - a.reported) <= 3 * ms } ?? false
                #expect(abs(a.delay - a.reported) <= 3 * ms || followingStep,
                        "clicks came back after \(a.delay) frames, the device reported \(a.reported)")
            }
        }
        guard pcm == "pulse" else { return check() }
        // On PulseAudio the `pulse` plugin's report after a restart wanders in some runs (CI:
        // 3101 to 3486 frames for clicks steady at 3207, for seconds): recorded, not failed. A
        // delay that moves within a call is the voice-processing issue's to follow.
        withKnownIssue("the pulse plugin's delay report wanders after an xrun on PulseAudio", isIntermittent: true) { check() }
    }
}
