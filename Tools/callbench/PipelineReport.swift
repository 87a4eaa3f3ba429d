import ToolSupport
import AudioAnalysis
import Foundation

/// The pipeline's measurements.
struct Report: Codable {
    var seconds: Double
    /// Echo return loss enhancement over frames where only the far end talks, in dB.
    var erleDB: Double
    /// Correlation of the decoded audio with the clean near-end speech, aligned.
    var uplinkCorrelation: Double
    var codecLookaheadMs: Double
    var averageBitrate: Double
    var realtimeFactor: Double
    var xruns: Int

    enum CodingKeys: String, CodingKey {
        case seconds, erleDB = "erle_db", uplinkCorrelation = "uplink_correlation",
             codecLookaheadMs = "codec_lookahead_ms", averageBitrate = "average_bitrate",
             realtimeFactor = "realtime_factor", xruns
    }

    static func measure(near: [Float], echo: [Float], mic: [Float], uplink: [Float], received: [Float], lookahead: Int,
                        rate: Int, packetBytes: Int, elapsed: Duration, xruns: Int) -> Report {
        // Far-end single talk: 20 ms frames where the near-end talker is silent and the echo is not,
        // skipping the first 2 s while the canceller converges.
        let frame = rate / 50
        let singleTalk = Levels.farEndSingleTalk(near: near, echo: echo, frame: frame, from: rate * 2, to: near.count - frame,
                                                 nearBelow: -60, echoAbove: -45)
        let seconds = Double(near.count) / Double(rate)
        let alignment = Alignment.find(reference: near, test: received, maxLag: rate / 10)
        let wall = elapsed.seconds
        return Report(seconds: seconds,
                      erleDB: Levels.erle(echo: mic, residual: uplink, over: singleTalk) ?? .nan,
                      uplinkCorrelation: alignment.correlation,
                      codecLookaheadMs: Double(lookahead) * 1000 / Double(rate),
                      averageBitrate: Double(packetBytes * 8) / seconds,
                      realtimeFactor: wall / seconds,
                      xruns: xruns)
    }

    func print(json: Bool, out: String) {
        func f(_ x: Double, _ digits: Int = 1) -> String { String(format: "%.\(digits)f", x) }
        Swift.print("""
            CallAudio uplink pipeline (\(f(seconds)) s at 16 kHz)
              echo removed (far-end single talk)   \(f(erleDB)) dB
              decoded vs clean near-end speech     correlation \(f(uplinkCorrelation, 3))
              Opus                                 \(f(averageBitrate / 1000)) kb/s, lookahead \(f(codecLookaheadMs)) ms
              processing speed                     \(f(1 / max(realtimeFactor, 1e-9), 0))x real time
              xruns                                \(xruns)
            WAV files in \(out)/: near, far, mic, uplink (after echo cancellation), received (after Opus)
            """)
        if json { printJSONLine(self) }
    }
}
