import Simulation
import Platform
import AudioAnalysis
import Foundation
import Opus
@testable import RTP
import Synchronization
import Testing
import TestSupport
import WAV

@Suite("RTP sessions on loopback")
struct TransportTests {
    /// Two sessions on loopback; the first sends `seconds` of speech, both run their I/O cycle.
    static func call(host: String = "127.0.0.1", rtcpMux: Bool = false, codec: AudioCodec = .opus, sendsRTCP: Bool = true,
                     seconds: Double, during: ((Int, SocketAddress) -> Void)? = nil) throws -> (RTPSession, RTPSession, [Int16]) {
        var lastError: (any Error)?
        for attempt in 0..<10 {
            let base = UInt16(20000 + Int.random(in: 0..<20000) / 2 * 2 + attempt)
            do {
                let aAddress = try SocketAddress(host: host, port: base & ~1)
                let bAddress = try SocketAddress(host: host, port: (base & ~1) + 2)
                func configuration(_ local: SocketAddress, _ remote: SocketAddress) -> RTPSessionConfiguration {
                    var c = RTPSessionConfiguration(localAddress: local, remoteAddress: remote, rtcpMux: rtcpMux,
                                                    payloadType: codec.staticPayloadType ?? 96)
                    c.codec = codec
                    return c
                }
                var aConfiguration = configuration(aAddress, bAddress)
                aConfiguration.sendsRTCP = sendsRTCP
                let a = try RTPSession(configuration: aConfiguration)
                let b = try RTPSession(configuration: configuration(bAddress, aAddress))
                return (a, b, try run(a, b, seconds: seconds, during: during))
            } catch let error as SocketError {
                lastError = error  // a port in use: try others
            } catch let RTPSessionError.socket(error) {
                lastError = error  // the same, as the session reports a socket it cannot bind
            }
        }
        throw lastError!
    }

    static func run(_ a: RTPSession, _ b: RTPSession, seconds: Double,
                    during: ((Int, SocketAddress) -> Void)?) throws -> [Int16] {
        let speech = try Fixtures.speech(Fixtures.englishFemale).int16Samples
        var sender = try a.makeSender()
        var buffer = try b.makeJitterBuffer()
        a.start()
        b.start()
        var received: [Int16] = []
        var out = [Int16](repeating: 0, count: 320)
        let start = MonotonicClock.nanoseconds()
        for k in 0..<Int(seconds * 50) {
            let deadline = start + UInt64(k) * 20_000_000
            while MonotonicClock.nanoseconds() < deadline { usleep(1000) }
            let now = MonotonicClock.nanoseconds()
            speech.withUnsafeBufferPointer { _ = sender.send(UnsafeBufferPointer(rebasing: $0[(k * 320)..<((k + 1) * 320)]), now: now) }
            during?(k, b.localAddress)
            buffer.receive(from: b.ring)
            out.withUnsafeMutableBufferPointer { buffer.pull(into: $0, now: now) }
            received += out
        }
        // B stops first: its last report (with BYE) reaches A, which is still listening.
        b.stop()
        usleep(50_000)
        a.stop()
        return received
    }

    @Test("A call on loopback: packets, RTCP with RTT, loss and jitter, then BYE")
    func session() throws {
        let (a, b, received) = try Self.call(seconds: 3.5)
        let sa = a.statistics, sb = b.statistics
        #expect(sa.packetsSent == 175)
        #expect(sb.packetsReceived >= 170 && sb.droppedProbation == 1)
        #expect(sb.packetsLost == 0 && sb.jitterMs < 5)
        #expect(sa.rtcpSent >= 2 && sb.rtcpSent >= 2)
        #expect(sa.remoteReports >= 1 && sa.rttMs != nil && sa.rttMs! < 50)
        #expect(sa.rtcpDropped == 0 && sb.rtcpDropped == 0)
        #expect(b.jitterMonitor.snapshot.packetsInserted >= 170)
        #expect(Levels.rms(received.map { Float($0) / 32768 }) > 0.01)
    }

    @Test("G.722 and G.711 calls on loopback: every packet through, jitter and RTT on the codec's clock",
          arguments: [AudioCodec.g722, .pcmu])
    func sampledCodecs(codec: AudioCodec) throws {
        // 3.5 s: A's first sender report may leave as late as 3.08 s (RFC 3550's first interval,
        // 2.5 s, times 1.5 over e - 3/2), and B's report that answers it (its BYE at the end) must
        // come after; in 3 s a call sometimes had no RTT.
        let (a, b, received) = try Self.call(codec: codec, seconds: 3.5)
        let sa = a.statistics, sb = b.statistics
        #expect(sa.packetsSent == 175)
        #expect(sb.packetsReceived >= 170 && sb.droppedTotal <= 1)
        #expect(sb.packetsLost == 0 && sb.jitterMs < 5)
        #expect(sa.remoteReports >= 1 && sa.rttMs != nil && sa.rttMs! < 50)
        #expect(b.jitterMonitor.snapshot.packetsInserted >= 170 && b.jitterMonitor.snapshot.concealedMs < 100)
        #expect(Levels.rms(received.map { Float($0) / 32768 }) > 0.01)
    }

    @Test("A session that sends no RTCP (a Janus room's port decodes every datagram as Opus): no report and no BYE leave it, media flows both ways")
    func withoutRTCP() throws {
        let (a, b, received) = try Self.call(rtcpMux: true, sendsRTCP: false, seconds: 3.5)
        #expect(a.statistics.rtcpSent == 0 && b.statistics.rtcpReceived == 0)
        #expect(b.statistics.rtcpSent >= 2 && a.statistics.rtcpReceived >= 1, "the peer's own reports still come and are read")
        #expect(b.statistics.packetsReceived >= 170)
        #expect(Levels.rms(received.map { Float($0) / 32768 }) > 0.01)
    }

    @Test("rtcp-mux and IPv6")
    func muxAndIPv6() throws {
        let (a, b, _) = try Self.call(host: "::1", rtcpMux: true, seconds: 3.5)
        #expect(a.localRTCPAddress == a.localAddress)
        #expect(b.statistics.packetsReceived >= 170)
        #expect(a.statistics.remoteReports >= 1 && a.statistics.rttMs != nil)
    }

    @Test("A flood from another address during a call is dropped and counted, the call goes on")
    func flood() throws {
        let attacker = try UDPSocket(bindingTo: SocketAddress(host: "127.0.0.1", port: 0))
        var junk = SeededRandom(seed: 3)
        var flooded = 0
        let (_, b, _) = try Self.call(seconds: 2) { k, target in
            guard k >= 10 else { return }
            for i in 0..<20 {
                // Valid RTP with its own SSRC, and random bytes.
                let valid = try! RTPHeader(payloadType: 96, sequenceNumber: UInt16(k * 20 + i), timestamp: UInt32(k * 960),
                                           ssrc: 77).packet(payload: [0x48, 1, 2])
                let bytes = i % 2 == 0 ? valid : (0..<Int(junk.next() % 100)).map { _ in UInt8(truncatingIfNeeded: junk.next()) }
                if attacker.send(bytes, to: target) == .sent { flooded += 1 }
            }
        }
        let s = b.statistics
        #expect(s.packetsReceived >= 95)
        #expect(s.sourceChanges == 1)
        #expect(s.droppedForeignSource + s.droppedMalformed + s.droppedWrongPayloadType == flooded)
        #expect(s.ringOverruns == 0)
        // Everything accepted reached the jitter buffer (but the last packet or two, after the last cycle).
        #expect(s.packetsReceived - b.jitterMonitor.snapshot.packetsInserted <= 2)
    }
}
