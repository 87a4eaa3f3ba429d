import Simulation
import Platform
import Opus
import RTP

/// One direction of a call in virtual time: Opus encoder -> RTP -> seeded impairment
/// -> jitter buffer pulled every frame. Deterministic and much faster than real time.
struct CallSimulation {
    var opus = OpusCallConfiguration()
    var jitter = JitterBufferConfiguration()
    var profile = ImpairmentProfile()
    var seed: UInt64 = 1
    /// The receiver's clock runs this much faster than the sender's (parts per million).
    var receiverDriftPPM = 0.0
    /// Offset of the receiver's pulls relative to the sender's frames, in milliseconds.
    var pullPhaseMs = 7.0
    /// How much audio each pull takes, in milliseconds (a sound card's period; nil: one packet).
    var pullMs: Double?
    /// The fixed network delay under the impairment, in milliseconds.
    var baseDelayMs = 0.0
    /// Extra datagrams to interleave (e.g. a flood), given the frame index and send time.
    var extraPackets: ((Int, UInt64) -> [(datagram: [UInt8], arrival: UInt64)])?

    struct Result {
        var received: [Int16]
        var statistics: JitterBufferStatistics
        /// Each delivered packet's delay beyond the smallest, in ms (the jitter applied).
        var relativeDelaysMs: [Double]
        var sentPackets: Int
        var dropped: [RTPDropReason: Int]
        /// The encoder's lookahead in samples.
        var lookahead: Int
        /// The buffer's statistics after every pull.
        var trace: [JitterBufferStatistics]
    }

    struct Arrival {
        var time: UInt64
        var order: Int
        var datagram: [UInt8]
        var source: Int
    }

    func run(_ speech: [Int16], tailMs: Int = 500) throws -> Result {
        let frame = opus.framesPerPacket * opus.channels
        var encoder = try RTPAudioEncoder(configuration: opus,
                                         packetizer: RTPPacketizer(payloadType: 96, ssrc: 0x1234_5678,
                                                                   sequenceNumber: 65000, timestamp: 4_294_000_000))
        let lookahead = try opus.makeEncoder().lookahead
        var model = ImpairmentModel(profile: profile, seed: seed)
        var arrivals: [Arrival] = []
        var delays: [Double] = []
        var sent = 0
        let frameNs = UInt64(opus.frameMilliseconds) * 1_000_000
        var datagram = [UInt8](repeating: 0, count: RTPAudioEncoder.maxDatagramSize)
        let frames = speech.count / frame
        for k in 0..<frames {
            let sendTime = UInt64(k) * frameNs + 1_000_000_000
            let n = try speech.withUnsafeBufferPointer { pcm in
                try datagram.withUnsafeMutableBytes { out in
                    try encoder.encode(UnsafeBufferPointer(rebasing: pcm[(k * frame)..<((k + 1) * frame)]), into: out)
                }
            }
            if let extra = extraPackets {
                for (bytes, time) in extra(k, sendTime) {
                    arrivals.append(Arrival(time: time, order: arrivals.count, datagram: bytes, source: 2))
                }
            }
            guard n > 0 else { continue }
            sent += 1
            let decision = model.next()
            for delay in [decision.delayMs, decision.duplicateDelayMs].compactMap({ $0 }) {
                let time = sendTime + UInt64((baseDelayMs + delay) * 1e6)
                arrivals.append(Arrival(time: time, order: arrivals.count, datagram: Array(datagram[0..<n]), source: 1))
                if delay == decision.delayMs { delays.append(delay) }
            }
        }
        arrivals.sort { ($0.time, $0.order) < ($1.time, $1.order) }
        let minDelay = delays.min() ?? 0

        var buffer = JitterBuffer(configuration: jitter, decoder: try opus.makeDecoder())
        var validator = RTPSourceValidator()
        let sourceA = try SocketAddress(host: "127.0.0.1", port: 4000)
        let sourceB = try SocketAddress(host: "127.0.0.2", port: 4000)
        let pullFrames = pullMs.map { Int($0 * Double(opus.sampleRate) / 1000) * opus.channels } ?? frame
        var out = [Int16](repeating: 0, count: pullFrames)
        var received: [Int16] = []
        received.reserveCapacity(speech.count + opus.sampleRate)
        var next = 0
        var trace: [JitterBufferStatistics] = []
        let pullCount = (frames * frame + tailMs * opus.sampleRate / 1000 * opus.channels) / pullFrames
        let periodNs = Double(pullFrames / opus.channels) * 1e9 / Double(opus.sampleRate) / (1 + receiverDriftPPM * 1e-6)
        for k in 0..<pullCount {
            let now = UInt64(1_000_000_000 + pullPhaseMs * 1e6 + Double(k) * periodNs)
            while next < arrivals.count, arrivals[next].time <= now {
                let a = arrivals[next]
                next += 1
                a.datagram.withUnsafeBytes { raw in
                    let verdict = validator.validate(raw, from: a.source == 1 ? sourceA : sourceB, arrival: a.time)
                    if case let .accept(packet, payload) = verdict {
                        buffer.insert(packet, payload: UnsafeRawBufferPointer(rebasing: raw[payload]))
                    }
                }
            }
            out.withUnsafeMutableBufferPointer { buffer.pull(into: $0, now: now) }
            received += out
            trace.append(buffer.statistics)
        }
        var dropped: [RTPDropReason: Int] = [:]
        for reason in RTPDropReason.allCases { dropped[reason] = validator.dropped(reason) }
        return Result(received: received, statistics: buffer.statistics,
                      relativeDelaysMs: delays.map { $0 - minDelay }, sentPackets: sent, dropped: dropped,
                      lookahead: lookahead, trace: trace)
    }
}

extension Array where Element == Double {
    /// The value below which a fraction `q` of the elements lie.
    func percentile(_ q: Double) -> Double {
        guard !isEmpty else { return 0 }
        let s = sorted()
        return s[Swift.min(s.count - 1, Int(q * Double(s.count)))]
    }
}
