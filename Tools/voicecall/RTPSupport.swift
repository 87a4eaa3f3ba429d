import ToolSupport
import Simulation
import Platform
import Foundation
import Glibc
import RTP

/// What `voicecall rtp` prints: a summary, and with `--json` one JSON object.
struct RTPEndpointReport: Encodable {
    var packetsSent: Int
    var packetsReceived: Int
    var packetsLost: Int
    var fecRecovered: Int
    var concealedMs: Double
    var jitterMs: Double
    var rttMs: Double?
    var late: Int
    var duplicates: Int
    var droppedPackets: Int
    var meanDelayMs: Double
    var targetDelayMs: Double
    var expectedLossPercent: Int
    var seconds: Double
    var outputRate: Int
    var localRTP: String
    var localRTCP: String
    var session: RTPSessionStatistics
    var jitterBuffer: JitterBufferStatistics
    var relay: RelayReport?

    struct RelayReport: Encodable {
        var forwarded: Int, dropped: Int, duplicated: Int
        var jitterP95Ms: Double

        enum CodingKeys: String, CodingKey {
            case forwarded, dropped, duplicated, jitterP95Ms = "jitter_p95_ms"
        }
    }

    enum CodingKeys: String, CodingKey {
        case packetsSent = "packets_sent", packetsReceived = "packets_received", packetsLost = "packets_lost",
             fecRecovered = "fec_recovered", concealedMs = "concealed_ms", jitterMs = "jitter_ms", rttMs = "rtt_ms",
             late, duplicates, droppedPackets = "dropped_packets", meanDelayMs = "mean_delay_ms",
             targetDelayMs = "target_delay_ms", expectedLossPercent = "expected_loss_percent", seconds,
             outputRate = "output_rate", localRTP = "local_rtp", localRTCP = "local_rtcp", session,
             jitterBuffer = "jitter_buffer", relay
    }

    init(session: RTPSessionStatistics, jitter: JitterBufferStatistics, relay: ImpairmentRelay.Statistics?,
         seconds: Double, outputRate: Int, localRTP: String, localRTCP: String) {
        packetsSent = session.packetsSent
        packetsReceived = session.packetsReceived
        packetsLost = max(0, session.packetsLost)
        fecRecovered = jitter.fecRecovered
        concealedMs = jitter.concealedMs
        jitterMs = session.jitterMs
        rttMs = session.rttMs
        late = jitter.late
        duplicates = jitter.duplicates
        droppedPackets = session.droppedTotal
        meanDelayMs = jitter.meanDelayMs
        targetDelayMs = jitter.targetDelayMs
        expectedLossPercent = session.expectedLossPercent
        self.seconds = seconds
        self.outputRate = outputRate
        self.localRTP = localRTP
        self.localRTCP = localRTCP
        self.session = session
        jitterBuffer = jitter
        self.relay = relay.map { RelayReport(forwarded: $0.forwarded, dropped: $0.dropped, duplicated: $0.duplicated,
                                                   jitterP95Ms: $0.jitterP95Ms) }
    }

    func print(json: Bool) {
        func f(_ x: Double, _ digits: Int = 1) -> String { String(format: "%.\(digits)f", x) }
        let s = session, j = jitterBuffer
        Swift.print("""
            RTP endpoint \(localRTP) (RTCP \(localRTCP)), \(f(seconds)) s, received audio at \(outputRate) Hz
              sent        \(s.packetsSent) packets, \(s.octetsSent) payload bytes, expected loss \(s.expectedLossPercent) %
              received    \(s.packetsReceived) packets, lost \(packetsLost), jitter \(f(s.jitterMs)) ms, \
            rtt \(s.rttMs.map { f($0) + " ms" } ?? "-")
              dropped     \(s.droppedTotal) (malformed \(s.droppedMalformed), payload type \(s.droppedWrongPayloadType), \
            other source \(s.droppedForeignSource), other SSRC \(s.droppedForeignSSRC), probation \(s.droppedProbation), \
            sequence \(s.droppedBadSequence)), ring overruns \(s.ringOverruns)
              jitter buf  target \(f(j.targetDelayMs)) ms, mean delay \(f(j.meanDelayMs)) ms, late \(j.late), \
            duplicates \(j.duplicates), lost \(j.lost) (FEC recovered \(j.fecRecovered)), concealed \(f(j.concealedMs, 0)) ms, \
            comfort noise \(f(j.comfortNoiseMs, 0)) ms
              RTCP        sent \(s.rtcpSent), received \(s.rtcpReceived), dropped \(s.rtcpDropped)
            """)
        if let relay {
            Swift.print("  relay       forwarded \(relay.forwarded), dropped \(relay.dropped), duplicated \(relay.duplicated), "
                        + "jitter p95 \(f(relay.jitterP95Ms)) ms")
        }
        if json {
            printJSONLine(self)
        }
    }
}
