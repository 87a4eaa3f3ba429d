import Platform
@testable import SIP
import Testing
import TestSupport

/// Session timers (RFC 4028) against a raw peer, with the minimum interval shortened to 2 s (as
/// the tests shorten T1).
@Suite("Session timers (RFC 4028)")
struct SessionTimerTests {
    static let timers = SIPTimers(t1: .milliseconds(40), t2: .milliseconds(320), t4: .milliseconds(400),
                                  timerD: .milliseconds(400), minimumSessionSeconds: 2)

    static func agent(sessionInterval: Int? = 1800) throws -> SIPUserAgent {
        var configuration = SIPUserAgent.Configuration(localAddress: try SocketAddress(host: "127.0.0.1", port: 0), timers: timers)
        configuration.sessionInterval = sessionInterval
        return try SIPUserAgent(configuration: configuration)
    }

    /// A provider's INVITE that requires timers is answered, with its interval and the UAC as
    /// refresher; when the UAC never refreshes, we end the call with a BYE.
    @Test func aRequiredTimerIsAcceptedAndAnUnrefreshedSessionEnds() async throws {
        let agent = try Self.agent(), peer = try RawPeer()
        defer { agent.close() }
        let calls = Recorder(agent.incomingCalls)
        peer.send(ProtocolTests.invite(to: agent, from: peer, extra: ["Supported: timer", "Require: timer", "Session-Expires: 3"]),
                  to: agent.localAddress)
        let call = try #require(await calls.element(0))
        let events = Recorder(call.events)
        try call.accept(answer: opusSDP(port: 5000))
        let ok = try #require(await peer.receiveResponse { $0.statusCode == 200 })
        #expect(ok.headers["Session-Expires"] == "3;refresher=uac")
        #expect(ok.headers.tokens("Require") == ["timer"])
        let tag = try #require(try? ok.headers.to().tag)
        peer.send(ProtocolTests.inDialog("ACK", to: agent, from: peer, toTag: tag, cseq: 1, branch: "z9hG4bKsack"), to: agent.localAddress)
        // 3 s less a third: the BYE comes 2 s after the 2xx.
        #expect(await ReinviteTests.next(.bye, at: peer) != nil)
        #expect(await events.endReason() == .failed(status: 408, reason: "Session Expired"))
    }

    /// An interval under our minimum gets 422 with our Min-SE.
    @Test func aTooShortIntervalGets422() async throws {
        let agent = try Self.agent(), peer = try RawPeer()
        defer { agent.close() }
        peer.send(ProtocolTests.invite(to: agent, from: peer, extra: ["Supported: timer", "Session-Expires: 1"]), to: agent.localAddress)
        let response = try #require(await peer.receiveResponse { $0.statusCode >= 200 })
        #expect(response.statusCode == 422)
        #expect(response.headers["Min-SE"] == "2")
    }

    /// Our INVITE asks for a session timer; a 422 makes us ask again with the peer's minimum; a
    /// 2xx that names us refresher makes us send re-INVITEs every half interval.
    @Test func weAskRetryOn422AndRefresh() async throws {
        let agent = try Self.agent(sessionInterval: 2), peer = try RawPeer()
        defer { agent.close() }
        let call = try agent.invite(to: SIPURI(user: "raw", host: "127.0.0.1", port: peer.port), offer: opusSDP(port: 4000))
        let events = Recorder(call.events)
        let first = try #require(await ReinviteTests.next(.invite, at: peer))
        #expect(first.headers["Session-Expires"] == "2")
        #expect(first.headers.tokens("Supported").contains("timer"))
        var tooSmall = SIPResponse(statusCode: 422, headers: SIPHeaders())
        for field in first.headers where ["Via", "From", "To", "Call-ID", "CSeq"].contains(field.name) { tooSmall.headers.add(field) }
        tooSmall.headers.set("To", (first.headers["To"] ?? "") + ";tag=rawtag")
        tooSmall.headers.add("Min-SE", "4")
        peer.send(tooSmall.serialized(), to: agent.localAddress)
        let second = try #require(await ReinviteTests.next(.invite, at: peer, cseq: 2))
        #expect(second.headers["Session-Expires"] == "4")
        var ok = SIPResponse(statusCode: 200, headers: SIPHeaders(), body: opusSDP(port: 6000).bytes)
        for field in second.headers where ["Via", "From", "To", "Call-ID", "CSeq"].contains(field.name) { ok.headers.add(field) }
        ok.headers.set("To", (second.headers["To"] ?? "") + ";tag=rawtag")
        ok.headers.add("Contact", "<sip:raw@127.0.0.1:\(peer.port)>")
        ok.headers.add("Session-Expires", "4;refresher=uac")
        ok.headers.add("Content-Type", "application/sdp")
        peer.send(ok.serialized(), to: agent.localAddress)
        #expect(await events.wait { $0.contains { if case .answered = $0 { true } else { false } } })
        // Half of 4 s later: a re-INVITE in the dialog with our last offer and the timer.
        let refresh = try #require(await ReinviteTests.next(.invite, at: peer, cseq: 3))
        #expect(refresh.body == opusSDP(port: 4000).bytes)
        #expect(refresh.headers["Session-Expires"] == "4;refresher=uac")
        call.hangUp()
    }
}
