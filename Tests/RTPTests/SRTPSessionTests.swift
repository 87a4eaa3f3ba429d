import Foundation
import OpenSSL
import Platform
@testable import RTP
import SRTP
import Testing
import TestSupport

/// RTP sessions with SRTP on loopback: what goes on the wire, what the network thread lets
/// through, the sender's allocations, and the DTLS-SRTP handshake.
@Suite("SRTP sessions on loopback")
struct SRTPSessionTests {
    static let loopback = try! SocketAddress(host: "127.0.0.1", port: 0)

    /// Frames of a 440 Hz tone (16 kHz, 20 ms).
    static func frame(_ k: Int) -> [Int16] {
        (0..<320).map { i in Int16(8000 * sin(2 * Double.pi * 440 * Double(k * 320 + i) / 16000)) }
    }

    static func session(to remote: SocketAddress, _ protection: MediaProtection, mux: Bool = true) throws -> RTPSession {
        var configuration = RTPSessionConfiguration(localAddress: loopback, remoteAddress: remote, rtcpMux: mux)
        configuration.protection = protection
        return try RTPSession(configuration: configuration)
    }

    /// The RTP datagrams waiting at `socket` (RTCP, muxed on the port, left out).
    static func drain(_ socket: UDPSocket) -> [[UInt8]] {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 2048, alignment: 16)
        defer { buffer.deallocate() }
        var datagrams: [[UInt8]] = []
        while case let .datagram(length, _, _) = socket.receiveNow(into: buffer) {
            if length < 2 || !(200...204).contains(buffer[1]) { datagrams.append(Array(buffer[0..<length])) }
        }
        return datagrams
    }

    /// Sends `count` frames through a started session's sender (which queues them for the network
    /// thread to protect), then waits until they are out.
    static func send(_ count: Int, through session: RTPSession, _ sender: inout RTPSender) async {
        for k in 0..<count {
            _ = frame(k).withUnsafeBufferPointer { sender.send($0, now: UInt64(k) * 20_000_000) }
            usleep(500)
        }
        _ = await eventually { session.statistics.srtpProtected >= count }
        usleep(10_000)
    }

    @Test("What leaves the media port is ciphertext: no plaintext payload, not even 8 bytes of one, is on the wire")
    func plaintextNeverLeaves() async throws {
        let capture = try UDPSocket(bindingTo: Self.loopback)
        let key = SRTPMasterKey.random(profile: .aesCM128HMACSHA1_80)
        let session = try Self.session(to: capture.localAddress, .srtp(local: key, remote: .random(profile: .aesCM128HMACSHA1_80)))
        var sender = try session.makeSender()
        session.start()
        defer { session.stop() }
        await Self.send(100, through: session, &sender)
        let captured = Self.drain(capture)
        #expect(captured.count == 100)
        var peer = try SRTPContext(key: key, direction: .inbound)
        var plaintexts: [[UInt8]] = []
        for datagram in captured {
            var copy = datagram + [UInt8](repeating: 0, count: 16)
            let length = try copy.withUnsafeMutableBytes { try peer.unprotectRTP($0, length: datagram.count) }
            plaintexts.append(Array(copy[RTPHeader.fixedSize..<length]))
        }
        // Every 8-byte window of every plaintext payload, looked for in every captured datagram.
        var windows = Set<[UInt8]>()
        for p in plaintexts where p.count >= 8 { for i in 0...(p.count - 8) { windows.insert(Array(p[i..<(i + 8)])) } }
        let leaks = captured.reduce(0) { count, c in
            count + (c.count >= 8 ? (0...(c.count - 8)).count { windows.contains(Array(c[$0..<($0 + 8)])) } : 0)
        }
        #expect(leaks == 0, "\(leaks) plaintext windows on the wire")
        #expect(session.statistics.srtpProtected >= 100 && session.statistics.srtpProfile == "AES_CM_128_HMAC_SHA1_80")
    }

    @Test("Replays, bad tags, clear RTP and garbage are dropped and counted; only authentic packets reach the ring",
          arguments: SRTPProfile.allCases)
    func hostilePacketsAreDropped(profile: SRTPProfile) async throws {
        let capture = try UDPSocket(bindingTo: Self.loopback)
        let key = SRTPMasterKey.random(profile: profile), theirs = SRTPMasterKey.random(profile: profile)
        let a = try Self.session(to: capture.localAddress, .srtp(local: key, remote: theirs))
        let b = try Self.session(to: a.localAddress, .srtp(local: theirs, remote: key))
        var sender = try a.makeSender()
        a.start()
        await Self.send(60, through: a, &sender)
        a.stop()
        let genuine = Self.drain(capture)
        try #require(genuine.count == 60)
        b.start()
        defer { b.stop() }
        let attacker = try UDPSocket(bindingTo: Self.loopback)
        // From a's address, so source validation would have passed them: only SRTP can stop them.
        func deliver(_ datagrams: some Sequence<[UInt8]>) { for d in datagrams { _ = a.rtpSocket.send(d, to: b.localAddress) } }
        deliver(genuine[0..<50])
        deliver(genuine[0..<20])                                                    // replays
        deliver(genuine[50..<60].map { var d = $0; d[d.count - 1] ^= 0x01; return d })  // bad tags, new sequence numbers
        deliver([Array(genuine[50].dropLast(profile.rtpTrailerLength))])            // RTP in clear
        for size in [0, 1, 11, 12, 40, 1400] { _ = attacker.send([UInt8](repeating: 0x80, count: size), to: b.localAddress) }
        deliver(genuine[50..<60])  // the real ones after the forgeries: nothing above spoiled the replay window
        #expect(await eventually { b.statistics.srtpUnprotected >= 60 })
        usleep(20_000)
        let s = b.statistics
        #expect(s.srtpUnprotected == 60)
        #expect(s.srtpReplays == 20)
        #expect(s.srtpAuthenticationFailures >= 11)
        #expect(s.srtpAuthenticationFailures + s.srtpDropped == 10 + 1 + 6)
        #expect(s.packetsReceived <= 60)
    }

    @Test("After rekeyInbound the peer's packets under the new key are taken, and those under the old key are not")
    func rekeyedInbound() async throws {
        let old = SRTPMasterKey.random(profile: .aesCM128HMACSHA1_80), new = SRTPMasterKey.random(profile: .aesCM128HMACSHA1_80)
        let peer = try UDPSocket(bindingTo: Self.loopback)
        let b = try Self.session(to: peer.localAddress, .srtp(local: .random(profile: .aesCM128HMACSHA1_80), remote: old))
        b.start()
        defer { b.stop() }
        /// Packets 0..<n of an SSRC, protected with `key`, sent from the peer's socket.
        func send(_ key: SRTPMasterKey, sequence: Range<Int>) throws {
            var context = try SRTPContext(key: key, direction: .outbound, ssrc: 0x1234)
            let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 256, alignment: 16)
            defer { buffer.deallocate() }
            let payload = [UInt8](repeating: 0x55, count: 40)
            for n in sequence {
                let header = RTPHeader(marker: false, payloadType: 96, sequenceNumber: UInt16(n), timestamp: UInt32(n * 320), ssrc: 0x1234)
                let length = try payload.withUnsafeBytes { try header.write(payload: $0, into: buffer) }
                let protected = try context.protectRTP(buffer, length: length)
                _ = peer.send(UnsafeRawBufferPointer(rebasing: buffer[0..<protected]), to: b.localAddress)
            }
        }
        try send(old, sequence: 0..<10)
        #expect(await eventually { b.statistics.srtpUnprotected == 10 })
        try b.rekeyInbound(new)
        try await Task.sleep(for: .milliseconds(60))  // the network thread's next turn
        try send(old, sequence: 10..<20)
        try send(new, sequence: 20..<30)
        #expect(await eventually { b.statistics.srtpUnprotected == 20 })
        try await Task.sleep(for: .milliseconds(50))
        #expect(b.statistics.srtpUnprotected == 20 && b.statistics.srtpAuthenticationFailures == 10)
    }

    @Test("The send path allocates nothing per frame with SRTP")
    func senderDoesNotAllocate() async throws {
        #expect(AllocationCounter.isActive)
        let sink = try UDPSocket(bindingTo: Self.loopback)
        let session = try Self.session(to: sink.localAddress, .srtp(local: .random(profile: .aeadAES128GCM),
                                                                    remote: .random(profile: .aeadAES128GCM)))
        var sender = try session.makeSender()
        session.start()
        defer { session.stop() }
        let frames = (0..<400).map(Self.frame)
        var allocations: UInt64 = 0
        for k in 0..<400 {
            let before = AllocationCounter.thisThread
            _ = frames[k].withUnsafeBufferPointer { sender.send($0, now: UInt64(k) * 20_000_000) }
            if k >= 50 { allocations += AllocationCounter.thisThread - before }
            usleep(500)
            if k % 50 == 0 { _ = Self.drain(sink) }
        }
        #expect(allocations == 0)
        #expect(await eventually { session.statistics.srtpProtected >= 400 })
        #expect(session.statistics.sendFailures == 0)
    }

    /// Two sessions keyed by DTLS: `a` the client, `b` the server, each checking the other's fingerprint.
    static func dtlsPair(wrongFingerprint: Bool = false) throws -> (RTPSession, RTPSession) {
        let ia = try TLSIdentity.generateSelfSigned(commonName: "a"), ib = try TLSIdentity.generateSelfSigned(commonName: "b")
        let stranger = try TLSIdentity.generateSelfSigned(commonName: "c")
        let fa = DTLSFingerprint(algorithm: .sha256, digest: ia.fingerprint(.sha256))
        let fb = DTLSFingerprint(algorithm: .sha256, digest: (wrongFingerprint ? stranger : ib).fingerprint(.sha256))
        // b first, to know its port; a then sends to it, and b learns a's address from the handshake.
        let probe = try UDPSocket(bindingTo: Self.loopback)
        let b = try Self.session(to: probe.localAddress, .dtls(DTLSMediaSetup(isClient: false, identity: ib, remoteFingerprints: [fa])))
        let a = try Self.session(to: b.localAddress, .dtls(DTLSMediaSetup(isClient: true, identity: ia, remoteFingerprints: [fb])))
        b.retarget(rtp: a.localAddress, rtcp: nil)
        return (a, b)
    }

    @Test("DTLS-SRTP: the handshake on the media port keys both ends within 300 ms; media flows only after it")
    func dtlsKeysBothEnds() async throws {
        let (a, b) = try Self.dtlsPair()
        var sender = try a.makeSender()
        let early = Self.frame(0).withUnsafeBufferPointer { sender.send($0, now: 0) }
        #expect(early == .awaitingKeys)
        b.start()
        a.start()
        defer { a.stop(); b.stop() }
        #expect(await eventually { a.statistics.dtls == .established && b.statistics.dtls == .established })
        for k in 1...50 {
            _ = Self.frame(k).withUnsafeBufferPointer { sender.send($0, now: UInt64(k) * 20_000_000) }
            usleep(2000)
        }
        #expect(await eventually { b.statistics.srtpUnprotected >= 50 })
        let sa = a.statistics, sb = b.statistics
        #expect(sa.srtpProfile == "AES_CM_128_HMAC_SHA1_80" && sb.srtpProfile == sa.srtpProfile)
        #expect((sa.dtlsHandshakeMs ?? 999) < 300 && (sb.dtlsHandshakeMs ?? 999) < 300)
        #expect(sb.srtpAuthenticationFailures == 0 && sb.packetsReceived >= 45)
        print("DTLS-SRTP on loopback: client \(sa.dtlsHandshakeMs ?? -1) ms, server \(sb.dtlsHandshakeMs ?? -1) ms")
    }

    @Test("DTLS-SRTP: a certificate that does not match the SDP's fingerprint keys nothing, and nothing is sent")
    func dtlsWrongFingerprint() async throws {
        let (a, b) = try Self.dtlsPair(wrongFingerprint: true)
        var sender = try a.makeSender()
        b.start()
        a.start()
        defer { a.stop(); b.stop() }
        #expect(await eventually { a.statistics.dtls == .failed })
        let outcome = Self.frame(1).withUnsafeBufferPointer { sender.send($0, now: 20_000_000) }
        #expect(outcome == .awaitingKeys)
        #expect(a.statistics.srtpProfile == nil && b.statistics.srtpUnprotected == 0)
    }
}
