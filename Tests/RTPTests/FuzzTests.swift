import MediaNegotiation
import SDP
import Platform
import AudioAnalysis
import Foundation
import Opus
import RTP
import Testing

/// Seeded mutation fuzzing of everything that reads bytes from the network or a peer.
///
/// Each test runs `RTP_FUZZ_ITERATIONS` inputs (100,000 by default, so the debug test run
/// stays short); `Tools/interop/release-checks` runs 1,000,000 of each in a release build.
/// Inputs are valid seeds mutated by bit flips, byte sets, insertions, deletions, truncation,
/// splices, extreme length fields, or plain random bytes. A crash or hang fails the run;
/// each test also has a time limit.
@Suite("Fuzzing: RTP, RTCP, Opus payload, SDP")
struct FuzzTests {
    static let iterations = Int(ProcessInfo.processInfo.environment["RTP_FUZZ_ITERATIONS"] ?? "") ?? 100_000

    struct Mutator {
        var random: SeededRandom

        mutating func int(_ n: Int) -> Int { n <= 0 ? 0 : Int(random.next() % UInt64(n)) }

        mutating func mutate(_ seed: [UInt8], others: [[UInt8]]) -> [UInt8] {
            var x = seed
            for _ in 0..<(1 + int(4)) {
                switch int(9) {
                case 0 where !x.isEmpty:  // flip a bit
                    x[int(x.count)] ^= UInt8(1 << int(8))
                case 1 where !x.isEmpty:  // set a byte to an interesting value
                    x[int(x.count)] = [0, 1, 0x7F, 0x80, 0xFF, 0xFE, 252, 255][int(8)]
                case 2:  // insert random bytes
                    let at = int(x.count + 1)
                    x.insert(contentsOf: (0..<(1 + int(8))).map { _ in UInt8(truncatingIfNeeded: random.next()) }, at: at)
                case 3 where !x.isEmpty:  // delete a range
                    let at = int(x.count)
                    x.removeSubrange(at..<min(x.count, at + 1 + int(8)))
                case 4:  // truncate
                    x = Array(x.prefix(int(x.count + 1)))
                case 5 where !others.isEmpty:  // splice with another seed
                    let other = others[int(others.count)]
                    let cut = int(min(x.count, other.count) + 1)
                    x = Array(x.prefix(cut)) + Array(other.dropFirst(cut))
                case 6 where x.count >= 4:  // an extreme 16-bit length field somewhere
                    let at = int(x.count - 1)
                    x[at] = 0xFF
                    x[at + 1] = [0x00, 0xFF, 0x01][int(3)]
                case 7:  // duplicate a chunk
                    if !x.isEmpty {
                        let at = int(x.count)
                        x += x[at..<min(x.count, at + 1 + int(16))]
                    }
                default:  // random bytes
                    x = (0..<int(64)).map { _ in UInt8(truncatingIfNeeded: random.next()) }
                }
            }
            return x
        }
    }

    static func opusSeeds() throws -> [[UInt8]] {
        var seeds: [[UInt8]] = [[0x48, 1, 2, 3], [0x09, 1, 2], [0x0B, 0x83, 1, 2, 3, 4, 5], [0xF8, 0xFF, 0xFE]]
        for (rate, ms) in [(16000, 20), (16000, 60), (48000, 10)] {
            let encoder = try OpusEncoder(sampleRate: rate, channels: 1, application: .voip)
            try encoder.setInbandFEC(true)
            try encoder.setExpectedPacketLoss(percent: 10)
            let frames = rate * ms / 1000
            for k in 0..<3 { seeds.append(try encoder.encode((0..<frames).map { Int16(4000 * sin(Double(k * frames + $0) * 0.03)) })) }
        }
        return seeds
    }

    @Test("RTP datagrams through the parser, the validator and the jitter buffer")
    func rtp() throws {
        let opus = try Self.opusSeeds()
        var seeds: [[UInt8]] = []
        for (i, payload) in opus.enumerated() {
            var h = RTPHeader(marker: i % 2 == 0, payloadType: 96, sequenceNumber: UInt16(i), timestamp: UInt32(i * 960), ssrc: 5)
            seeds.append(try h.packet(payload: payload))
            h.csrcs = [1, 2, 3]
            h.extensionProfile = 0xBEDE
            seeds.append(try h.packet(payload: payload, extensionData: [1, 2, 3, 4], padding: 3))
        }
        var mutator = Mutator(random: SeededRandom(seed: 0xF022))
        var validator = RTPSourceValidator()
        var buffer = JitterBuffer(decoder: try OpusDecoder(sampleRate: 16000))
        let source = try SocketAddress(host: "127.0.0.1", port: 9)
        var out = [Int16](repeating: 0, count: 320)
        var accepted = 0
        let started = Date()
        for i in 0..<Self.iterations {
            // Mostly mutated packets; every 8th a valid in-sequence one so the source locks and the buffer plays.
            let input: [UInt8]
            if i % 8 == 0 {
                var h = try RTPPacket.parse(seeds[0]).header
                h.sequenceNumber = UInt16(truncatingIfNeeded: i / 8)
                h.timestamp = UInt32(truncatingIfNeeded: i / 8 * 960)
                input = try h.packet(payload: opus[(i / 8) % opus.count])
            } else {
                input = mutator.mutate(seeds[mutator.int(seeds.count)], others: seeds)
            }
            let now = UInt64(i) * 2_500_000
            input.withUnsafeBytes { raw in
                _ = try? RTPPacket.parse(raw)
                _ = OpusPayload.parse(raw)
                _ = OpusPayload.hasFEC(raw)
                if case let .accept(packet, payload) = validator.validate(raw, from: source, arrival: now) {
                    accepted += 1
                    buffer.insert(packet, payload: UnsafeRawBufferPointer(rebasing: raw[payload]))
                }
            }
            if i % 8 == 7 { out.withUnsafeMutableBufferPointer { buffer.pull(into: $0, now: now) } }
        }
        #expect(accepted > Self.iterations / 16)
        #expect(Date().timeIntervalSince(started) < Double(Self.iterations) / 1000)
    }

    @Test("RTCP compound packets")
    func rtcp() throws {
        let block = RTCPReportBlock(ssrc: 1, fractionLost: 3, cumulativeLost: -2, extendedHighestSequence: 70000,
                                    jitter: 9, lastSenderReport: 5, delaySinceLastSenderReport: 6)
        let info = RTCPSenderInfo(ntpTimestamp: NTPTimestamp(seconds: 1, fraction: 2), rtpTimestamp: 3, packetCount: 4, octetCount: 5)
        let seeds: [[UInt8]] = try [
            [.receiverReport(ssrc: 1, reports: [block])],
            [.senderReport(ssrc: 2, sender: info, reports: [block, block]),
             .sourceDescription([.init(ssrc: 2, items: [.init(type: 1, text: "cname@host"), .init(type: 2, text: "n")])]),
             .goodbye(sources: [2, 3], reason: "bye")],
            [.receiverReport(ssrc: 1, reports: []), .other(packetType: 204, count: 1, bodyLength: 12)],
        ].map { try RTCPCompound.serialize($0) }
        var mutator = Mutator(random: SeededRandom(seed: 0xC0DE))
        var parsed = 0
        let started = Date()
        for _ in 0..<Self.iterations {
            let input = mutator.mutate(seeds[mutator.int(seeds.count)], others: seeds)
            if let packets = try? RTCPCompound.parse(input) {
                parsed += 1
                // What parses writes back and parses to the same thing (skipped packets keep only their length).
                let skipped = packets.contains { if case .other = $0 { true } else { false } }
                if !skipped, let bytes = try? RTCPCompound.serialize(packets) { #expect(try RTCPCompound.parse(bytes) == packets) }
            }
            _ = input.withUnsafeBytes { RTCPCompound.isRTCP($0) }
        }
        #expect(parsed > 0)
        #expect(Date().timeIntervalSince(started) < Double(Self.iterations) / 1000)
    }

    @Test("Session descriptions")
    func sdp() throws {
        let address = try SocketAddress(host: "127.0.0.1", port: 5004)
        let seeds: [[UInt8]] = [
            Array(AudioSDP.offer(address: address, sessionID: 1, rtcpMux: true).text.utf8),
            Array(AudioSDP.receiverDescription(destination: address, configuration: OpusCallConfiguration()).text.utf8),
            Array("v=0\no=- 1 1 IN IP6 ::1\ns=-\nc=IN IP6 ::1\nt=0 0\nm=audio 9/2 RTP/AVP 0 111\na=rtpmap:111 opus/48000/2\na=fmtp:111 useinbandfec=1;maxaveragebitrate=x\na=rtcp:9 IN IP6 ::1\na=sendonly\n".utf8),
        ]
        var mutator = Mutator(random: SeededRandom(seed: 0x5D9))
        var parsed = 0
        let started = Date()
        for _ in 0..<Self.iterations {
            let text = String(decoding: mutator.mutate(seeds[mutator.int(seeds.count)], others: seeds), as: UTF8.self)
            if let description = try? SessionDescription.parse(text) {
                parsed += 1
                _ = try? AudioSDP.stream(in: description)
                _ = try? AudioSDP.answer(description, address: address, sessionID: 2, parameters: .init())
                _ = description.text
            }
        }
        #expect(parsed > Self.iterations / 20)
        #expect(Date().timeIntervalSince(started) < Double(Self.iterations) / 500)
    }
}
