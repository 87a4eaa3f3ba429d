import AudioSession
import RTP
import SIP
import Synchronization
import Testing
import TestSupport
import VoiceCall

/// A peer that holds the call with a re-INVITE, as softphones and PBXes do: a raw SIP peer
/// calls a controller, then sends `sendonly`, `sendrecv` and a change it cannot make.
@Suite("Hold by the peer (re-INVITE)", .serialized)
struct PeerHoldTests {
    /// The peer's SDP: Opus on `port`, in `direction`, version `version`.
    static func sdp(port: UInt16, direction: String, version: Int) -> String {
        "v=0\r\no=raw 77 \(version) IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\n"
            + "m=audio \(port) RTP/AVP 111\r\na=rtpmap:111 opus/48000/2\r\na=fmtp:111 useinbandfec=1\r\na=\(direction)\r\n"
    }

    /// RTP datagrams that reach `socket` within `seconds`, parsed.
    static func packets(at socket: UDPSocket, for seconds: Double) async -> [RTPHeader] {
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

    @Test("A peer's sendonly re-INVITE stops our RTP and is answered recvonly; sendrecv resumes it; a new address gets 488")
    func peerHoldsAndResumes() async throws {
        let bob = try Phone("bob")
        await bob.controller.start()
        let events = Mutex<[CallController.Event]>([])
        let watcher = Task { for await event in bob.controller.events { events.withLock { $0.append(event) } } }
        defer { watcher.cancel() }
        let peer = try RawPeer()
        let media = try UDPSocket(bindingTo: SocketAddress(host: "127.0.0.1", port: 0))
        let agent = bob.controller.sipAddress
        func request(_ method: String, cseq: Int, toTag: String?, body: String = "") -> String {
            sipText([
                "\(method) sip:bob@127.0.0.1:\(agent.port) SIP/2.0",
                "Via: SIP/2.0/UDP 127.0.0.1:\(peer.port);branch=z9hG4bK\(method.lowercased())\(cseq)",
                "Max-Forwards: 70",
                "From: <sip:raw@127.0.0.1:\(peer.port)>;tag=rawtag",
                "To: <sip:bob@127.0.0.1:\(agent.port)>" + (toTag.map { ";tag=\($0)" } ?? ""),
                "Call-ID: hold-call",
                "CSeq: \(cseq) \(method)",
                "Contact: <sip:raw@127.0.0.1:\(peer.port)>",
            ] + (body.isEmpty ? [] : ["Content-Type: application/sdp"]), body: body)
        }
        func answer(to cseq: UInt32) async throws -> (status: Int, body: String) {
            let response = try #require(await peer.receiveResponse(to: .invite, cseq: cseq, timeout: .seconds(5)))
            return (response.statusCode, String(decoding: response.body, as: UTF8.self))
        }

        peer.send(request("INVITE", cseq: 1, toTag: nil, body: Self.sdp(port: media.localAddress.port, direction: "sendrecv", version: 1)),
                  to: agent)
        let incoming = Task { () -> Call? in
            for await call in bob.controller.incomingCalls { return call }
            return nil
        }
        let call = try #require(await incoming.value)
        try await call.answer()
        let ok = try #require(await peer.receiveResponse(timeout: .seconds(5)) { $0.statusCode == 200 })
        let tag = try #require(try ok.headers.to().tag)
        peer.send(request("ACK", cseq: 1, toTag: tag), to: agent)
        // 20 ms packets flow to the peer once the media has started (50 a second; a loaded machine starts late).
        #expect(await Self.packets(at: media, for: 1.5).count >= 25)

        // Hold: answered recvonly, and no more RTP (RTCP goes to the next port, not counted here).
        peer.send(request("INVITE", cseq: 2, toTag: tag, body: Self.sdp(port: media.localAddress.port, direction: "sendonly", version: 2)),
                  to: agent)
        let held = try await answer(to: 2)
        #expect(held.status == 200 && held.body.contains("a=recvonly") && !held.body.contains("a=sendrecv"))
        peer.send(request("ACK", cseq: 2, toTag: tag), to: agent)
        #expect(await eventually { events.withLock { $0.contains { if case .peerHold(_, true) = $0 { true } else { false } } } })
        _ = await Self.packets(at: media, for: 0.1)  // what was already on its way
        #expect(await Self.packets(at: media, for: 0.5).isEmpty)
        #expect(call.state == .active)

        // Resume: sendrecv again, and the first packet starts a talk spurt.
        peer.send(request("INVITE", cseq: 3, toTag: tag, body: Self.sdp(port: media.localAddress.port, direction: "sendrecv", version: 3)),
                  to: agent)
        let resumed = try await answer(to: 3)
        #expect(resumed.status == 200 && resumed.body.contains("a=sendrecv"))
        peer.send(request("ACK", cseq: 3, toTag: tag), to: agent)
        let after = await Self.packets(at: media, for: 1)
        #expect(after.count >= 25)
        #expect(after.first?.marker == true)
        #expect(events.withLock { $0.contains { if case .peerHold(_, false) = $0 { true } else { false } } })

        // A new media port cannot be followed mid-call: 488, and the call goes on as it was.
        peer.send(request("INVITE", cseq: 4, toTag: tag, body: Self.sdp(port: media.localAddress.port &+ 2, direction: "sendrecv", version: 4)),
                  to: agent)
        #expect(try await answer(to: 4).status == 488)
        #expect(await Self.packets(at: media, for: 0.5).count >= 10)

        peer.send(request("BYE", cseq: 5, toTag: tag), to: agent)
        #expect(await call.ended() == .remoteHangUp)
        #expect(await eventually { !bob.session.isActive })
        await bob.shutdown()
    }
}
