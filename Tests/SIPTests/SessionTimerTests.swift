import Platform
@testable import SIP
import SIPEmbedded
import Testing
import TestSupport

/// Session timers (RFC 4028) against a peer that writes SIP by hand, on an embedded network with
/// RFC 3261's timers and RFC 4028's minimum interval (90 s): half an hour passes in microseconds.
@Suite("Session timers (RFC 4028)")
struct SessionTimerTests {
    static func agentAndPeer(sessionInterval: Int? = 1800) throws -> (EmbeddedSIPNetwork, SIPUserAgent, EmbeddedSIPPeer) {
        try EmbeddedSIPNetwork.agentAndPeer(configure: { $0.sessionInterval = sessionInterval })
    }

    /// A provider's INVITE that requires timers is answered, with its interval and the UAC as
    /// refresher; when the UAC never refreshes, we end the call with a BYE at the interval less
    /// a third (at most 32 s).
    @Test func aRequiredTimerIsAcceptedAndAnUnrefreshedSessionEnds() async throws {
        let (network, agent, peer) = try Self.agentAndPeer()
        let calls = Recorder(agent.incomingCalls)
        peer.send(ProtocolTests.invite(to: agent, from: peer, extra: ["Supported: timer", "Require: timer", "Session-Expires: 300"]),
                  to: agent.localAddress)
        let call = try #require(await calls.element(0))
        try call.accept(answer: opusSDP(port: 5000))
        let ok = try #require(peer.receiveResponse { $0.statusCode == 200 })
        #expect(ok.headers["Session-Expires"] == "300;refresher=uac")
        #expect(ok.headers.tokens("Require") == ["timer"])
        let tag = try #require(try? ok.headers.to().tag)
        peer.send(ProtocolTests.inDialog("ACK", to: agent, from: peer, toTag: tag, cseq: 1, branch: "z9hG4bKsack"), to: agent.localAddress)
        // 300 s less 32 s: the BYE comes 268 s after the 2xx.
        network.advance(by: .seconds(267))
        #expect(call.state == .established)
        #expect(peer.next(.bye, within: .seconds(1)) != nil)
        #expect(network.elapsed == .seconds(268))
        #expect(call.endReason == .failed(status: 408, reason: "Session Expired"))
    }

    /// A call from the peer with a 300 s session timer that the peer refreshes, answered and acknowledged.
    static func callWithTimer() async throws -> (EmbeddedSIPNetwork, SIPUserAgent, EmbeddedSIPPeer, SIPCall, String) {
        let (network, agent, peer) = try Self.agentAndPeer()
        let calls = Recorder(agent.incomingCalls)
        peer.send(ProtocolTests.invite(to: agent, from: peer, extra: ["Supported: timer", "Session-Expires: 300"]), to: agent.localAddress)
        let call = try #require(await calls.element(0))
        try call.accept(answer: opusSDP(port: 5000))
        let tag = try #require(try peer.receiveResponse { $0.statusCode == 200 }?.headers.to().tag)
        peer.send(ProtocolTests.inDialog("ACK", to: agent, from: peer, toTag: tag, cseq: 1, branch: "z9hG4bKsack"), to: agent.localAddress)
        return (network, agent, peer, call, tag)
    }

    /// A refresh by the peer (a re-INVITE with the same offer) starts the interval again.
    @Test func aRefreshKeepsTheSession() async throws {
        let (network, agent, peer, call, tag) = try await Self.callWithTimer()
        for refresh in 2...4 {
            network.advance(by: .seconds(150))
            peer.send(ProtocolTests.inDialog("INVITE", to: agent, from: peer, toTag: tag, cseq: refresh, branch: "z9hG4bKsr\(refresh)",
                                             extra: ["Supported: timer", "Session-Expires: 300;refresher=uac"],
                                             body: opusSDP(port: 6000).text), to: agent.localAddress)
            #expect(peer.receiveResponse(to: .invite, cseq: UInt32(refresh))?.statusCode == 200)
            peer.send(ProtocolTests.inDialog("ACK", to: agent, from: peer, toTag: tag, cseq: refresh, branch: "z9hG4bKsa\(refresh)"),
                      to: agent.localAddress)
        }
        network.advance(by: .seconds(250))
        #expect(call.state == .established)
        #expect(peer.requests(.bye).isEmpty)
    }

    /// The peer refreshes by UPDATE (RFC 4028 section 7.4): the interval starts again; an UPDATE
    /// with a changed offer gets 488 and changes nothing.
    @Test func anUpdateRefreshesTheSession() async throws {
        let (network, agent, peer, call, tag) = try await Self.callWithTimer()
        for refresh in 2...4 {
            network.advance(by: .seconds(150))
            peer.send(ProtocolTests.inDialog("UPDATE", to: agent, from: peer, toTag: tag, cseq: refresh, branch: "z9hG4bKup\(refresh)",
                                             extra: ["Supported: timer", "Session-Expires: 300;refresher=uac",
                                                     "Contact: <sip:raw@127.0.0.1:\(peer.port)>"]), to: agent.localAddress)
            let ok = try #require(peer.receiveResponse(to: .update, cseq: UInt32(refresh)))
            #expect(ok.statusCode == 200)
            #expect(ok.headers["Session-Expires"] == "300;refresher=uac")
            #expect(ok.headers.firstContact != nil)
        }
        peer.send(ProtocolTests.inDialog("UPDATE", to: agent, from: peer, toTag: tag, cseq: 5, branch: "z9hG4bKupsdp",
                                         body: opusSDP(port: 6010).text), to: agent.localAddress)
        #expect(peer.receiveResponse(to: .update, cseq: 5)?.statusCode == 488)
        network.advance(by: .seconds(250))
        #expect(call.state == .established)
        #expect(peer.requests(.bye).isEmpty)
        network.advance(by: .seconds(20))
        #expect(peer.next(.bye) != nil)  // 268 s after the last refresh
    }

    /// An interval under our minimum gets 422 with our Min-SE.
    @Test func aTooShortIntervalGets422() async throws {
        let (_, agent, peer) = try Self.agentAndPeer()
        peer.send(ProtocolTests.invite(to: agent, from: peer, extra: ["Supported: timer", "Session-Expires: 60"]), to: agent.localAddress)
        let response = try #require(peer.receiveResponse { $0.statusCode >= 200 })
        #expect(response.statusCode == 422)
        #expect(response.headers["Min-SE"] == "90")
    }

    /// Our INVITE asks for a session timer; a 422 makes us ask again with the peer's minimum; a
    /// 2xx that names us refresher makes us send re-INVITEs every half interval.
    @Test func weAskRetryOn422AndRefresh() async throws {
        let (network, agent, peer) = try Self.agentAndPeer(sessionInterval: 90)
        let call = try agent.invite(to: SIPURI(user: "raw", host: "127.0.0.1", port: peer.port), offer: opusSDP(port: 4000))
        let events = Recorder(call.events)
        let first = try #require(peer.next(.invite))
        #expect(first.headers["Session-Expires"] == "90")
        #expect(first.headers.tokens("Supported").contains("timer"))
        var tooSmall = SIPResponse(statusCode: 422, headers: SIPHeaders())
        for field in first.headers where ["Via", "From", "To", "Call-ID", "CSeq"].contains(field.name) { tooSmall.headers.add(field) }
        tooSmall.headers.set("To", (first.headers["To"] ?? "") + ";tag=rawtag")
        tooSmall.headers.add("Min-SE", "600")
        peer.send(tooSmall.serialized(), to: agent.localAddress)
        let second = try #require(peer.next(.invite, cseq: 2))
        #expect(second.headers["Session-Expires"] == "600")
        var ok = SIPResponse(statusCode: 200, headers: SIPHeaders(), body: opusSDP(port: 6000).bytes)
        for field in second.headers where ["Via", "From", "To", "Call-ID", "CSeq"].contains(field.name) { ok.headers.add(field) }
        ok.headers.set("To", (second.headers["To"] ?? "") + ";tag=rawtag")
        ok.headers.add("Contact", "<sip:raw@127.0.0.1:\(peer.port)>")
        ok.headers.add("Session-Expires", "600;refresher=uac")
        ok.headers.add("Content-Type", "application/sdp")
        peer.send(ok.serialized(), to: agent.localAddress)
        #expect(await events.wait { $0.contains { if case .answered = $0 { true } else { false } } })
        // Half of 600 s later: a re-INVITE in the dialog with our last offer and the timer.
        let answered = network.elapsed
        let refresh = try #require(peer.next(.invite, cseq: 3, within: .seconds(400)))
        #expect(network.elapsed - answered == .seconds(300))
        #expect(refresh.body == opusSDP(port: 4000).bytes)
        #expect(refresh.headers["Session-Expires"] == "600;refresher=uac")
        call.hangUp()
    }
}
