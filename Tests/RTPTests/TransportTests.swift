import AudioAnalysis
import Foundation
import Opus
@testable import RTP
import Synchronization
import Testing
import TestSupport
import WAV

@Suite("UDP transport, relay and sessions on loopback")
struct TransportTests {
    @Test("Addresses parse for IPv4 and IPv6")
    func addresses() throws {
        let v4 = try SocketAddress(parsing: "127.0.0.1:5004")
        #expect(v4.family == .ipv4 && v4.port == 5004 && v4.host == "127.0.0.1" && v4.description == "127.0.0.1:5004")
        let v6 = try SocketAddress(parsing: "[::1]:6000")
        #expect(v6.family == .ipv6 && v6.port == 6000 && v6.host == "::1" && v6.description == "[::1]:6000")
        #expect(try SocketAddress(parsing: "localhost:1").port == 1)
        for bad in ["127.0.0.1", "::1:5", "[::1]5", "host:99999", ":5", "no.such.host.invalid:5"] {
            #expect(throws: SocketError.self) { try SocketAddress(parsing: bad) }
        }
        #expect(v4.with(port: 1) != v4 && v4.with(port: 1).sameHost(as: v4))
        #expect(Set([v4, v4.with(port: 5004), v6]).count == 2)
    }

    @Test("A lookup in one family, and the local end of the route to a peer")
    func familyAndRoute() throws {
        #expect(try SocketAddress(host: "localhost", port: 1, family: .ipv4).host == "127.0.0.1")
        #expect(try SocketAddress(host: "127.0.0.1", port: 1, family: .ipv4).family == .ipv4)
        #expect(throws: SocketError.self) { try SocketAddress(host: "::1", port: 1, family: .ipv4) }
        #expect(throws: SocketError.self) { try SocketAddress(host: "127.0.0.1", port: 1, family: .ipv6) }
        #expect(UDPSocket.localAddress(toward: try SocketAddress(host: "127.0.0.1", port: 9))?.host == "127.0.0.1")
        #expect(UDPSocket.localAddress(toward: try SocketAddress(host: "::1", port: 9))?.host == "::1")
    }

    @Test("Datagrams go both ways on IPv4 and IPv6 loopback", arguments: ["127.0.0.1", "::1"])
    func datagrams(host: String) throws {
        let a = try UDPSocket(bindingTo: SocketAddress(host: host, port: 0))
        let b = try UDPSocket(bindingTo: SocketAddress(host: host, port: 0))
        #expect(a.localAddress.port != 0)
        #expect(a.send([1, 2, 3], to: b.localAddress) == .sent)
        var buffer = [UInt8](repeating: 0, count: 2)
        let result = buffer.withUnsafeMutableBytes { b.receive(into: $0, timeoutMs: 1000) }
        // Two bytes of room for three: the datagram is reported truncated.
        #expect(result == .datagram(length: 2, source: a.localAddress, truncated: true))
        #expect(buffer == [1, 2])
        #expect(buffer.withUnsafeMutableBytes { b.receive(into: $0, timeoutMs: 10) } == .timeout)
    }

    @Test("The relay drops exactly what its seeded model drops, and delays the rest")
    func relay() throws {
        let receiver = try UDPSocket(bindingTo: SocketAddress(host: "127.0.0.1", port: 0))
        let client = try UDPSocket(bindingTo: SocketAddress(host: "127.0.0.1", port: 0))
        let profile = ImpairmentProfile(delayMs: 30, jitterMs: 5, lossPercent: 20, duplicatePercent: 5)
        let relay = try ImpairmentRelay(listen: SocketAddress(host: "127.0.0.1", port: 0), targets: [receiver.localAddress],
                                        forward: profile, seed: 9)
        relay.start()
        defer { relay.stop() }
        var model = ImpairmentModel(profile: profile, seed: 9)
        var expected = 0
        for _ in 0..<200 {
            let d = model.next()
            expected += (d.delayMs == nil ? 0 : 1) + (d.duplicateDelayMs == nil ? 0 : 1)
        }
        let start = Date()
        for i in 0..<200 { client.send([UInt8(i)], to: relay.listenAddress) }
        var received = 0
        var first: Date?
        var relaySide: SocketAddress?
        var buffer = [UInt8](repeating: 0, count: 16)
        while case let .datagram(_, source, _) = buffer.withUnsafeMutableBytes({ receiver.receive(into: $0, timeoutMs: 300) }) {
            if first == nil { first = Date() }
            relaySide = source
            received += 1
        }
        #expect(received == expected)
        #expect(first!.timeIntervalSince(start) >= 0.024)
        let stats = relay.statistics
        #expect(stats.forwarded == expected && stats.dropped + stats.forwarded - stats.duplicated == 200)
        // Replies to the relay's outgoing socket come back to the client.
        receiver.send([42], to: relaySide!)
        #expect(buffer.withUnsafeMutableBytes { client.receive(into: $0, timeoutMs: 500) } != .timeout)
    }

    /// Two sessions on loopback; the first sends `seconds` of speech, both run their I/O cycle.
    static func call(host: String = "127.0.0.1", rtcpMux: Bool = false, seconds: Double,
                     during: ((Int, SocketAddress) -> Void)? = nil) throws -> (RTPSession, RTPSession, [Int16]) {
        var lastError: (any Error)?
        for attempt in 0..<10 {
            let base = UInt16(20000 + Int.random(in: 0..<20000) / 2 * 2 + attempt)
            do {
                let aAddress = try SocketAddress(host: host, port: base & ~1)
                let bAddress = try SocketAddress(host: host, port: (base & ~1) + 2)
                let a = try RTPSession(configuration: RTPSessionConfiguration(localAddress: aAddress, remoteAddress: bAddress, rtcpMux: rtcpMux))
                let b = try RTPSession(configuration: RTPSessionConfiguration(localAddress: bAddress, remoteAddress: aAddress, rtcpMux: rtcpMux))
                return (a, b, try run(a, b, seconds: seconds, during: during))
            } catch let error as SocketError {
                lastError = error  // a port in use: try others
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
        let start = RTPClock.monotonicNanoseconds()
        for k in 0..<Int(seconds * 50) {
            let deadline = start + UInt64(k) * 20_000_000
            while RTPClock.monotonicNanoseconds() < deadline { usleep(1000) }
            let now = RTPClock.monotonicNanoseconds()
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

    @Test("A loop thread carries its name, as top -H and perf show it")
    func loopThreadName() {
        // The loop reads its own thread's name, so threads of other tests cannot answer for it.
        let loop = NameReadingLoop()
        let thread = LoopThread(name: "callaudio-rtp", loop)
        thread.start()
        thread.stop()
        #expect(loop.name.withLock { $0 } == "callaudio-rtp")
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


/// Records the name of the thread it runs on.
private final class NameReadingLoop: ThreadLoop {
    let name = Mutex<String?>(nil)
    func run(stopping: borrowing Atomic<Bool>) {
        let comm = try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)
        name.withLock { $0 = comm?.trimmingCharacters(in: .whitespacesAndNewlines) }
    }
}
