import ALSA
import AudioSession
import Synchronization
@testable import AudioIO
import Foundation
import Testing
import TestSupport

/// Real-time runs through the sound server's null sink and its monitor (PipeWire or PulseAudio,
/// reached through ALSA's `pulse`, `pipewire` and `default` PCMs): a perfect acoustic loopback
/// with a real clock.
/// `Tools/test` runs these on their own after the other tests, so no other test competes for the CPU.
@Suite("Real-time loopback through the sound server", .serialized)
struct RealTimeLoopbackTests {
    static let rate = 48000, period = 960  // 20 ms

    static func pulseDevice(sink: String = "loop") throws -> ALSADuplexDevice {
        try ALSADuplexDevice(
            capture: .configuration(name: "cap_\(sink)", text: "pcm.cap_\(sink) { type pulse device \"\(sink).monitor\" }"),
            playback: .configuration(name: "play_\(sink)", text: "pcm.play_\(sink) { type pulse device \"\(sink)\" }"),
            preferred: IOFormat(sampleRate: rate, periodFrames: period, bufferFrames: period * 4))
    }

    /// A 1 ms click every second from 1.5 s on: PulseAudio settles its stream latency in the first second.
    static func renderClicks(_ capture: UnsafeBufferPointer<Int16>, _ playback: UnsafeMutableBufferPointer<Int16>, _ frame: Int) {
        writeClicks(playback, from: frame, every: rate, offset: rate / 2)
    }

    /// A 1 ms click every `spacing` frames, `offset` frames into each spacing, from 1 s on.
    static func writeClicks(_ playback: UnsafeMutableBufferPointer<Int16>, from frame: Int, every spacing: Int, offset: Int) {
        for i in 0..<playback.count {
            let t = (frame + i) % spacing
            playback[i] = (frame + i >= rate && t >= offset && t < offset + 48) ? 16000 : 0
        }
    }

    /// Onsets (first sample above half the click's level) at least `gap` frames (0.5 s) apart.
    static func onsets(_ x: [Int16], gap: Int = rate / 2) -> [Int] {
        var result: [Int] = []
        var i = 0
        while i < x.count {
            if abs(Int(x[i])) > 8000 { result.append(i); i += gap } else { i += 1 }
        }
        return result
    }

    /// The loopback through each PCM the server offers: `pulse` (PulseAudio's protocol, served by
    /// PulseAudio or pipewire-pulse) and, on PipeWire, its own `pipewire` PCM and `default` (which
    /// the testbed points at it); the last two play to the default sink and hear its monitor.
    static var loopbackPCMs: [String] { Testbed.hasPipeWire ? ["pulse", "pipewire", "default"] : ["pulse"] }

    static func loopbackDevice(_ pcm: String, prefillPeriods: Int? = nil) throws -> ALSADuplexDevice {
        pcm == "pulse" ? try pulseDevice()
            : try ALSADuplexDevice(capture: .named(pcm), playback: .named(pcm),
                                   preferred: IOFormat(sampleRate: rate, periodFrames: period, bufferFrames: period * 4),
                                   prefillPeriods: prefillPeriods)
    }

    @Test("10 s at 20 ms periods: no xruns, 10 s +- 2 % of wall time, click delays that match the device's report",
          arguments: loopbackPCMs)
    func tenSecondsInRealTime(pcm: String) async throws {
        try Testbed.start()
        let device = try Self.loopbackDevice(pcm)
        #expect(device.format.sampleRate == Self.rate && device.format.periodFrames == Self.period)
        let recorder = CallbackRecorder(seconds: 11, sampleRate: Self.rate, periodFrames: Self.period,
                                        render: Self.renderClicks)
        let engine = AudioIOEngine(device: device) { recorder.process($0) }
        let periods = 500
        try engine.start()
        try await recorder.wait(forPeriods: periods + 1, of: engine, timeout: .seconds(20))
        engine.stop()
        #expect(engine.lastError == nil)
        #expect(engine.statistics.xruns == 0)

        // Wall time of 500 periods, from the host times the engine stamped on each.
        let t = recorder.timings
        let wall = Double(t[periods].hostTimeNanoseconds - t[0].hostTimeNanoseconds) / 1e9
        #expect(abs(wall - 10) <= 0.2, "500 periods took \(wall) s")

        // Each click written at frame p comes back at frame c. That round trip must match what the
        // device reported when the click was written: the median of the raw per-period reports
        // (period + playback delay + capture delay) over the half second around it. PulseAudio's
        // readings wander slowly around the truth (by up to 3.4 ms on a loaded CI machine while
        // the clicks came back after a constant 2965 frames), so each click is held to 5 ms: the
        // check is there to catch a report that does not follow a real change. The round trip is
        // normally constant, but a PulseAudio server that falls behind restarts its stream with a
        // new latency (tens of ms, no ALSA xrun), and echo cancellation needs the report to follow.
        // The smoothed report, which the echo canceller is given, must sit within 3 ms of the steady
        // clicks: inside the 4 ms margin `EchoAlignment` leaves, so the echo's direct path stays causal.
        let played = Self.onsets(recorder.playedArray), heard = Self.onsets(recorder.capturedArray)
        #expect(played.count >= 8)
        // The device may be off by what it says its readings scatter (the jitter it reports):
        // exact through PipeWire's own plugin and PulseAudio itself, a wandering sawtooth
        // through the `pulse` plugin on pipewire-pulse.
        // A click is matched to an onset within half a spacing: a click the server lost (a CI run
        // under load heard one a whole second late, i.e. the next one) is counted, not mismatched.
        var measured: [(delay: Int, device: Int, jitter: Int, smoothed: Int)] = []
        var lost = 0
        for p in played {
            guard let c = heard.first(where: { $0 > p && $0 < p + Self.rate / 2 }) else { lost += 1; continue }
            let k = p / Self.period
            let raw = (max(0, k - 12)..<min(periods, k + 13)).map {
                Self.period + t[$0].playbackDelayFrames + t[$0].captureDelayFrames
            }.sorted()
            measured.append((c - p, raw[raw.count / 2], t[min(periods, k)].roundTripJitterFrames, t[min(periods, k)].roundTripFrames))
        }
        #expect(measured.count >= 7)
        #expect(lost <= 1, "\(lost) of \(played.count) clicks never came back")
        let ms = Self.rate / 1000
        // The `pulse` plugin on pipewire-pulse reports delays that are not the stream's: usually
        // within 20 ms, but a CI run saw 100 to 220 ms reported while every click came back after
        // 70 ms (Docs/audio-io.md). Its reports are printed, not held to the clicks; the echo
        // canceller's own delay estimate is what serves that path.
        let reportsFollowClicks = !(pcm == "pulse" && Testbed.hasPipeWire)
        for m in measured where reportsFollowClicks {
            #expect(abs(m.delay - m.device) <= 5 * ms + 2 * m.jitter,
                    "click came back after \(m.delay) frames; the device reported \(m.device), jitter \(m.jitter)")
        }
        // The smoothed report (what the echo canceller is given), read as each click was played,
        // matches the click's delay within the jitter the device admits. The stream may move once
        // or twice (PipeWire changes its quantum as other streams come and go: 3904 to 3392 frames
        // in one CI run), and the report may hold the old value for the first click after a move.
        let delays = measured.map(\.delay)
        // (Through the `pulse` plugin on pipewire-pulse the stream's latency climbs in steps for
        // seconds: 4416 to 5952 frames in one run; its reports are not held to the clicks either.)
        #expect(!reportsFollowClicks || zip(delays, delays.dropFirst()).count { $0 != $1 } <= 2,
                "the click delay kept moving: \(delays)")
        let reports = (50..<periods).map { t[$0].roundTripFrames }.sorted()
        let reported = reports[reports.count / 2]
        let jitters = (50..<periods).map { t[$0].roundTripJitterFrames }.sorted()
        let jitter = jitters[jitters.count / 2]
        for (i, m) in measured.enumerated() where reportsFollowClicks && (i == 0 || measured[i - 1].delay == m.delay) {
            #expect(abs(m.delay - m.smoothed) <= 3 * ms + 2 * jitter,
                    "a click came back after \(m.delay) frames; the smoothed report was \(m.smoothed), jitter \(jitter)")
        }
        // Held while the readings only wander: the report moves only on a real step.
        let moves = (51..<periods).count { t[$0].roundTripFrames != t[$0 - 1].roundTripFrames }
        // (the pulse plugin on pipewire-pulse: its wandering median leaves the band a few times more)
        #expect(moves <= (reportsFollowClicks ? 5 : 20), "the reported round trip moved \(moves) times with the clicks steady")
        // The engine and the callback allocate nothing; libpulse, inside the ALSA `pulse` plugin's
        // read/write/delay calls, occasionally does (reported, not asserted: it is the OS audio API).
        #expect(recorder.allocationsInCallback == 0)
        print("real-time loopback through \(pcm) on \(Testbed.server): wall \(wall) s for 10 s; \(lost) clicks lost; click delays \(measured.map(\.delay)) frames, device reports \(measured.map(\.device)), smoothed \(reported), jitter \(jitter), moves \(moves); "
              + "allocations on the I/O thread (inside libpulse) \(recorder.allocationsAfterWarmUp)")
    }

    @Test("A speaker override mid-call moves the running stream from the receiver's PCM to the speaker's within 4 periods")
    func routeSwitchMovesRunningStream() async throws {
        try Testbed.start()
        // Receiver and speaker are two PulseAudio sinks; the mic hears only the speaker's (`loop`) monitor.
        let map = try RouteMap.decode(Array("""
            { "pcms": { "receiver": "type pulse device loop2", "speaker": "type pulse device loop",
                        "mic": "type pulse device loop.monitor" },
              "ports": [ { "device": "builtIn", "port": "builtInReceiver", "name": "Receiver", "playback": "receiver" },
                         { "device": "builtIn", "port": "builtInSpeaker", "name": "Speaker", "playback": "speaker" },
                         { "device": "builtIn", "port": "builtInMic", "name": "Microphone", "capture": "mic" } ] }
            """.utf8))
        let hardware = ALSAAudioHardware(routeMap: map)
        let system = AudioSystem(hardware: hardware)
        let session = system.makeSession(name: "call")
        let reasons = Mutex<[AudioSession.RouteChangeReason]>([])
        let token = session.addObserver { note in
            if case let .routeChange(change) = note { reasons.withLock { $0.append(change.reason) } }
        }
        defer { session.removeObserver(token) }
        try session.setCategory(.playAndRecord, mode: .voiceChat)
        try session.setActive(true)
        #expect(session.currentRoute.outputs.first?.portType == .builtInReceiver)

        let format = IOFormat(sampleRate: Self.rate, periodFrames: Self.period, bufferFrames: Self.period * 4)
        let recorder = CallbackRecorder(seconds: 6, sampleRate: Self.rate, periodFrames: Self.period, render: Self.renderClicks)
        let engine = AudioIOEngine(device: try hardware.makeDevice(preferred: format)) { recorder.process($0) }
        hardware.attach(engine)
        try engine.start()
        try await recorder.wait(forPeriods: 150, of: engine)  // 3 s on the receiver
        try session.overrideOutputAudioPort(.speaker)
        let switchedAt = recorder.periods
        try await recorder.wait(forPeriods: switchedAt + 125, of: engine)  // 2.5 s on the speaker
        engine.stop()
        hardware.attach(nil)
        try session.setActive(false, options: .notifyOthersOnDeactivation)

        #expect(engine.lastError == nil)
        #expect(reasons.withLock { $0 }.contains(.override))
        #expect(engine.statistics.deviceSwitches == 1)
        let gap = try #require(hardware.lastSwitchGapSeconds)
        // The new stream's first capture period comes when the server has linked and run it: on
        // pipewire-pulse that took up to 52 ms beyond a period in CI runs (5 to 25 ms usually).
        #expect(gap <= 4 * 0.020, "the switch interrupted the stream for \(gap * 1000) ms")
        // Before the switch the clicks went to the receiver, which the mic does not hear; after it, they come back.
        let heard = Self.onsets(recorder.capturedArray)
        #expect(heard.allSatisfy { $0 > (switchedAt - 5) * Self.period }, "clicks heard before the switch at \(heard)")
        #expect(heard.count >= 1)
        print("route switch: gap \(gap * 1000) ms; clicks heard at frames \(heard)")
    }

    @Test("A rate the device cannot do is negotiated to the nearest it can, and reported")
    func impossibleRateIsNegotiated() throws {
        try Testbed.start()
        let device = try ALSADuplexDevice(
            capture: .configuration(name: "cap_rate", text: "pcm.cap_rate { type pulse device \"loop.monitor\" }"),
            playback: .configuration(name: "play_rate", text: "pcm.play_rate { type pulse device loop }"),
            preferred: IOFormat(sampleRate: 1_000_000, periodFrames: 20_000, bufferFrames: 80_000))
        #expect(device.format.sampleRate < 1_000_000)
        #expect(device.format.sampleRate >= 192_000)
        print("asked for 1 MHz, granted \(device.format)")
    }
}
