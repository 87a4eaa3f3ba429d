import ToolSupport
import Simulation
import AudioAnalysis
import AudioIO
import AudioSession
import Foundation
import RTP
import VoiceCall
import WAV

/// What the demo measured, for people (a table) and machines (one JSON line).
struct DemoReport: Encodable {
    struct Endpoint: Encodable {
        var statistics: CallStatistics
        var sessionActive: Bool
        var ended: String
        /// Correlation of what this side's loudspeaker played with the other side's talker, each
        /// second aligned on its own (``AudioAnalysis/Alignment/segmentedCorrelation(reference:test:around:window:search:tracking:)``).
        var receivedCorrelation: Double

        enum CodingKeys: String, CodingKey { case sessionActive = "session_active", ended, receivedCorrelation = "received_correlation" }

        func encode(to encoder: any Encoder) throws {
            try statistics.encode(to: encoder)  // the statistics' keys at the top level of the endpoint
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(sessionActive, forKey: .sessionActive)
            try c.encode(ended, forKey: .ended)
            try c.encode(receivedCorrelation, forKey: .receivedCorrelation)
        }
    }

    struct Latency: Encodable {
        var captureMs, processingMs, codecLookaheadMs, networkMs, jitterBufferMs, playbackBufferMs: Double
        enum CodingKeys: String, CodingKey {
            case captureMs = "capture_ms", processingMs = "processing_ms", codecLookaheadMs = "codec_lookahead_ms"
            case networkMs = "network_ms", jitterBufferMs = "jitter_buffer_ms", playbackBufferMs = "playback_buffer_ms"
        }
    }

    var caller: Endpoint
    var callee: Endpoint
    /// Measured: from the caller's talker to the callee's loudspeaker, by cross-correlation.
    var mouthToEarMs: Double?
    var latencyParts: Latency
    var seconds: Double

    enum CodingKeys: String, CodingKey {
        case caller, callee, mouthToEarMs = "mouth_to_ear_ms", latencyParts = "latency_parts", seconds
    }

    static func measure(caller: DemoEndpoint, callee: DemoEndpoint, callerUplink: [Int16], calleeUplink: [Int16],
                        callerStats: CallStatistics, calleeStats: CallStatistics,
                        callerEnd: CallState, calleeEnd: CallState, networkDelayMs: Double,
                        sampleRate rate: Int) throws -> DemoReport {
        guard let callerRoom = caller.device, let calleeRoom = callee.device else {
            throw DemoError("a side never opened its audio device")
        }
        let callerSpoke = callerRoom.spokenNearSpeech, calleeSpoke = calleeRoom.spokenNearSpeech
        let callerHeard = callerRoom.recording.played, calleeHeard = calleeRoom.recording.played
        // The two rooms started at different moments: express the lag on one clock.
        let startOffset = Double(Int64(bitPattern: calleeRoom.startTimeNanoseconds &- callerRoom.startTimeNanoseconds)) / 1e6
        let forward = Alignment.find(reference: callerSpoke, test: calleeHeard, maxLag: rate)
        let backward = Alignment.find(reference: calleeSpoke, test: callerHeard, maxLag: rate)
        // Mouth to ear once the jitter buffer has settled (it starts a period or two deeper and
        // time-stretches down in the first seconds): the call's second half, aligned on its own.
        // Caller sample n is spoken at callerStart + n/rate; callee sample n + lag is heard at calleeStart + (n + lag)/rate.
        let half = min(callerSpoke.count, calleeHeard.count) / 2
        let settled = Alignment.find(reference: Array(callerSpoke[half...]), test: Array(calleeHeard[half...]), maxLag: rate)
        let mouthToEar = settled.correlation > 0.3 ? Double(settled.lag) * 1000 / Double(rate) + startOffset : nil


        let period = Double(calleeRoom.format.periodFrames) * 1000 / Double(rate)
        let queued = Double(calleeRoom.format.bufferFrames - calleeRoom.format.periodFrames) * 1000 / Double(rate)
        let parts = Latency(captureMs: period, processingMs: callerStats.processingLatencyMs,
                            codecLookaheadMs: callerStats.codecLookaheadMs, networkMs: networkDelayMs,
                            jitterBufferMs: calleeStats.jitterBufferDelayMs, playbackBufferMs: queued)
        // The jitter buffer adapts its delay during the call, so each second of speech is aligned on its own.
        let heardByCallee = Alignment.segmentedCorrelation(reference: callerSpoke, test: calleeHeard, around: forward.lag,
                                                           window: rate, search: rate / 10)
        let heardByCaller = Alignment.segmentedCorrelation(reference: calleeSpoke, test: callerHeard, around: backward.lag,
                                                           window: rate, search: rate / 10)
        func ended(_ s: CallState) -> String { if case let .ended(r) = s { "\(r)" } else { "\(s)" } }
        var callerStats = callerStats, calleeStats = calleeStats
        // ERLE measured, not estimated: echo at the microphone against what left after processing,
        // over the frames where only the far end talks.
        callerStats.erleDB = erle(room: callerRoom, uplink: callerUplink, sampleRate: rate)
        calleeStats.erleDB = erle(room: calleeRoom, uplink: calleeUplink, sampleRate: rate)
        return DemoReport(
            caller: Endpoint(statistics: callerStats, sessionActive: caller.session.isActive, ended: ended(callerEnd),
                             receivedCorrelation: heardByCaller),
            callee: Endpoint(statistics: calleeStats, sessionActive: callee.session.isActive, ended: ended(calleeEnd),
                             receivedCorrelation: heardByCallee),
            mouthToEarMs: mouthToEar, latencyParts: parts, seconds: Double(callerSpoke.count) / Double(rate))
    }

    /// Full-chain ERLE over far-end single talk: 20 ms frames where the local talker is silent and
    /// the echo is not, once the canceller has heard 2 s of echo (its convergence), echo energy at
    /// the microphone over the energy of the processed uplink. Nil when there were no such frames.
    static func erle(room: SimulatedRoomDevice, uplink: [Int16], sampleRate rate: Int) -> Double? {
        let spoken = room.spokenNearSpeech, echo = room.recording.echo
        let processed = uplink.map { Float($0) / 32768 }
        let frame = rate / 50, end = min(spoken.count, echo.count, processed.count)
        // The processed signal lags the microphone by the processing's latency: skip a frame either
        // side of any speech so the talker never leaks into the residual.
        let frames = Levels.farEndSingleTalk(near: spoken, echo: echo, frame: frame, from: frame, to: end - 3 * frame,
                                             nearBelow: -70, echoAbove: -50, nearGuard: frame, skippingEchoFrames: 100)
        return Levels.erle(echo: echo, residual: processed, over: frames, residualFloor: 1e-12)
    }

    func print(json: Bool, out: String) {
        func f(_ x: Double?, _ d: Int = 1) -> String { x.map { String(format: "%.\(d)f", $0) } ?? "-" }
        func row(_ name: String, _ a: String, _ b: String) -> String {
            name.padding(toLength: 30) + a.padding(toLength: 24) + b
        }
        let a = caller.statistics, b = callee.statistics
        let lines = [
            row("", "caller", "callee"),
            row("packets sent / received", "\(a.packetsSent) / \(a.packetsReceived)", "\(b.packetsSent) / \(b.packetsReceived)"),
            row("packets lost", "\(a.packetsLost)", "\(b.packetsLost)"),
            row("FEC recovered / concealed ms", "\(a.fecRecovered) / \(f(a.concealedMs, 0))", "\(b.fecRecovered) / \(f(b.concealedMs, 0))"),
            row("jitter / RTT ms", "\(f(a.jitterMs)) / \(f(a.rttMs))", "\(f(b.jitterMs)) / \(f(b.rttMs))"),
            row("jitter buffer delay ms", f(a.jitterBufferDelayMs), f(b.jitterBufferDelayMs)),
            row("echo removed (ERLE) dB", f(a.erleDB), f(b.erleDB)),
            row("echo delay ms / drift ppm", "\(f(a.echoDelayMs)) / \(f(a.driftPPM))", "\(f(b.echoDelayMs)) / \(f(b.driftPPM))"),
            row("heard vs other talker (corr)", f(caller.receivedCorrelation, 3), f(callee.receivedCorrelation, 3)),
            row("route", a.route, b.route),
            row("audio thread CPU %", f(a.cpuLoad * 100, 2), f(b.cpuLoad * 100, 2)),
            row("xruns", "\(a.xruns)", "\(b.xruns)"),
            row("ended / session active", "\(caller.ended) / \(caller.sessionActive)", "\(callee.ended) / \(callee.sessionActive)"),
        ]
        Swift.print("CallAudio demo: a \(f(seconds)) s call over SIP + RTP on loopback")
        for line in lines { Swift.print("  " + line) }
        let p = latencyParts
        Swift.print("  mouth to ear (measured): \(f(mouthToEarMs)) ms; parts: capture \(f(p.captureMs)), processing \(f(p.processingMs)), "
                    + "codec \(f(p.codecLookaheadMs)), network \(f(p.networkMs)), jitter buffer \(f(p.jitterBufferMs)), playback \(f(p.playbackBufferMs))")
        Swift.print("  recordings: \(out)/caller and \(out)/callee (spoken, captured, echo, uplink and played .wav)")
        if json {
            printJSONLine(self)
        }
    }
}

struct DemoError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
