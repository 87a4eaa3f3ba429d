import Platform
import AudioAnalysis
import Foundation
import SIP
import Synchronization
import Testing
import TestSupport

/// The user agent against a peer that writes SIP by hand: timers and retransmissions over real
/// UDP, dialog matching, and what a broken or hostile peer gets.
@Suite("SIP user agent against a raw peer")
struct ProtocolTests {
    /// An INVITE from `peer` to `agent`, as a test peer writes it.
    static func invite(to agent: SIPUserAgent, from peer: RawPeer, callID: String = "raw-call", branch: String = "z9hG4bKraw1",
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

    static func inDialog(_ method: String, to agent: SIPUserAgent, from peer: RawPeer, callID: String = "raw-call",
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

    /// A call from the raw peer, answered by the agent and acknowledged: (agent, peer, call, events, the agent's tag).
    static func establishedCall(answerChangedOffer: SIPUserAgent.OfferAnswerer? = nil) async throws
        -> (SIPUserAgent, RawPeer, SIPCall, Recorder<SIPCallEvent>, String) {
        let agent = try makeAgent(answerChangedOffer: answerChangedOffer), peer = try RawPeer()
        let calls = Recorder(agent.incomingCalls)
        peer.send(invite(to: agent, from: peer), to: agent.localAddress)
        let call = try #require(await calls.element(0))
        let events = Recorder(call.events)
        #expect(await peer.receiveResponse()?.statusCode == 100)
        try call.accept(answer: opusSDP(port: 5000))
        let ok = try #require(await peer.receiveResponse())
        #expect(ok.statusCode == 200)
        let tag = try #require(try ok.headers.to().tag)
        peer.send(inDialog("ACK", to: agent, from: peer, toTag: tag, cseq: 1, branch: "z9hG4bKack"), to: agent.localAddress)
        #expect(await events.wait { $0 == [.confirmed(nil)] })
        return (agent, peer, call, events, tag)
    }

    /// A callee that rings and never answers: the call is cancelled at the ring timeout and ends
    /// as failed(408, "Ring Timeout") (Timer B stopped at the 180).
    @Test func aCallThatRingsForEverIsCancelled() async throws {
        var configuration = SIPUserAgent.Configuration(localAddress: try SocketAddress(host: "127.0.0.1", port: 0), timers: .fast)
        configuration.ringTimeout = .milliseconds(300)
        let agent = try SIPUserAgent(configuration: configuration), peer = try RawPeer()
        defer { agent.close() }
        let call = try agent.invite(to: SIPURI(user: "raw", host: "127.0.0.1", port: peer.port), offer: opusSDP(port: 4000))
        let events = Recorder(call.events)
        guard case .request(let invite)? = await peer.receiveMessage() else { Issue.record("no INVITE"); return }
        peer.send(ReinviteTests.response(180, to: invite), to: agent.localAddress)
        #expect(await events.endReason() == .failed(status: 408, reason: "Ring Timeout"))
        #expect(await ReinviteTests.next(.cancel, at: peer) != nil)
    }

    @Test func inviteClientRetransmitsOnTimerAUntilAResponse() async throws {
        // Timer D long enough that the 486's retransmission below still finds the transaction on a
        // slow, loaded machine (with the 400 ms of `.fast` it missed it there).
        var timers = SIPTimers.fast
        timers.timerD = .seconds(10)
        let agent = try makeAgent(timers: timers), peer = try RawPeer()
        let call = try agent.invite(to: SIPURI(user: "raw", host: "127.0.0.1", port: peer.port), offer: opusSDP(port: 4000))
        let events = Recorder(call.events)
        // T1 = 40 ms: the INVITE at 0, 40, 120, 280 ms... (the exact schedule is checked in
        // virtual time; here, that retransmissions happen and stop).
        let first = await peer.collect(3)
        guard first.count == 3, case .request(let inviteRequest)? = first.first else {
            Issue.record("no INVITE")
            return
        }
        #expect(Set(first.map { try? $0.headers.topVia().branch }).count == 1)  // retransmissions, same branch
        #expect(inviteRequest.headers["User-Agent"] == "CallAudio")
        #expect(try inviteRequest.headers.topVia().rport == 0)
        #expect(try inviteRequest.headers.from().tag != nil)
        #expect(try inviteRequest.headers.contacts().first?.uri.port == agent.localAddress.port)
        #expect(inviteRequest.headers.contentType == "application/sdp")

        // A 100 stops them.
        let agentAddress = agent.localAddress
        func reply(_ status: Int) -> [UInt8] {
            var response = SIPResponse(statusCode: status, headers: inviteRequest.headers)
            response.headers.remove("Contact")
            response.headers.remove("Content-Type")
            if status > 100 { response.headers.set("To", (inviteRequest.headers["To"] ?? "") + ";tag=peer") }
            return response.serialized()
        }
        peer.send(reply(100), to: agentAddress)
        #expect(await events.wait { $0 == [.trying] })
        let sent = agent.statistics.retransmissionsSent
        try await Task.sleep(for: .milliseconds(400))  // Timer A would have fired at least twice
        #expect(agent.statistics.retransmissionsSent == sent)
        _ = await peer.drain()

        // A 486: the transaction ACKs it (same branch), and again for each retransmission.
        peer.send(reply(486), to: agentAddress)
        guard case .request(let ack)? = await peer.receiveMessage() else {
            Issue.record("no ACK")
            return
        }
        #expect(ack.method == .ack)
        #expect(try ack.headers.topVia().branch == inviteRequest.headers.topVia().branch)
        #expect(await events.endReason() == .failed(status: 486, reason: "Busy Here"))
        peer.send(reply(486), to: agentAddress)
        guard case .request(let again)? = await peer.receiveMessage() else {
            Issue.record("no second ACK")
            return
        }
        #expect(again.method == .ack)
        #expect(agent.statistics.retransmissionsAbsorbed == 1)
        #expect(agent.statistics.retransmissionsSent >= 3)
    }

    /// The raw peer as a callee: the agent's INVITE, and a way to answer it.
    struct Callee {
        let agent: SIPUserAgent
        let peer: RawPeer
        let invite: SIPRequest
        let events: Recorder<SIPCallEvent>
        let call: SIPCall

        init() async throws {
            agent = try makeAgent()
            peer = try RawPeer()
            call = try agent.invite(to: SIPURI(user: "raw", host: "127.0.0.1", port: peer.port), offer: opusSDP(port: 4000))
            events = Recorder(call.events)
            guard case .request(let request)? = await peer.receiveMessage() else { throw CancellationError() }
            invite = request
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

        /// The next request the agent sends, skipping retransmitted INVITEs.
        func nextRequest(_ method: SIPMethod) async -> SIPRequest? {
            let deadline = ContinuousClock.now + .seconds(2)
            while ContinuousClock.now < deadline {
                if case .request(let r)? = await peer.receiveMessage(timeout: deadline - ContinuousClock.now),
                   r.method == method {
                    return r
                }
            }
            return nil
        }
    }

    @Test func theCallerAcknowledgesEvery2xxOnce() async throws {
        let callee = try await Callee()
        callee.respond(200, body: opusSDP(port: 5000))
        let ack = try #require(await callee.nextRequest(.ack))
        // The ACK for a 2xx is the UAC core's: a new branch, the INVITE's CSeq number, to the Contact.
        #expect(try ack.headers.topVia().branch != callee.invite.headers.topVia().branch)
        #expect(try ack.headers.cseq() == SIPCSeq(1, .ack))
        #expect(try ack.headers.to().tag == "callee")
        #expect(ack.uri == SIPURI(user: "raw", host: "127.0.0.1", port: callee.peer.port))
        callee.respond(200, body: opusSDP(port: 5000))  // the 2xx again: the same ACK again
        let again = try #require(await callee.nextRequest(.ack))
        #expect(again == ack)
        #expect(await callee.events.wait { $0.filter { if case .answered = $0 { true } else { false } }.count == 1 })
        try await Task.sleep(for: .milliseconds(50))
        #expect(callee.events.all == [.answered(opusSDP(port: 5000))])
        // Our BYE: the next CSeq, in the dialog.
        try callee.call.bye()
        let bye = try #require(await callee.nextRequest(.bye))
        #expect(try bye.headers.cseq() == SIPCSeq(2, .bye))
        #expect(try bye.headers.to().tag == "callee")
        #expect(try bye.headers.from().tag == callee.invite.headers.from().tag)
    }

    @Test func anAnswerCrossingACancelIsAcknowledgedAndHungUp() async throws {
        let callee = try await Callee()
        callee.respond(180)
        #expect(await callee.events.wait { $0 == [.ringing(nil)] })
        try callee.call.cancel()
        let cancel = try #require(await callee.nextRequest(.cancel))
        #expect(try cancel.headers.topVia().branch == callee.invite.headers.topVia().branch)
        #expect(try cancel.headers.cseq() == SIPCSeq(1, .cancel))
        // The callee answered before it saw the CANCEL: 200 to both.
        callee.respond(200, body: opusSDP(port: 5000))
        callee.respond(200, to: cancel)
        #expect(await callee.nextRequest(.ack) != nil)
        #expect(await callee.nextRequest(.bye) != nil)
        #expect(await callee.events.endReason() == .cancelled(byRemote: false))
    }

    @Test func inviteClientTimesOutWithTimerB() async throws {
        let timers = SIPTimers(t1: .milliseconds(10), t2: .milliseconds(80), t4: .milliseconds(100), timerD: .milliseconds(100))
        let agent = try makeAgent(timers: timers), peer = try RawPeer()
        let call = try agent.invite(to: SIPURI(user: "raw", host: "127.0.0.1", port: peer.port), offer: opusSDP(port: 4000))
        let events = Recorder(call.events)
        // 64 × T1 = 640 ms; INVITEs at 0, 10, 30, 70, 150, 310 and 630 ms (a loaded machine
        // may push the last one past Timer B).
        let started = ContinuousClock.now
        #expect(await events.endReason(timeout: .seconds(3)) == .failed(status: 408, reason: "Request Timeout"))
        #expect(ContinuousClock.now - started >= .milliseconds(600))
        let invites = await peer.drain()
        #expect((5...7).contains(invites.count), "\(invites.count) INVITEs")
    }

    @Test func nonInviteClientTimersEAndF() async throws {
        let timers = SIPTimers(t1: .milliseconds(10), t2: .milliseconds(40), t4: .milliseconds(50), timerD: .milliseconds(50))
        let agent = try makeAgent(timers: timers), peer = try RawPeer()
        let started = ContinuousClock.now
        await #expect(throws: SIPError.timeout) {
            try await agent.options(to: SIPURI(host: "127.0.0.1", port: peer.port))
        }
        #expect(ContinuousClock.now - started >= .milliseconds(640))
        // E: 0, 10, 30, 70, then every 40 ms (T2) up to 640 ms: 18 transmissions.
        let sent = await peer.drain()
        #expect((12...18).contains(sent.count), "\(sent.count) OPTIONS")
    }

    @Test func serverRetransmits2xxUntilACK() async throws {
        let agent = try makeAgent(), peer = try RawPeer()
        let calls = Recorder(agent.incomingCalls)
        peer.send(Self.invite(to: agent, from: peer), to: agent.localAddress)
        let call = try #require(await calls.element(0))
        let events = Recorder(call.events)
        #expect(await peer.receiveResponse()?.statusCode == 100)
        try call.accept(answer: opusSDP(port: 5000))
        // No ACK: the 2xx at 0, 40, 120, 280 ms...
        let oks = await peer.collect(3)
        guard oks.count == 3, case .response(let ok)? = oks.first else {
            Issue.record("no 200")
            return
        }
        #expect(ok.statusCode == 200)
        #expect(ok.body == opusSDP(port: 5000).bytes)
        #expect(try ok.headers.contacts().first?.uri.port == agent.localAddress.port)
        #expect(ok.headers.tokens("Allow").contains("BYE"))
        let tag = try #require(try ok.headers.to().tag)
        #expect(call.state == .connecting)
        // The ACK stops them and confirms the call.
        peer.send(Self.inDialog("ACK", to: agent, from: peer, toTag: tag, cseq: 1, branch: "z9hG4bKack"), to: agent.localAddress)
        #expect(await events.wait { $0 == [.confirmed(nil)] })
        let sent = agent.statistics.retransmissionsSent
        #expect(sent >= 2)
        try await Task.sleep(for: .milliseconds(400))
        #expect(agent.statistics.retransmissionsSent == sent)
    }

    @Test func serverEndsTheCallWithoutACK() async throws {
        let timers = SIPTimers(t1: .milliseconds(10), t2: .milliseconds(40), t4: .milliseconds(50), timerD: .milliseconds(50))
        let agent = try makeAgent(timers: timers), peer = try RawPeer()
        let calls = Recorder(agent.incomingCalls)
        peer.send(Self.invite(to: agent, from: peer), to: agent.localAddress)
        let call = try #require(await calls.element(0))
        let events = Recorder(call.events)
        try call.accept(answer: opusSDP(port: 5000))
        #expect(await events.endReason(timeout: .seconds(3)) == .failed(status: 408, reason: "No ACK"))
        // ... and the session is ended with a BYE (RFC 3261 section 13.3.1.4).
        let messages = await peer.drain()
        #expect(messages.contains { if case .request(let r) = $0 { r.method == .bye } else { false } })
    }

    @Test func retransmittedInviteIsAbsorbed() async throws {
        let agent = try makeAgent(), peer = try RawPeer()
        let calls = Recorder(agent.incomingCalls)
        let text = Self.invite(to: agent, from: peer)
        peer.send(text, to: agent.localAddress)
        let call = try #require(await calls.element(0))
        #expect(await peer.receiveResponse()?.statusCode == 100)
        try call.ringing()
        #expect(await peer.receiveResponse()?.statusCode == 180)
        peer.send(text, to: agent.localAddress)  // the same INVITE again: the 180 again, no new call
        #expect(await peer.receiveResponse()?.statusCode == 180)
        try await Task.sleep(for: .milliseconds(50))
        #expect(calls.all.count == 1)
        #expect(agent.statistics.retransmissionsAbsorbed == 1)
    }

    @Test func byeWithAWrongTagGets481AndTheCallGoesOn() async throws {
        let (agent, peer, call, events, tag) = try await Self.establishedCall()
        peer.send(Self.inDialog("BYE", to: agent, from: peer, toTag: "wrong", branch: "z9hG4bKbye1"), to: agent.localAddress)
        #expect(await peer.receiveResponse()?.statusCode == 481)
        peer.send(Self.inDialog("BYE", to: agent, from: peer, toTag: tag, fromTag: "other", branch: "z9hG4bKbye2"),
                  to: agent.localAddress)
        #expect(await peer.receiveResponse()?.statusCode == 481)
        #expect(call.state == .established)
        #expect(events.all == [.confirmed(nil)])
        #expect(agent.statistics.unknownDialogRequests == 2)
        // The right BYE ends it.
        peer.send(Self.inDialog("BYE", to: agent, from: peer, toTag: tag, branch: "z9hG4bKbye3"), to: agent.localAddress)
        #expect(await peer.receiveResponse()?.statusCode == 200)
        #expect(await events.endReason() == .hungUp(byRemote: true))
    }

    @Test func requestsFromUnknownDialogsNeverReachACall() async throws {
        let (agent, peer, call, events, tag) = try await Self.establishedCall()
        let stranger = try RawPeer()
        for (i, method) in ["BYE", "INVITE", "OPTIONS", "ACK"].enumerated() {
            stranger.send(Self.inDialog(method, to: agent, from: stranger, callID: "someone-else", toTag: tag,
                                        branch: "z9hG4bKu\(i)", body: method == "INVITE" ? opusSDP(port: 7000).text : ""),
                          to: agent.localAddress)
        }
        stranger.send(Self.inDialog("CANCEL", to: agent, from: stranger, callID: "raw-call", toTag: tag, cseq: 1,
                                    branch: "z9hG4bKnope"), to: agent.localAddress)
        var statuses: [String: Int] = [:]  // by method: the 481 to the INVITE is retransmitted until an ACK
        let deadline = ContinuousClock.now + .seconds(3)
        while statuses.count < 4, ContinuousClock.now < deadline,
              let response = await stranger.receiveResponse(timeout: deadline - ContinuousClock.now) {
            statuses[try response.headers.cseq().method.rawValue] = response.statusCode
        }
        try await Task.sleep(for: .milliseconds(100))  // time for the ACK to be (not) delivered
        #expect(statuses == ["BYE": 481, "INVITE": 481, "OPTIONS": 481, "CANCEL": 481])  // the ACK is dropped
        #expect(agent.statistics.unknownDialogRequests == 5)
        #expect(call.state == .established)
        #expect(events.all == [.confirmed(nil)])
        _ = peer
    }

    @Test func cancelFromThePeer() async throws {
        let agent = try makeAgent(), peer = try RawPeer()
        let calls = Recorder(agent.incomingCalls)
        peer.send(Self.invite(to: agent, from: peer), to: agent.localAddress)
        let call = try #require(await calls.element(0))
        let events = Recorder(call.events)
        #expect(await peer.receiveResponse()?.statusCode == 100)
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
        for _ in 0..<2 {
            let r = try #require(await peer.receiveResponse())
            statuses[try r.headers.cseq().method.rawValue] = r.statusCode
        }
        #expect(statuses == ["CANCEL": 200, "INVITE": 487])
        #expect(await events.endReason() == .cancelled(byRemote: true))
        // The 487 is retransmitted until the ACK (Timer G), which the transaction absorbs.
        #expect(await peer.receiveResponse()?.statusCode == 487)
        peer.send(Self.inDialog("ACK", to: agent, from: peer, toTag: "any", cseq: 1, branch: "z9hG4bKraw1"), to: agent.localAddress)
        try await Task.sleep(for: .milliseconds(50))
        let sent = agent.statistics.retransmissionsSent
        try await Task.sleep(for: .milliseconds(400))
        #expect(agent.statistics.retransmissionsSent == sent)
    }
}
