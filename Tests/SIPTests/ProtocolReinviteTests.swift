import Platform
import AudioAnalysis
import Foundation
import SIP
import SIPEmbedded
import Synchronization
import Testing
import TestSupport

// Re-INVITEs from the raw peer: same offer, changed offer, no offer.
extension ProtocolTests {
    @Test func reInviteWithTheSameOfferIsAcceptedAndAChangeIsDeclined() async throws {
        let c = try await Self.establishedCall()
        let (agent, peer, call, events, tag) = (c.agent, c.peer, c.call, c.events, c.tag)
        // A session refresh: the same offer gets the same answer.
        peer.send(Self.inDialog("INVITE", to: agent, from: peer, toTag: tag, branch: "z9hG4bKre1",
                                extra: ["Contact: <sip:raw@127.0.0.1:\(peer.port)>"], body: opusSDP(port: 6000).text),
                  to: agent.localAddress)
        let refreshed = try #require(peer.receiveResponse(to: .invite, cseq: 2))
        #expect(refreshed.statusCode == 200)
        #expect(refreshed.body == opusSDP(port: 5000).bytes)
        peer.send(Self.inDialog("ACK", to: agent, from: peer, toTag: tag, branch: "z9hG4bKreack"), to: agent.localAddress)
        // A changed offer (hold, another port): 488, the session stays as it was.
        peer.send(Self.inDialog("INVITE", to: agent, from: peer, toTag: tag, cseq: 3, branch: "z9hG4bKre2",
                                body: opusSDP(port: 6002).text), to: agent.localAddress)
        #expect(peer.receiveResponse(to: .invite, cseq: 3)?.statusCode == 488)
        // An old CSeq: 500.
        peer.send(Self.inDialog("OPTIONS", to: agent, from: peer, toTag: tag, cseq: 3, branch: "z9hG4bKold"), to: agent.localAddress)
        #expect(peer.receiveResponse(to: .options)?.statusCode == 500)
        #expect(call.state == .established)
        #expect(await events.settled(call) == [.confirmed(nil)])
    }

    /// A re-INVITE we decline changes nothing: its new Contact (a third party's address) does not
    /// become where our BYE goes.
    @Test func aDeclinedReinviteDoesNotMoveTheRemoteTarget() async throws {
        let c = try await Self.establishedCall()
        let network = c.network
        let (agent, peer, call, tag) = (c.agent, c.peer, c.call, c.tag)
        let third = try network.makePeer()
        peer.send(Self.inDialog("INVITE", to: agent, from: peer, toTag: tag, branch: "z9hG4bKmove",
                                extra: ["Contact: <sip:raw@127.0.0.1:\(third.port)>"], body: opusSDP(port: 6004).text),
                  to: agent.localAddress)
        #expect(peer.receiveResponse(to: .invite, cseq: 2)?.statusCode == 488)
        try call.bye()
        let bye = peer.next(.bye)
        #expect(bye?.uri.port == peer.port)
        network.advance(by: .seconds(40))
        #expect(third.pending == 0)
    }

    @Test func aChangedOfferGoesToTheAnswererWhichMayAcceptOrDecline() async throws {
        // The answerer sees the call, the new offer, the peer's last description and ours; it
        // accepts only offers for port 6000 and answers with a marked copy of our description.
        let seen = Mutex<[(String, String?, String)]>([])
        let callIDs = Mutex<Set<String>>([])
        let c = try await Self.establishedCall { callID, offer, peerPrevious, ours in
            callIDs.withLock { _ = $0.insert(callID) }
            seen.withLock { $0.append((offer.text, peerPrevious?.text, ours.text)) }
            return offer.text.contains("m=audio 6000") ? .sdp(ours.text.replacingOccurrences(of: "a=sendrecv", with: "a=recvonly")) : nil
        }
        let (agent, peer, call, events, tag) = (c.agent, c.peer, c.call, c.events, c.tag)
        let hold = opusSDP(port: 6000, session: "1").text.replacingOccurrences(of: "a=sendrecv", with: "a=sendonly")
        peer.send(Self.inDialog("INVITE", to: agent, from: peer, toTag: tag, branch: "z9hG4bKhold", body: hold), to: agent.localAddress)
        let held = try #require(peer.receiveResponse(to: .invite, cseq: 2))
        #expect(held.statusCode == 200)
        #expect(String(decoding: held.body, as: UTF8.self).contains("a=recvonly"))
        peer.send(Self.inDialog("ACK", to: agent, from: peer, toTag: tag, branch: "z9hG4bKholdack"), to: agent.localAddress)
        #expect(await events.wait { $0.count == 2 })
        #expect(events.all == [.confirmed(nil), .reoffered(.sdp(hold))])
        let first = try #require(seen.withLock { $0.first })
        #expect(first.0 == hold)
        #expect(first.1 == opusSDP(port: 6000).text)  // the peer's INVITE
        #expect(first.2 == opusSDP(port: 5000).text)  // our answer to it
        // The same offer again is a refresh: our last answer, no second call to the answerer.
        peer.send(Self.inDialog("INVITE", to: agent, from: peer, toTag: tag, cseq: 3, branch: "z9hG4bKhold2", body: hold),
                  to: agent.localAddress)
        #expect(peer.receiveResponse(to: .invite, cseq: 3).map { String(decoding: $0.body, as: UTF8.self) }?.contains("a=recvonly") == true)
        peer.send(Self.inDialog("ACK", to: agent, from: peer, toTag: tag, cseq: 3, branch: "z9hG4bKhold2ack"), to: agent.localAddress)
        // Declined by the answerer: 488, and the session stays as it was.
        peer.send(Self.inDialog("INVITE", to: agent, from: peer, toTag: tag, cseq: 4, branch: "z9hG4bKmove",
                                body: opusSDP(port: 6002).text), to: agent.localAddress)
        #expect(peer.receiveResponse(to: .invite, cseq: 4)?.statusCode == 488)
        #expect(seen.withLock { $0.count } == 2)
        #expect(await events.settled(call).count == 2 && call.state == .established)
        #expect(callIDs.withLock { $0 } == [call.callID])
    }

    @Test func aReInviteWithoutAnOfferGetsOursAndTheAnswerInTheACKIsPassedOn() async throws {
        let c = try await Self.establishedCall()
        let (agent, peer, call, events, tag) = (c.agent, c.peer, c.call, c.events, c.tag)
        peer.send(Self.inDialog("INVITE", to: agent, from: peer, toTag: tag, branch: "z9hG4bKnooffer"), to: agent.localAddress)
        let ok = try #require(peer.receiveResponse(to: .invite, cseq: 2))
        #expect(ok.statusCode == 200 && ok.body == opusSDP(port: 5000).bytes)  // our last description, as the offer
        let answer = opusSDP(port: 6000).text.replacingOccurrences(of: "a=sendrecv", with: "a=sendonly")
        peer.send(Self.inDialog("ACK", to: agent, from: peer, toTag: tag, branch: "z9hG4bKnoofferack", body: answer), to: agent.localAddress)
        #expect(await events.wait { $0.count == 2 })
        #expect(events.all == [.confirmed(nil), .reoffered(.sdp(answer))])
        // The same answer again changes nothing: no event.
        peer.send(Self.inDialog("INVITE", to: agent, from: peer, toTag: tag, cseq: 3, branch: "z9hG4bKnooffer2"), to: agent.localAddress)
        #expect(peer.receiveResponse(to: .invite, cseq: 3)?.statusCode == 200)
        peer.send(Self.inDialog("ACK", to: agent, from: peer, toTag: tag, cseq: 3, branch: "z9hG4bKnooffer2ack", body: answer),
                  to: agent.localAddress)
        #expect(await events.settled(call).count == 2 && call.state == .established)
    }
}
