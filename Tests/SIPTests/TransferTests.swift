import Platform
import SIP
import SIPEmbedded
import Testing
import TestSupport

/// Transfers (RFC 3515 REFER and its NOTIFYs, RFC 3891 Replaces) against a peer that writes SIP
/// by hand on an embedded network, in each role, and what a hostile peer's REFERs and NOTIFYs cannot do.
@Suite("Transfers: REFER, NOTIFY and Replaces")
struct TransferTests {
    /// A REFER from the raw peer in the established call.
    static func refer(_ agent: SIPUserAgent, _ peer: some HandWrittenPeer, tag: String, cseq: Int = 2, branch: String = "z9hG4bKrefer",
                      referTo: [String]) -> String {
        ProtocolTests.inDialog("REFER", to: agent, from: peer, toTag: tag, cseq: cseq, branch: branch,
                               extra: referTo.map { "Refer-To: \($0)" } + ["Referred-By: <sip:raw@127.0.0.1>"])
    }

    /// A NOTIFY from the raw peer on our REFER, with a sipfrag body.
    static func notify(_ agent: SIPUserAgent, _ peer: some HandWrittenPeer, tag: String, cseq: Int, event: String = "refer",
                       state: String, fragment: String) -> String {
        sipText([
            "NOTIFY sip:bob@127.0.0.1:\(agent.localAddress.port) SIP/2.0",
            "Via: SIP/2.0/UDP 127.0.0.1:\(peer.port);branch=z9hG4bKnotify\(cseq)",
            "Max-Forwards: 70",
            "From: <sip:raw@127.0.0.1:\(peer.port)>;tag=rawtag",
            "To: <sip:bob@127.0.0.1:\(agent.localAddress.port)>;tag=\(tag)",
            "Call-ID: raw-call",
            "CSeq: \(cseq) NOTIFY",
            "Event: \(event)",
            "Subscription-State: \(state)",
            "Content-Type: message/sipfrag;version=2.0",
        ], body: fragment)
    }

    @Test func aReferIsAcceptedAndReportedOnWithNotifys() async throws {
        let c = try await ProtocolTests.establishedCall()
        let (agent, peer, call, events, tag) = (c.agent, c.peer, c.call, c.events, c.tag)
        let replaces = "abc%40host%3Bto-tag%3Dt1%3Bfrom-tag%3Df1"
        peer.send(Self.refer(agent, peer, tag: tag, referTo: ["<sip:carol@127.0.0.1:5999?Replaces=\(replaces)>"]),
                  to: agent.localAddress)
        #expect(peer.receiveResponse(to: .refer)?.statusCode == 202)
        // The first NOTIFY says the call is being tried, in the same dialog.
        let trying = try #require(peer.next(.notify))
        #expect(trying.headers["Event"] == "refer")
        #expect(trying.headers["Subscription-State"]?.hasPrefix("active") == true)
        #expect(String(decoding: trying.body, as: UTF8.self) == "SIP/2.0 100 Trying\r\n")
        #expect(try trying.headers.to().tag == "rawtag")
        peer.send(ReinviteTests.response(200, to: trying), to: agent.localAddress)
        #expect(await events.wait { $0.count == 2 })
        let expected = SIPReferral(target: SIPURI(user: "carol", host: "127.0.0.1", port: 5999),
                                   replaces: SIPReplaces(callID: "abc@host", toTag: "t1", fromTag: "f1"),
                                   referredBy: "<sip:raw@127.0.0.1>")
        #expect(events.all.last == .referred(expected))

        try call.notifyReferral(status: 200, reason: "OK")
        // (Skipping retransmissions of the first, which a loaded machine may send before our 200 lands.)
        let done = try #require(peer.next(.notify, cseq: try trying.headers.cseq().sequence + 1))
        #expect(done.headers["Subscription-State"]?.hasPrefix("terminated") == true)
        #expect(String(decoding: done.body, as: UTF8.self) == "SIP/2.0 200 OK\r\n")
        peer.send(ReinviteTests.response(200, to: done), to: agent.localAddress)
        // The referral is over: nothing more to report.
        #expect(throws: SIPError.self) { try call.notifyReferral(status: 200, reason: "OK") }
        #expect(call.state == .established)
        agent.close()
    }

    @Test("REFERs that are malformed, outside a dialog or too many are refused and change nothing", arguments: [
        [String](), ["<sip:a@127.0.0.1>", "<sip:b@127.0.0.1>"], ["<tel:+15551234>"], ["<sip:c@127.0.0.1?Replaces=nonsense>"],
        ["<sip:c@127.0.0.1?Replaces=%ZZ>"],
    ])
    func badRefersAreRefused(referTo: [String]) async throws {
        let c = try await ProtocolTests.establishedCall()
        let (agent, peer, call, events, tag) = (c.agent, c.peer, c.call, c.events, c.tag)
        peer.send(Self.refer(agent, peer, tag: tag, referTo: referTo), to: agent.localAddress)
        #expect(peer.receiveResponse(to: .refer)?.statusCode == 400)
        #expect(await events.settled(call) == [.confirmed(nil)])
        #expect(call.state == .established)
        #expect(agent.statistics.malformedDropped >= 1)
        agent.close()
    }

    @Test func aSecondReferWhileOneIsReportedOnGets491AndOneOutsideADialog481() async throws {
        let c = try await ProtocolTests.establishedCall()
        let (agent, peer, call, events, tag) = (c.agent, c.peer, c.call, c.events, c.tag)
        peer.send(Self.refer(agent, peer, tag: tag, referTo: ["<sip:carol@127.0.0.1:5999>"]), to: agent.localAddress)
        #expect(peer.receiveResponse(to: .refer)?.statusCode == 202)
        peer.send(Self.refer(agent, peer, tag: tag, cseq: 3, branch: "z9hG4bKrefer2", referTo: ["<sip:dave@127.0.0.1:5998>"]),
                  to: agent.localAddress)
        #expect(peer.receiveResponse(to: .refer, cseq: 3)?.statusCode == 491)
        peer.send(Self.refer(agent, peer, tag: "nosuchtag", cseq: 4, branch: "z9hG4bKrefer3", referTo: ["<sip:eve@127.0.0.1:5997>"]),
                  to: agent.localAddress)
        #expect(peer.receiveResponse(to: .refer, cseq: 4)?.statusCode == 481)
        #expect(await events.settled(call).count == 2)  // confirmed, and the one referral
        agent.close()
    }

    @Test func ourReferGoesOutAndItsNotifysReportProgress() async throws {
        let c = try await ProtocolTests.establishedCall()
        let (agent, peer, call, events, tag) = (c.agent, c.peer, c.call, c.events, c.tag)
        try call.refer(to: SIPURI(user: "carol", host: "127.0.0.1", port: 5999))
        #expect(throws: SIPError.tooManyRequests) { try call.refer(to: SIPURI(user: "dave", host: "127.0.0.1")) }
        let refer = try #require(peer.next(.refer))
        #expect(refer.headers["Refer-To"] == "<sip:carol@127.0.0.1:5999>")
        #expect(refer.headers["Referred-By"]?.contains("sip:") == true)
        #expect(try refer.headers.from().tag == tag)
        peer.send(ReinviteTests.response(202, to: refer), to: agent.localAddress)

        // A NOTIFY for another event package, or that is not a status line: refused, no event.
        peer.send(Self.notify(agent, peer, tag: tag, cseq: 2, event: "dialog", state: "active", fragment: "SIP/2.0 100 Trying\r\n"),
                  to: agent.localAddress)
        #expect(peer.receiveResponse(to: .notify, cseq: 2)?.statusCode == 489)
        peer.send(Self.notify(agent, peer, tag: tag, cseq: 3, state: "active", fragment: "HTTP/1.1 200 OK\r\n"), to: agent.localAddress)
        #expect(peer.receiveResponse(to: .notify, cseq: 3)?.statusCode == 400)

        peer.send(Self.notify(agent, peer, tag: tag, cseq: 4, state: "active;expires=60", fragment: "SIP/2.0 180 Ringing\r\n"),
                  to: agent.localAddress)
        #expect(peer.receiveResponse(to: .notify, cseq: 4)?.statusCode == 200)
        peer.send(Self.notify(agent, peer, tag: tag, cseq: 5, state: "terminated;reason=noresource", fragment: "SIP/2.0 200 OK\r\n"),
                  to: agent.localAddress)
        #expect(peer.receiveResponse(to: .notify, cseq: 5)?.statusCode == 200)
        #expect(await events.wait { $0.count == 3 })
        #expect(Array(events.all.dropFirst()) == [.referProgress(status: 180, reason: "Ringing", final: false),
                                                  .referProgress(status: 200, reason: "OK", final: true)])
        // The subscription is over: a late NOTIFY matches nothing.
        peer.send(Self.notify(agent, peer, tag: tag, cseq: 6, state: "active", fragment: "SIP/2.0 180 Ringing\r\n"), to: agent.localAddress)
        #expect(peer.receiveResponse(to: .notify, cseq: 6)?.statusCode == 481)
        // And another REFER may go.
        try call.refer(to: SIPURI(user: "dave", host: "127.0.0.1", port: 5998))
        #expect(peer.next(.refer) != nil)
        agent.close()
    }

    @Test func aReferTheTransfereeRefusesIsReported() async throws {
        let c = try await ProtocolTests.establishedCall()
        let (agent, peer, call, events) = (c.agent, c.peer, c.call, c.events)
        let replaces = SIPReplaces(callID: "xyz@host", toTag: "t2", fromTag: "f2")
        try call.refer(to: SIPURI(user: "carol", host: "127.0.0.1", port: 5999), replacing: replaces)
        let refer = try #require(peer.next(.refer))
        #expect(refer.headers["Refer-To"] == "<sip:carol@127.0.0.1:5999?Replaces=xyz%40host%3Bto-tag%3Dt2%3Bfrom-tag%3Df2>")
        peer.send(ReinviteTests.response(603, to: refer), to: agent.localAddress)
        #expect(await events.wait { $0.count == 2 })
        #expect(events.all.last == .referDeclined(status: 603, reason: "Decline"))
        #expect(call.state == .established)
        agent.close()
    }

    @Test func anInviteThatReplacesOurCallNamesItAndOneThatNamesNoneGets481() async throws {
        let (network, agent, peer) = try EmbeddedSIPNetwork.agentAndPeer()
        let other = try network.makePeer()
        let calls = Recorder(agent.incomingCalls)
        peer.send(ProtocolTests.invite(to: agent, from: peer), to: agent.localAddress)
        let call = try #require(await calls.element(0))
        try call.accept(answer: opusSDP(port: 5000))
        let tag = try #require(try peer.receiveResponse { $0.statusCode == 200 }?.headers.to().tag)
        peer.send(ProtocolTests.inDialog("ACK", to: agent, from: peer, toTag: tag, cseq: 1, branch: "z9hG4bKack"), to: agent.localAddress)
        #expect(call.state == .established)
        let ours = try #require(call.replaces)
        #expect(ours == SIPReplaces(callID: "raw-call", toTag: "rawtag", fromTag: tag))
        // The target's view: its local tag (ours here) is the to-tag.
        let matching = SIPReplaces(callID: "raw-call", toTag: tag, fromTag: "rawtag")
        let wrong = SIPReplaces(callID: "raw-call", toTag: "rawtag", fromTag: tag)
        for (replaces, branch) in [(wrong, "z9hG4bKrep1"), (matching, "z9hG4bKrep2")] {
            other.send(ProtocolTests.invite(to: agent, from: other, callID: "new-\(branch)", branch: branch,
                                            extra: ["Replaces: \(replaces)"]), to: agent.localAddress)
        }
        #expect(other.receiveResponse(to: .invite)?.statusCode == 481)
        let replacing = try #require(await calls.element(1))
        #expect(replacing.replacedCallID == "raw-call")
        agent.close()
    }

    @Test func replacesValuesParseAndEscape() throws {
        let value = try #require(SIPReplaces(parsing: "abc@host ; to-tag=t1;from-tag=f1;early-only"))
        #expect(value == SIPReplaces(callID: "abc@host", toTag: "t1", fromTag: "f1", earlyOnly: true))
        #expect(value.description == "abc@host;to-tag=t1;from-tag=f1;early-only")
        for bad in ["", "abc", "abc;to-tag=t1", "abc;from-tag=f1", "a b;to-tag=t;from-tag=f", "abc;to-tag=t 1;from-tag=f"] {
            #expect(SIPReplaces(parsing: bad) == nil, "\(bad)")
        }
    }
}
