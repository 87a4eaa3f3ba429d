import MediaNegotiation
import SDP
import Platform
import AudioAnalysis
import AudioSession
import Opus
import RTP
import SIP
import Synchronization
import Testing
import TestSupport
import VoiceCall

/// What a stranger on the network, or a peer that misbehaves, can do to a call: over real
/// loopback sockets, with a raw SIP peer.
@Suite("Hostile peers: media from strangers, a peer that vanishes, offers we cannot use", .serialized)
struct HostilePeerCallTests {
    static let tone = Tone.sine(frequency: 300, sampleRate: 16000, seconds: 0.02, amplitude: 0.1).map { Int16($0 * 32767) }

    static func talker(from socket: UDPSocket, to destination: SocketAddress, payloadType: UInt8) throws -> RTPSender {
        RTPSender(encoder: try RTPAudioEncoder(configuration: OpusCallConfiguration(), packetizer: RTPPacketizer(payloadType: payloadType)),
                  socket: socket, destination: destination)
    }

    /// Where bob receives RTP, from the answer in `body`.
    static func rtpAddress(in body: String) throws -> (SocketAddress, UInt8) {
        let ours = try AudioSDP.stream(in: SessionDescription.parse(body))
        return (try SocketAddress(host: ours.address, port: UInt16(ours.port)), ours.payloadType)
    }

    @Test("RTP from a port not in the SDP, sent first, and a flood of new SSRCs do not take the call: the peer is heard, the strangers counted")
    func strangersDoNotTakeTheMedia() async throws {
        let (bob, raw, call, ok) = try await RawPeerCallTests.answeredCall("strangers")
        raw.send("ACK", cseq: 1, toTag: ok.tag)
        let (bobRTP, payloadType) = try Self.rtpAddress(in: ok.body)
        let stranger = try UDPSocket(bindingTo: SocketAddress(host: "127.0.0.1", port: 0))
        let flooder = try UDPSocket(bindingTo: SocketAddress(host: "127.0.0.1", port: 0))
        var strangerTalks = try Self.talker(from: stranger, to: bobRTP, payloadType: payloadType)
        var peerTalks = try Self.talker(from: raw.media, to: bobRTP, payloadType: payloadType)
        // The stranger starts 0.3 s before the peer, in perfect sequence.
        for k in 0..<15 {
            Self.tone.withUnsafeBufferPointer { _ = strangerTalks.send($0, now: UInt64(k) * 20_000_000) }
            try await Task.sleep(for: .milliseconds(20))
        }
        // Then the peer talks while the stranger goes on and a flood brings 4 new SSRCs every 20 ms.
        var floodSSRC: UInt32 = 1000
        for k in 0..<100 {
            Self.tone.withUnsafeBufferPointer { _ = strangerTalks.send($0, now: UInt64(15 + k) * 20_000_000) }
            for _ in 0..<4 {
                floodSSRC += 1
                let packet = try RTPHeader(payloadType: payloadType, sequenceNumber: UInt16(k), timestamp: UInt32(k) * 960,
                                           ssrc: floodSSRC).packet(payload: [0x48, 1, 2])
                flooder.send(packet, to: bobRTP)
            }
            Self.tone.withUnsafeBufferPointer { _ = peerTalks.send($0, now: UInt64(k) * 20_000_000) }
            try await Task.sleep(for: .milliseconds(20))
        }
        try await Task.sleep(for: .milliseconds(200))
        let s = await call.statistics
        print("RTP strangers in a call: \(s.packetsReceived) of the peer's 100 packets heard, \(s.packetsDropped) foreign dropped, "
              + "playback \(Int(s.playbackLevelDBFS)) dBFS")
        #expect(s.packetsReceived >= 90)
        #expect(s.packetsDropped >= 400)  // 115 from the stranger, 400 from the flood (a few may be lost on loopback)
        #expect(s.playbackLevelDBFS > -50)  // the peer's tone plays
        raw.send("BYE", cseq: 2, toTag: ok.tag)
        #expect(await call.ended() == .remoteHangUp)
        await bob.shutdown()
    }

    @Test("A peer that vanishes without a BYE: the call ends with the media-timeout reason within the timeout + 2 s and a BYE goes out; a hold is no vanishing")
    func peerVanishes() async throws {
        let bob = try Phone("bob") { $0.mediaTimeout = .seconds(2) }
        await bob.controller.start()
        let raw = RawCaller(agent: bob.controller.sipAddress, callID: "vanishing")
        raw.send("INVITE", cseq: 1, toTag: nil, body: raw.sdp())
        let call = try await RawPeerCallTests.answerFirstCall(bob)
        let ok = try await raw.response(to: 1)
        raw.send("ACK", cseq: 1, toTag: ok.tag)
        let (bobRTP, payloadType) = try Self.rtpAddress(in: ok.body)

        // The peer holds the call (inactive): 3 s without media do not end it.
        raw.send("INVITE", cseq: 2, toTag: ok.tag, body: raw.sdp(direction: "inactive", version: 2))
        #expect(try await raw.response(to: 2).status == 200)
        raw.send("ACK", cseq: 2, toTag: ok.tag)
        try await Task.sleep(for: .seconds(3))
        #expect(call.state == .active)

        // It resumes, talks for half a second, and vanishes.
        raw.send("INVITE", cseq: 3, toTag: ok.tag, body: raw.sdp(version: 3))
        #expect(try await raw.response(to: 3).status == 200)
        raw.send("ACK", cseq: 3, toTag: ok.tag)
        var talker = try Self.talker(from: raw.media, to: bobRTP, payloadType: payloadType)
        for k in 0..<25 {
            Self.tone.withUnsafeBufferPointer { _ = talker.send($0, now: UInt64(k) * 20_000_000) }
            try await Task.sleep(for: .milliseconds(20))
        }
        let silentSince = ContinuousClock.now
        #expect(await call.statistics.packetsReceived >= 20)
        #expect(await eventually(timeout: .seconds(8)) { call.state.isEnded })
        let after = ContinuousClock.now - silentSince
        print("RTP media timeout: the call ended \(after) after the peer's last packet (timeout 2 s): \(call.state)")
        #expect(call.state == .ended(.mediaTimeout))
        #expect(after >= .milliseconds(1900) && after <= .seconds(4))
        // The peer, if it is still there, hears about it.
        var sawBye = false
        let deadline = ContinuousClock.now + .seconds(5)
        while !sawBye, ContinuousClock.now < deadline {
            if case let .request(request)? = await raw.peer.receiveMessage(timeout: .seconds(1)), request.method == .bye { sawBye = true }
        }
        #expect(sawBye)
        #expect(await eventually { !bob.session.isActive })
        await bob.shutdown()
    }

    @Test("Offers we cannot use get 488 and the endpoint keeps answering: a name in c= (never looked up), no codec we take")
    func unusableOffers() async throws {
        let bob = try Phone("bob")
        await bob.controller.start()
        let named = RawCaller(agent: bob.controller.sipAddress, callID: "named-media")
        let started = ContinuousClock.now
        named.send("INVITE", cseq: 1, toTag: nil, body: named.sdp(connection: "IP4 nonexistent.invalid"))
        #expect(try await named.response(to: 1).status == 488)
        print("SIP offer with a name in c=: 488 after \(ContinuousClock.now - started)")
        let g729 = RawCaller(agent: bob.controller.sipAddress, callID: "g729-only")
        g729.send("INVITE", cseq: 1, toTag: nil, body: "v=0\r\no=raw 1 1 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\n"
                  + "m=audio \(g729.media.localAddress.port) RTP/AVP 18\r\na=rtpmap:18 G729/8000\r\n")
        #expect(try await g729.response(to: 1).status == 488)

        // Still listening: the next caller with a usable offer is answered.
        let good = RawCaller(agent: bob.controller.sipAddress, callID: "usable")
        good.send("INVITE", cseq: 1, toTag: nil, body: good.sdp())
        let call = try await RawPeerCallTests.answerFirstCall(bob)
        #expect(call.id == "usable")
        let ok = try await good.response(to: 1)
        #expect(ok.status == 200)
        good.send("ACK", cseq: 1, toTag: ok.tag)
        good.send("BYE", cseq: 2, toTag: ok.tag)
        #expect(await call.ended() == .remoteHangUp)
        await bob.shutdown()
    }

    @Test("A caller outside the controller's allowlist gets 403 and no call is made")
    func callerNotAllowed() async throws {
        let bob = try Phone("bob") { $0.acceptsCallsFrom = { $0.family == .ipv6 } }
        await bob.controller.start()
        let calls = Mutex(0)
        let watcher = Task { for await _ in bob.controller.incomingCalls { calls.withLock { $0 += 1 } } }
        defer { watcher.cancel() }
        let raw = RawCaller(agent: bob.controller.sipAddress, callID: "stranger-call")
        raw.send("INVITE", cseq: 1, toTag: nil, body: raw.sdp())
        #expect(try await raw.response(to: 1).status == 403)
        try await Task.sleep(for: .milliseconds(200))
        #expect(calls.withLock { $0 } == 0 && !bob.session.isActive)
        await bob.shutdown()
    }
}
