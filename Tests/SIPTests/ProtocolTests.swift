import Platform
import AudioAnalysis
import Foundation
import SIP
import Synchronization
import Testing
import SIPEmbedded
import TestSupport

/// The user agent against a peer that writes SIP by hand, on an embedded network with RFC 3261's
/// timers on virtual time: each timer's exact schedule, retransmissions, dialog matching, and
/// what a broken or hostile peer gets.
@Suite("SIP user agent against a raw peer")
struct ProtocolTests {
    /// An INVITE from `peer` to `agent`, as a test peer writes it.
    static func invite(to agent: SIPUserAgent, from peer: some HandWrittenPeer, callID: String = "raw-call", branch: String = "z9hG4bKraw1",
                       extra: [String] = [], body: String = opusSDP(port: 6000).text) -> String {
        sipText([
            "INVITE sip:bob@127.0.0.1:\(agent.localAddress.port) SIP/2.0",
            "Via: SIP/2.0/UDP 127.0.0.1:\(peer.port);branch=\(branch)",
            "Max-Forwards: 70",
            "From: \"Raw\" <sip:raw@127.0.0.1:\(peer.port)>;tag=rawtag",
            "To: <sip:bob@127.0.0.1:\(agent.localAddress.port)>",
            "Call-ID: \(callID)",
            "CSeq: 1 INVITE",
            "Contact: <sip:raw@127.0.0.1:\(peer.port)>",
            "Content-Type: application/sdp",
        ] + extra, body: body)
    }

    static func inDialog(_ method: String, to agent: SIPUserAgent, from peer: some HandWrittenPeer, callID: String = "raw-call",
                         toTag: String, fromTag: String = "rawtag", cseq: Int = 2, branch: String = "z9hG4bKraw2",
                         extra: [String] = [], body: String = "") -> String {
        sipText([
            "\(method) sip:bob@127.0.0.1:\(agent.localAddress.port) SIP/2.0",
            "Via: SIP/2.0/UDP 127.0.0.1:\(peer.port);branch=\(branch)",
            "Max-Forwards: 70",
            "From: <sip:raw@127.0.0.1:\(peer.port)>;tag=\(fromTag)",
            "To: <sip:bob@127.0.0.1:\(agent.localAddress.port)>;tag=\(toTag)",
            "Call-ID: \(callID)",
            "CSeq: \(cseq) \(method)",
        ] + extra + (body.isEmpty ? [] : ["Content-Type: application/sdp"]), body: body)
    }

    /// A call from the peer, answered by the agent and acknowledged.
    struct Established {
        let network: EmbeddedSIPNetwork
        let agent: SIPUserAgent
        let peer: EmbeddedSIPPeer
        let call: SIPCall
        let events: Recorder<SIPCallEvent>
        /// The agent's tag.
        let tag: String
    }

    static func establishedCall(answerChangedOffer: SIPUserAgent.OfferAnswerer? = nil,
                                configure: (inout SIPUserAgent.Configuration) -> Void = { _ in }) async throws -> Established {
        let (network, agent, peer) = try EmbeddedSIPNetwork.agentAndPeer(answerChangedOffer: answerChangedOffer, configure: configure)
        let calls = Recorder(agent.incomingCalls)
        peer.send(invite(to: agent, from: peer), to: agent.localAddress)
        let call = try #require(await calls.element(0))
        let events = Recorder(call.events)
        #expect(peer.receiveResponse()?.statusCode == 100)
        try call.accept(answer: opusSDP(port: 5000))
        let ok = try #require(peer.receiveResponse())
        #expect(ok.statusCode == 200)
        let tag = try #require(try ok.headers.to().tag)
        peer.send(inDialog("ACK", to: agent, from: peer, toTag: tag, cseq: 1, branch: "z9hG4bKack"), to: agent.localAddress)
        #expect(await events.wait { $0 == [.confirmed(nil)] })
        return Established(network: network, agent: agent, peer: peer, call: call, events: events, tag: tag)
    }

    /// A callee that rings and never answers: the call is cancelled at the ring timeout and ends
    /// as failed(408, "Ring Timeout") (Timer B stopped at the 180).
    @Test func aCallThatRingsForEverIsCancelled() async throws {
        let (network, agent, peer) = try EmbeddedSIPNetwork.agentAndPeer(configure: { $0.ringTimeout = .seconds(180) })
        let call = try agent.invite(to: SIPURI(user: "raw", host: "127.0.0.1", port: peer.port), offer: opusSDP(port: 4000))
        let invite = try #require(peer.next(.invite))
        peer.send(ReinviteTests.response(180, to: invite), to: agent.localAddress)
        network.advance(by: .seconds(179))
        #expect(call.state == .ringing)
        network.advance(by: .seconds(1))
        #expect(call.endReason == .failed(status: 408, reason: "Ring Timeout"))
        #expect(peer.next(.cancel) != nil)
    }

    /// The raw peer as a callee: the agent's INVITE, and a way to answer it.
    struct Callee {
        let network: EmbeddedSIPNetwork
        let agent: SIPUserAgent
        let peer: EmbeddedSIPPeer
        let invite: SIPRequest
        let events: Recorder<SIPCallEvent>
        let call: SIPCall

        init(timers: SIPTimers = .rfc3261) throws {
            (network, agent, peer) = try EmbeddedSIPNetwork.agentAndPeer(timers: timers)
            call = try agent.invite(to: SIPURI(user: "raw", host: "127.0.0.1", port: peer.port), offer: opusSDP(port: 4000))
            events = Recorder(call.events)
            invite = try #require(peer.next(.invite))
        }

        /// A response to the INVITE (or to `request`), with the callee's tag and Contact.
        func respond(_ status: Int, to request: SIPRequest? = nil, body: SIPBody? = nil) {
            let request = request ?? invite
            var headers = SIPHeaders()
            for field in request.headers where ["Via", "From", "Call-ID", "CSeq"].contains(field.name) { headers.add(field) }
            headers.add("To", (request.headers["To"] ?? "") + (status > 100 ? ";tag=callee" : ""))
            headers.add("Contact", "<sip:raw@127.0.0.1:\(peer.port)>")
            if let body { headers.add("Content-Type", body.contentType) }
            peer.send(SIPResponse(statusCode: status, headers: headers, body: body?.bytes ?? []).serialized(),
                      to: agent.localAddress)
        }
    }

    /// Timer A doubles from T1 until a provisional response; a final one is ACKed by the
    /// transaction (same branch), and again for each retransmission of it.
    @Test func inviteClientRetransmitsOnTimerAUntilAResponse() async throws {
        let callee = try Callee()
        let (network, agent, peer, inviteRequest) = (callee.network, callee.agent, callee.peer, callee.invite)
        #expect(inviteRequest.headers["User-Agent"] == "CallAudio")
        #expect(try inviteRequest.headers.topVia().rport == 0)
        #expect(try inviteRequest.headers.from().tag != nil)
        #expect(try inviteRequest.headers.contacts().first?.uri.port == agent.localAddress.port)
        #expect(inviteRequest.headers.contentType == "application/sdp")
        // T1 = 500 ms: the INVITE again at 0.5, 1.5 and 3.5 s, each with the same branch.
        var times: [Duration] = []
        for _ in 0..<3 {
            let again = try #require(peer.next(.invite, within: .seconds(10)))
            #expect(try again.headers.topVia().branch == inviteRequest.headers.topVia().branch)
            times.append(network.elapsed)
        }
        #expect(times == [.milliseconds(500), .milliseconds(1500), .milliseconds(3500)])

        // A 100 stops them.
        callee.respond(100)
        #expect(await callee.events.wait { $0 == [.trying] })
        let sent = agent.statistics.retransmissionsSent
        network.advance(by: .seconds(20))
        #expect(agent.statistics.retransmissionsSent == sent)
        #expect(peer.drain().isEmpty)

        // A 486: the transaction ACKs it (same branch), and again for each retransmission.
        callee.respond(486)
        let ack = try #require(peer.next(.ack))
        #expect(try ack.headers.topVia().branch == inviteRequest.headers.topVia().branch)
        #expect(await callee.events.endReason() == .failed(status: 486, reason: "Busy Here"))
        callee.respond(486)
        #expect(peer.next(.ack) != nil)
        #expect(agent.statistics.retransmissionsAbsorbed == 1)
        #expect(agent.statistics.retransmissionsSent == 4)  // three INVITEs and the second ACK
        // Timer D (32 s) ends the transaction: a 486 after it finds nothing to ACK.
        network.advance(by: .seconds(32))
        callee.respond(486)
        #expect(peer.drain().isEmpty)
    }

    @Test func theCallerAcknowledgesEvery2xxOnce() async throws {
        let callee = try Callee()
        callee.respond(200, body: opusSDP(port: 5000))
        let ack = try #require(callee.peer.next(.ack))
        // The ACK for a 2xx is the UAC core's: a new branch, the INVITE's CSeq number, to the Contact.
        #expect(try ack.headers.topVia().branch != callee.invite.headers.topVia().branch)
        #expect(try ack.headers.cseq() == SIPCSeq(1, .ack))
        #expect(try ack.headers.to().tag == "callee")
        #expect(ack.uri == SIPURI(user: "raw", host: "127.0.0.1", port: callee.peer.port))
        callee.respond(200, body: opusSDP(port: 5000))  // the 2xx again: the same ACK again
        let again = try #require(callee.peer.next(.ack))
        #expect(again == ack)
        #expect(await callee.events.wait { !$0.isEmpty })
        #expect(callee.events.all == [.answered(opusSDP(port: 5000))])
        // Our BYE: the next CSeq, in the dialog.
        try callee.call.bye()
        let bye = try #require(callee.peer.next(.bye))
        #expect(try bye.headers.cseq() == SIPCSeq(2, .bye))
        #expect(try bye.headers.to().tag == "callee")
        #expect(try bye.headers.from().tag == callee.invite.headers.from().tag)
    }

    @Test func anAnswerCrossingACancelIsAcknowledgedAndHungUp() async throws {
        let callee = try Callee()
        callee.respond(180)
        #expect(await callee.events.wait { $0 == [.ringing(nil)] })
        try callee.call.cancel()
        let cancel = try #require(callee.peer.next(.cancel))
        #expect(try cancel.headers.topVia().branch == callee.invite.headers.topVia().branch)
        #expect(try cancel.headers.cseq() == SIPCSeq(1, .cancel))
        // The callee answered before it saw the CANCEL: 200 to both.
        callee.respond(200, body: opusSDP(port: 5000))
        callee.respond(200, to: cancel)
        #expect(callee.peer.next(.ack) != nil)
        #expect(callee.peer.next(.bye) != nil)
        #expect(await callee.events.endReason() == .cancelled(byRemote: false))
    }

    /// Timer B: 64 × T1 = 32 s, with the INVITE sent at 0, 0.5, 1.5, 3.5, 7.5, 15.5 and 31.5 s.
    @Test func inviteClientTimesOutWithTimerB() async throws {
        let callee = try Callee()
        var times: [Duration] = [.zero]
        while let _ = callee.peer.next(.invite, within: .seconds(32) - callee.network.elapsed) {
            times.append(callee.network.elapsed)
        }
        #expect(times == [0, 500, 1500, 3500, 7500, 15_500, 31_500].map { .milliseconds($0) })
        #expect(callee.call.endReason == .failed(status: 408, reason: "Request Timeout"))
        #expect(callee.network.elapsed == .seconds(32))
    }

    /// Timer E: 0.5, 1.5, 3.5 s, then every T2 (4 s) up to Timer F (32 s): 11 transmissions.
    @Test func nonInviteClientTimersEAndF() async throws {
        let (network, agent, peer) = try EmbeddedSIPNetwork.agentAndPeer()
        let options = Task { try await agent.options(to: SIPURI(host: "127.0.0.1", port: peer.port)) }
        #expect(await network.waitForDatagrams(1))
        var times: [Duration] = []
        while peer.next(.options, within: .seconds(40)) != nil { times.append(network.elapsed) }
        #expect(times == [0, 500, 1500, 3500, 7500, 11_500, 15_500, 19_500, 23_500, 27_500, 31_500].map { .milliseconds($0) })
        await #expect(throws: SIPError.timeout) { try await options.value }
    }

    @Test func serverRetransmits2xxUntilACK() async throws {
        let (network, agent, peer) = try EmbeddedSIPNetwork.agentAndPeer()
        let calls = Recorder(agent.incomingCalls)
        peer.send(Self.invite(to: agent, from: peer), to: agent.localAddress)
        let call = try #require(await calls.element(0))
        let events = Recorder(call.events)
        #expect(peer.receiveResponse()?.statusCode == 100)
        try call.accept(answer: opusSDP(port: 5000))
        // No ACK: the 2xx at 0, 0.5, 1.5 s...
        let oks = peer.collect(3, within: .seconds(2))
        guard oks.count == 3, case .response(let ok)? = oks.first else {
            Issue.record("no 200")
            return
        }
        #expect(network.elapsed == .milliseconds(1500))
        #expect(ok.statusCode == 200)
        #expect(ok.body == opusSDP(port: 5000).bytes)
        #expect(try ok.headers.contacts().first?.uri.port == agent.localAddress.port)
        #expect(ok.headers.tokens("Allow").contains("BYE"))
        let tag = try #require(try ok.headers.to().tag)
        #expect(call.state == .connecting)
        // The ACK stops them and confirms the call.
        peer.send(Self.inDialog("ACK", to: agent, from: peer, toTag: tag, cseq: 1, branch: "z9hG4bKack"), to: agent.localAddress)
        #expect(await events.wait { $0 == [.confirmed(nil)] })
        #expect(agent.statistics.retransmissionsSent == 2)
        network.advance(by: .seconds(40))
        #expect(agent.statistics.retransmissionsSent == 2)
    }

    /// No ACK in 64 × T1: the call ends, and the session with a BYE (RFC 3261 section 13.3.1.4).
    @Test func serverEndsTheCallWithoutACK() async throws {
        let (network, agent, peer) = try EmbeddedSIPNetwork.agentAndPeer()
        let calls = Recorder(agent.incomingCalls)
        peer.send(Self.invite(to: agent, from: peer), to: agent.localAddress)
        let call = try #require(await calls.element(0))
        try call.accept(answer: opusSDP(port: 5000))
        network.advance(by: .milliseconds(31_999))
        #expect(call.state == .connecting)
        network.advance(by: .milliseconds(1))
        #expect(call.endReason == .failed(status: 408, reason: "No ACK"))
        #expect(!peer.requests(.bye).isEmpty)
    }

    @Test func retransmittedInviteIsAbsorbed() async throws {
        let (_, agent, peer) = try EmbeddedSIPNetwork.agentAndPeer()
        let calls = Recorder(agent.incomingCalls)
        let text = Self.invite(to: agent, from: peer)
        peer.send(text, to: agent.localAddress)
        let call = try #require(await calls.element(0))
        #expect(peer.receiveResponse()?.statusCode == 100)
        try call.ringing()
        #expect(peer.receiveResponse()?.statusCode == 180)
        peer.send(text, to: agent.localAddress)  // the same INVITE again: the 180 again, no new call
        #expect(peer.receiveResponse()?.statusCode == 180)
        #expect(agent.stateCounts.calls == 1)
        #expect(agent.statistics.retransmissionsAbsorbed == 1)
    }

    @Test func byeWithAWrongTagGets481AndTheCallGoesOn() async throws {
        let c = try await Self.establishedCall()
        let (agent, peer) = (c.agent, c.peer)
        peer.send(Self.inDialog("BYE", to: agent, from: peer, toTag: "wrong", branch: "z9hG4bKbye1"), to: agent.localAddress)
        #expect(peer.receiveResponse()?.statusCode == 481)
        peer.send(Self.inDialog("BYE", to: agent, from: peer, toTag: c.tag, fromTag: "other", branch: "z9hG4bKbye2"),
                  to: agent.localAddress)
        #expect(peer.receiveResponse()?.statusCode == 481)
        #expect(c.call.state == .established)
        #expect(c.events.all == [.confirmed(nil)])
        #expect(agent.statistics.unknownDialogRequests == 2)
        // The right BYE ends it.
        peer.send(Self.inDialog("BYE", to: agent, from: peer, toTag: c.tag, branch: "z9hG4bKbye3"), to: agent.localAddress)
        #expect(peer.receiveResponse()?.statusCode == 200)
        #expect(await c.events.endReason() == .hungUp(byRemote: true))
    }

    @Test func requestsFromUnknownDialogsNeverReachACall() async throws {
        let c = try await Self.establishedCall()
        let agent = c.agent
        let stranger = try c.network.makePeer()
        for (i, method) in ["BYE", "INVITE", "OPTIONS", "ACK"].enumerated() {
            stranger.send(Self.inDialog(method, to: agent, from: stranger, callID: "someone-else", toTag: c.tag,
                                        branch: "z9hG4bKu\(i)", body: method == "INVITE" ? opusSDP(port: 7000).text : ""),
                          to: agent.localAddress)
        }
        stranger.send(Self.inDialog("CANCEL", to: agent, from: stranger, callID: "raw-call", toTag: c.tag, cseq: 1,
                                    branch: "z9hG4bKnope"), to: agent.localAddress)
        var statuses: [String: Int] = [:]  // by method: the 481 to the INVITE is retransmitted until an ACK
        for case .response(let response) in stranger.drain() {
            statuses[try response.headers.cseq().method.rawValue] = response.statusCode
        }
        #expect(statuses == ["BYE": 481, "INVITE": 481, "OPTIONS": 481, "CANCEL": 481])  // the ACK is dropped
        #expect(agent.statistics.unknownDialogRequests == 5)
        #expect(c.call.state == .established)
        #expect(c.events.all == [.confirmed(nil)])
    }

    @Test func cancelFromThePeer() async throws {
        let (network, agent, peer) = try EmbeddedSIPNetwork.agentAndPeer()
        let calls = Recorder(agent.incomingCalls)
        peer.send(Self.invite(to: agent, from: peer), to: agent.localAddress)
        let call = try #require(await calls.element(0))
        let events = Recorder(call.events)
        #expect(peer.receiveResponse()?.statusCode == 100)
        peer.send(sipText([
            "CANCEL sip:bob@127.0.0.1:\(agent.localAddress.port) SIP/2.0",
            "Via: SIP/2.0/UDP 127.0.0.1:\(peer.port);branch=z9hG4bKraw1",
            "Max-Forwards: 70",
            "From: \"Raw\" <sip:raw@127.0.0.1:\(peer.port)>;tag=rawtag",
            "To: <sip:bob@127.0.0.1:\(agent.localAddress.port)>",
            "Call-ID: raw-call",
            "CSeq: 1 CANCEL",
        ]), to: agent.localAddress)
        var statuses: [String: Int] = [:]
        for case .response(let r) in peer.drain() { statuses[try r.headers.cseq().method.rawValue] = r.statusCode }
        #expect(statuses == ["CANCEL": 200, "INVITE": 487])
        #expect(await events.endReason() == .cancelled(byRemote: true))
        // The 487 is retransmitted until the ACK (Timer G: T1, doubling), which the transaction absorbs.
        #expect(peer.receiveResponse(within: .seconds(1))?.statusCode == 487)
        #expect(network.elapsed == .milliseconds(500))
        peer.send(Self.inDialog("ACK", to: agent, from: peer, toTag: "any", cseq: 1, branch: "z9hG4bKraw1"), to: agent.localAddress)
        let sent = agent.statistics.retransmissionsSent
        network.advance(by: .seconds(40))
        #expect(agent.statistics.retransmissionsSent == sent)
        #expect(peer.drain().isEmpty)
    }
}
