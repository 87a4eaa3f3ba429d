import MediaNegotiation
import SDP
import Platform
import AudioAnalysis
import AudioSession
import Foundation
import Opus
import RTP
import SIP
import Synchronization
import Testing
import TestSupport
import VoiceCall

/// A SIP peer written by hand, with a socket for the RTP it receives: what PBXes and other
/// softphones send that two CallAudio controllers never send each other.
struct RawCaller {
    let peer = try! RawPeer()
    let media = try! UDPSocket(bindingTo: SocketAddress(host: "127.0.0.1", port: 0))
    let agent: SocketAddress
    let callID: String

    /// The peer's SDP: Opus at its media socket (or `port`), in `direction`, version `version`.
    func sdp(direction: String = "sendrecv", version: Int = 1, port: UInt16? = nil, connection: String = "IP4 127.0.0.1") -> String {
        "v=0\r\no=raw 77 \(version) IN IP4 127.0.0.1\r\ns=-\r\nc=IN \(connection)\r\nt=0 0\r\n"
            + "m=audio \(port ?? media.localAddress.port) RTP/AVP 111\r\na=rtpmap:111 opus/48000/2\r\n"
            + "a=fmtp:111 useinbandfec=1\r\na=\(direction)\r\n"
    }

    /// Sends a request in the call (`toTag` nil: the initial INVITE).
    func send(_ method: String, cseq: Int, toTag: String?, body: String = "") {
        peer.send(sipText([
            "\(method) sip:bob@127.0.0.1:\(agent.port) SIP/2.0",
            "Via: SIP/2.0/UDP 127.0.0.1:\(peer.port);branch=z9hG4bK\(method.lowercased())\(cseq)",
            "Max-Forwards: 70",
            "From: <sip:raw@127.0.0.1:\(peer.port)>;tag=rawtag",
            "To: <sip:bob@127.0.0.1:\(agent.port)>" + (toTag.map { ";tag=\($0)" } ?? ""),
            "Call-ID: \(callID)",
            "CSeq: \(cseq) \(method)",
            "Contact: <sip:raw@127.0.0.1:\(peer.port)>",
        ] + (body.isEmpty ? [] : ["Content-Type: application/sdp"]), body: body), to: agent)
    }

    /// The final response to INVITE `cseq`: its status, its body, the callee's tag.
    func response(to cseq: UInt32) async throws -> (status: Int, body: String, tag: String?) {
        let response = try #require(await peer.receiveResponse(timeout: .seconds(5)) { response in
            (try? response.headers.cseq()).map { $0.method == .invite && $0.sequence == cseq } == true && response.statusCode >= 200
        })
        return (response.statusCode, String(decoding: response.body, as: UTF8.self), try response.headers.to().tag)
    }

    /// RTP headers that reach the media socket (or `socket`) within `seconds`.
    func packets(for seconds: Double, at socket: UDPSocket? = nil) async -> [RTPHeader] {
        await receivedRTP(at: socket ?? media, for: seconds)
    }
}

/// The headers of the RTP packets that reach `socket` within `seconds`.
func receivedRTP(at socket: UDPSocket, for seconds: Double) async -> [RTPHeader] {
    var headers: [RTPHeader] = []
    var buffer = [UInt8](repeating: 0, count: 2048)
    let deadline = ContinuousClock.now + .seconds(seconds)
    while ContinuousClock.now < deadline {
        while case let .datagram(length, _, _) = buffer.withUnsafeMutableBytes({ socket.receiveNow(into: $0) }) {
            if let packet = try? RTPPacket.parse(Array(buffer[..<length])) { headers.append(packet.header) }
        }
        try? await Task.sleep(for: .milliseconds(10))
    }
    return headers
}

extension RawPeerCallTests {
    /// The first incoming call of `phone`, answered.
    static func answerFirstCall(_ phone: Phone) async throws -> Call {
        let incoming = Task { () -> Call? in
            for await call in phone.controller.incomingCalls { return call }
            return nil
        }
        let call = try #require(await incoming.value)
        try await call.answer()
        return call
    }

    /// A raw peer calls a new phone (with our Opus offer, or none), which answers: the phone,
    /// the peer, the call and the final response.
    static func answeredCall(_ callID: String, withOffer: Bool = true) async throws
        -> (Phone, RawCaller, Call, (status: Int, body: String, tag: String?)) {
        let bob = try Phone("bob")
        await bob.controller.start()
        let raw = RawCaller(agent: bob.controller.sipAddress, callID: callID)
        raw.send("INVITE", cseq: 1, toTag: nil, body: withOffer ? raw.sdp() : "")
        let call = try await answerFirstCall(bob)
        return (bob, raw, call, try await raw.response(to: 1))
    }
}

@Suite("Calls from a raw SIP peer: hold by re-INVITE, INVITE without an offer", .serialized)
struct RawPeerCallTests {
    @Test("An answered call sends no RTP until the caller's ACK (media consent)")
    func noMediaBeforeTheACK() async throws {
        let bob = try Phone("bob")
        await bob.controller.start()
        let raw = RawCaller(agent: bob.controller.sipAddress, callID: "consent-call")
        raw.send("INVITE", cseq: 1, toTag: nil, body: raw.sdp())
        _ = try await Self.answerFirstCall(bob)
        let tag = try #require(try await raw.response(to: 1).tag)
        // The 2xx is out, and retransmitted; without the ACK (and with no RTP from the caller,
        // whose address may be spoofed) nothing goes to the offer's media address.
        #expect(await raw.packets(for: 0.6).isEmpty)
        raw.send("ACK", cseq: 1, toTag: tag)
        #expect(await raw.packets(for: 1.5).count >= 25)
        await bob.controller.shutdown()
    }

    @Test("A peer that holds the call (inactive) and then sends nothing, RTCP included, is hung up at the hold timeout")
    func aSilentHoldingPeerIsHungUp() async throws {
        let bob = try Phone("bob") { configuration in
            configuration.mediaTimeout = .milliseconds(400)
            configuration.holdTimeout = .seconds(2)
        }
        await bob.controller.start()
        let raw = RawCaller(agent: bob.controller.sipAddress, callID: "silent-hold")
        raw.send("INVITE", cseq: 1, toTag: nil, body: raw.sdp(direction: "inactive"))
        let call = try await Self.answerFirstCall(bob)
        let tag = try #require(try await raw.response(to: 1).tag)
        raw.send("ACK", cseq: 1, toTag: tag)
        // Past the media timeout, inside the hold timeout: the held call stays.
        try await Task.sleep(for: .milliseconds(1_000))
        #expect(call.state == .active)
        let ended = await eventually { call.state.isEnded }
        #expect(ended)
        #expect(call.state == .ended(.mediaTimeout))
        await bob.controller.shutdown()
    }

    @Test("A peer's sendonly re-INVITE stops our RTP and is answered recvonly; sendrecv resumes it; a new port moves it")
    func peerHoldsAndResumes() async throws {
        let bob = try Phone("bob")
        await bob.controller.start()
        let events = Mutex<[CallController.Event]>([])
        let watcher = Task { for await event in bob.controller.events { events.withLock { $0.append(event) } } }
        defer { watcher.cancel() }
        let raw = RawCaller(agent: bob.controller.sipAddress, callID: "hold-call")

        raw.send("INVITE", cseq: 1, toTag: nil, body: raw.sdp())
        let call = try await Self.answerFirstCall(bob)
        let tag = try #require(try await raw.response(to: 1).tag)
        raw.send("ACK", cseq: 1, toTag: tag)
        // 20 ms packets flow to the peer once the media has started (50 a second; a loaded machine starts late).
        #expect(await raw.packets(for: 1.5).count >= 25)

        // Hold: answered recvonly, and no more RTP (RTCP goes to the next port, not counted here).
        raw.send("INVITE", cseq: 2, toTag: tag, body: raw.sdp(direction: "sendonly", version: 2))
        let held = try await raw.response(to: 2)
        #expect(held.status == 200 && held.body.contains("a=recvonly") && !held.body.contains("a=sendrecv"))
        raw.send("ACK", cseq: 2, toTag: tag)
        #expect(await eventually { events.withLock { $0.contains { if case .peerHold(_, true) = $0 { true } else { false } } } })
        _ = await raw.packets(for: 0.1)  // what was already on its way
        #expect(await raw.packets(for: 0.5).isEmpty)
        #expect(call.state == .active)

        // Resume: sendrecv again, and the first packet starts a talk spurt.
        raw.send("INVITE", cseq: 3, toTag: tag, body: raw.sdp(direction: "sendrecv", version: 3))
        let resumed = try await raw.response(to: 3)
        #expect(resumed.status == 200 && resumed.body.contains("a=sendrecv"))
        raw.send("ACK", cseq: 3, toTag: tag)
        let after = await raw.packets(for: 1)
        #expect(after.count >= 25)
        #expect(after.first?.marker == true)
        #expect(events.withLock { $0.contains { if case .peerHold(_, false) = $0 { true } else { false } } })

        // The peer moves its media to another port (a PBX stepping out of the path): our RTP follows.
        let moved = try UDPSocket(bindingTo: SocketAddress(host: "127.0.0.1", port: 0))
        raw.send("INVITE", cseq: 4, toTag: tag, body: raw.sdp(version: 4, port: moved.localAddress.port))
        let move = try await raw.response(to: 4)
        #expect(move.status == 200 && move.body == resumed.body)  // our side of the session is unchanged
        raw.send("ACK", cseq: 4, toTag: tag)
        #expect(await eventually { await !raw.packets(for: 0.02, at: moved).isEmpty })
        _ = await raw.packets(for: 0.05)  // what went to the old port before the move
        #expect(await raw.packets(for: 1, at: moved).count >= 25)
        #expect(await raw.packets(for: 0.3).isEmpty)

        // The old way to hold: `c=0.0.0.0` and no direction (RFC 3264 section 8.4): nothing is sent.
        raw.send("INVITE", cseq: 40, toTag: tag, body: raw.sdp(version: 40, port: moved.localAddress.port, connection: "IP4 0.0.0.0")
            .replacingOccurrences(of: "a=sendrecv\r\n", with: ""))
        #expect(try await raw.response(to: 40).status == 200)
        raw.send("ACK", cseq: 40, toTag: tag)
        #expect(await eventually { events.withLock { $0.filter { if case .peerHold(_, true) = $0 { true } else { false } }.count == 2 } })
        _ = await raw.packets(for: 0.1, at: moved)
        #expect(await raw.packets(for: 0.5, at: moved).isEmpty)
        raw.send("INVITE", cseq: 41, toTag: tag, body: raw.sdp(version: 41, port: moved.localAddress.port))
        #expect(try await raw.response(to: 41).status == 200)
        raw.send("ACK", cseq: 41, toTag: tag)

        // Another address family would need another socket: 488, and the call goes on as it was.
        raw.send("INVITE", cseq: 50, toTag: tag, body: raw.sdp(version: 50, connection: "IP6 ::1"))
        #expect(try await raw.response(to: 50).status == 488)
        #expect(await raw.packets(for: 0.5, at: moved).count >= 10)

        raw.send("BYE", cseq: 60, toTag: tag)
        #expect(await call.ended() == .remoteHangUp)
        #expect(await eventually { !bob.session.isActive })
        await bob.shutdown()
    }

    @Test("After the peer moves its media, what it sends from the new address is heard at once, not after the source timeout")
    func peerMediaFromTheNewAddressIsHeard() async throws {
        let (bob, raw, call, ok) = try await Self.answeredCall("move-call")
        raw.send("ACK", cseq: 1, toTag: ok.tag)
        let ours = try AudioSDP.stream(in: SessionDescription.parse(ok.body))
        let bobRTP = try SocketAddress(host: ours.address, port: UInt16(ours.port))
        // The peer talks from its first address, then from the new one right after the re-INVITE.
        let moved = try UDPSocket(bindingTo: SocketAddress(host: "127.0.0.1", port: 0))
        func makeSender(from socket: UDPSocket) throws -> RTPSender {
            RTPSender(encoder: try RTPAudioEncoder(configuration: OpusCallConfiguration(), packetizer: RTPPacketizer(payloadType: ours.payloadType)),
                      socket: socket, destination: bobRTP)
        }
        var sender = try makeSender(from: raw.media)
        var movedSender = try makeSender(from: moved)
        let tone = Tone.sine(frequency: 300, sampleRate: 16000, seconds: 0.02, amplitude: 0.1).map { Int16($0 * 32767) }
        for k in 0..<50 {
            tone.withUnsafeBufferPointer { _ = sender.send($0, now: UInt64(k) * 20_000_000) }
            try await Task.sleep(for: .milliseconds(20))
        }
        let heard = await call.statistics.packetsReceived
        #expect(heard >= 40)
        raw.send("INVITE", cseq: 2, toTag: ok.tag, body: raw.sdp(version: 2, port: moved.localAddress.port))
        #expect(try await raw.response(to: 2).status == 200)
        raw.send("ACK", cseq: 2, toTag: ok.tag)
        for k in 0..<40 {  // 0.8 s: well under the 2 s an unannounced source must wait
            tone.withUnsafeBufferPointer { _ = movedSender.send($0, now: UInt64(k) * 20_000_000) }
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(await call.statistics.packetsReceived >= heard + 30)

        raw.send("BYE", cseq: 3, toTag: ok.tag)
        #expect(await call.ended() == .remoteHangUp)
        await bob.shutdown()
    }

    @Test("An INVITE without an offer gets our offer in the 200, media starts with the answer in the ACK; re-INVITEs without an offer too")
    func inviteWithoutOffer() async throws {
        let (bob, raw, call, ok) = try await Self.answeredCall("offerless-call", withOffer: false)
        #expect(ok.status == 200)
        let offer = try AudioSDP.stream(in: SessionDescription.parse(ok.body))
        #expect(offer.direction == .sendrecv)
        #expect(await raw.packets(for: 0.3).isEmpty)  // no answer yet: nowhere to send
        raw.send("ACK", cseq: 1, toTag: ok.tag, body: raw.sdp())
        #expect(await raw.packets(for: 1.5).count >= 25)
        #expect(bob.session.isActive && call.state == .active)

        // A re-INVITE without an offer: our description is the offer, the ACK's answer holds the call.
        raw.send("INVITE", cseq: 2, toTag: ok.tag)
        #expect(try await raw.response(to: 2).status == 200)
        raw.send("ACK", cseq: 2, toTag: ok.tag, body: raw.sdp(direction: "sendonly", version: 2))
        #expect(await eventually { await raw.packets(for: 0.05).isEmpty })
        #expect(await raw.packets(for: 0.5).isEmpty)
        raw.send("INVITE", cseq: 3, toTag: ok.tag)
        #expect(try await raw.response(to: 3).status == 200)
        raw.send("ACK", cseq: 3, toTag: ok.tag, body: raw.sdp(version: 3))
        #expect(await raw.packets(for: 1).count >= 25)

        raw.send("BYE", cseq: 4, toTag: ok.tag)
        #expect(await call.ended() == .remoteHangUp)
        #expect(await eventually { !bob.session.isActive })
        await bob.shutdown()
    }

    @Test("A peer whose SDP gives an IPv6 address while it talks to us over IPv4 gets our RTP where its RTP comes from")
    func peerAdvertisingAnotherAddressFamily() async throws {
        // linphonec does this on its first start: c=IN IP6 <its address>, RTP from 127.0.0.1.
        let (heard, received, _) = try await Self.rtpHeard(latching: .whenUnreachable, offering: "IP6 ::1", sendingFromAnotherPort: false)
        #expect(heard >= 25, "\(heard) packets reached the peer's IPv4 socket")
        #expect(received >= 40)
    }

    @Test("With latching always on, a peer that sends from another port than its SDP gives (NAT) is heard and gets our RTP there; by default it is neither")
    func peerBehindNAT() async throws {
        let latched = try await Self.rtpHeard(latching: .always, offering: "IP4 127.0.0.1", sendingFromAnotherPort: true)
        #expect(latched.heard >= 25, "\(latched.heard) packets reached the port the peer sends from")
        #expect(latched.received >= 40)
        // By default only the address in the SDP may be the source: RTP from elsewhere is dropped and counted.
        let notLatched = try await Self.rtpHeard(latching: .whenUnreachable, offering: "IP4 127.0.0.1", sendingFromAnotherPort: true)
        #expect(notLatched.heard == 0, "\(notLatched.heard) packets went to the port the peer sends from")
        #expect(notLatched.received == 0 && notLatched.dropped >= 70)
    }

    /// A raw peer offers its media socket at `connection`, talks for 1.6 s (from another socket
    /// with `sendingFromAnotherPort`, as through a NAT), and counts our RTP packets that reach the
    /// socket it talks from, the packets we received and those we dropped.
    static func rtpHeard(latching: MediaLatching, offering connection: String, sendingFromAnotherPort: Bool) async throws
        -> (heard: Int, received: Int, dropped: Int) {
        let bob = try Phone("bob", latching: latching)
        await bob.controller.start()
        let raw = RawCaller(agent: bob.controller.sipAddress, callID: "latch-\(latching)-\(sendingFromAnotherPort)")
        raw.send("INVITE", cseq: 1, toTag: nil, body: raw.sdp(connection: connection))
        let call = try await answerFirstCall(bob)
        let ok = try await raw.response(to: 1)
        #expect(ok.status == 200)
        raw.send("ACK", cseq: 1, toTag: ok.tag)
        let ours = try AudioSDP.stream(in: SessionDescription.parse(ok.body))
        let bobRTP = try SocketAddress(host: ours.address, port: UInt16(ours.port))
        let talkingSocket = sendingFromAnotherPort ? try UDPSocket(bindingTo: SocketAddress(host: "127.0.0.1", port: 0)) : raw.media
        // Nothing reaches the socket the peer talks from before it talks.
        #expect(await raw.packets(for: 0.5, at: talkingSocket).isEmpty)
        let talking = Task {
            var sender = RTPSender(encoder: try RTPAudioEncoder(configuration: OpusCallConfiguration(),
                                                               packetizer: RTPPacketizer(payloadType: ours.payloadType)),
                                   socket: talkingSocket, destination: bobRTP)
            let tone = Tone.sine(frequency: 300, sampleRate: 16000, seconds: 0.02, amplitude: 0.1).map { Int16($0 * 32767) }
            for k in 0..<80 {
                tone.withUnsafeBufferPointer { _ = sender.send($0, now: UInt64(k) * 20_000_000) }
                try await Task.sleep(for: .milliseconds(20))
            }
        }
        let heard = await raw.packets(for: 1.5, at: talkingSocket)
        try await talking.value
        let statistics = await call.statistics
        raw.send("BYE", cseq: 2, toTag: ok.tag)
        #expect(await call.ended() == .remoteHangUp)
        await bob.shutdown()
        return (heard.count, statistics.packetsReceived, statistics.packetsDropped)
    }
}
