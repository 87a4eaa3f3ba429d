import Foundation
import Platform
import SIP
import SIPEmbedded
import Testing
import TestSupport

/// Our re-INVITEs (RFC 3261 section 14.1) against a peer that writes SIP by hand: the ACK of
/// each 2xx, one INVITE transaction at a time, 491 and its retry, refusals that keep the session
/// and those that end the call; on an embedded network with RFC 3261's timers.
@Suite("Re-INVITEs we send")
struct ReinviteTests {
    static let hold = SIPBody.sdp(opusSDP(port: 5000).text.replacingOccurrences(of: "a=sendrecv", with: "a=inactive"))
    static let heldAnswer = SIPBody.sdp(opusSDP(port: 6000).text.replacingOccurrences(of: "a=sendrecv", with: "a=inactive"))

    /// The peer's response to one of our requests: its Via, From, To (already with the peer's
    /// tag inside the dialog), Call-ID and CSeq, and a body if given.
    static func response(_ status: Int, to request: SIPRequest, body: SIPBody? = nil) -> [UInt8] {
        var headers = SIPHeaders()
        for field in request.headers where ["Via", "From", "To", "Call-ID", "CSeq"].contains(field.name) { headers.add(field) }
        if let body { headers.add("Content-Type", body.contentType) }
        return SIPResponse(statusCode: status, headers: headers, body: body?.bytes ?? []).serialized()
    }

    @Test func aReinviteIsAcknowledgedAndSoIsEachRetransmissionOfIts2xx() async throws {
        let c = try await ProtocolTests.establishedCall()
        let (agent, peer, call, events, tag) = (c.agent, c.peer, c.call, c.events, c.tag)
        try call.reinvite(offer: Self.hold)
        let invite = try #require(peer.next(.invite))
        // The callee's first request in the dialog: CSeq 1, its tag in From, the caller's in To,
        // to the caller's Contact.
        #expect(try invite.headers.cseq().sequence == 1)
        #expect(try invite.headers.from().tag == tag)
        #expect(try invite.headers.to().tag == "rawtag")
        #expect(invite.uri.port == peer.port)
        #expect(invite.body == Self.hold.bytes)
        #expect(try invite.headers.contacts().first?.uri.port == agent.localAddress.port)

        peer.send(Self.response(200, to: invite, body: Self.heldAnswer), to: agent.localAddress)
        let ack = try #require(peer.next(.ack))
        #expect(try ack.headers.cseq().sequence == 1)
        #expect(try ack.headers.topVia().branch != invite.headers.topVia().branch)  // the core's ACK, not the transaction's
        #expect(await events.wait { $0.count == 2 })
        #expect(events.all == [.confirmed(nil), .reinviteAnswered(Self.heldAnswer)])
        #expect(call.localDescription == Self.hold)

        // The 200 again (our ACK was lost): the same ACK again, and no second event.
        peer.send(Self.response(200, to: invite, body: Self.heldAnswer), to: agent.localAddress)
        let again = try #require(peer.next(.ack))
        #expect(again.serialized() == ack.serialized())
        #expect(await events.settled(call).count == 2 && call.state == .established)
    }

    @Test func reinvitesThatCrossGet491AndOursIsSentAgainAfterTheWait() async throws {
        let c = try await ProtocolTests.establishedCall()
        let network = c.network
        let (agent, peer, call, events, tag) = (c.agent, c.peer, c.call, c.events, c.tag)
        try call.reinvite(offer: Self.hold)
        let first = try #require(peer.next(.invite))
        // The peer re-INVITEs before answering ours: 491 Request Pending.
        peer.send(ProtocolTests.inDialog("INVITE", to: agent, from: peer, toTag: tag, branch: "z9hG4bKcross",
                                         body: opusSDP(port: 6000).text), to: agent.localAddress)
        #expect(peer.receiveResponse(to: .invite, cseq: 2)?.statusCode == 491)
        // The peer gives ours a 491 too: the transaction ACKs it, and after a random wait
        // (0 to 4 T1 for the callee) the offer goes out again with the next CSeq.
        peer.send(Self.response(491, to: first), to: agent.localAddress)
        let sent = network.elapsed
        let second = try #require(peer.next(.invite, cseq: 2, within: .seconds(3)))
        #expect(network.elapsed - sent <= .seconds(2))
        #expect(second.body == Self.hold.bytes)
        peer.send(Self.response(200, to: second, body: Self.heldAnswer), to: agent.localAddress)
        #expect(peer.next(.ack) != nil)
        #expect(await events.wait { $0.count == 2 })
        #expect(events.all == [.confirmed(nil), .reinviteAnswered(Self.heldAnswer)])
    }

    @Test func anOfferWaitsUntilThePeersReinviteIsAcknowledged() async throws {
        let c = try await ProtocolTests.establishedCall()
        let network = c.network
        let (agent, peer, call, tag) = (c.agent, c.peer, c.call, c.tag)
        // The peer refreshes the session (the same offer): our 200 waits for its ACK.
        peer.send(ProtocolTests.inDialog("INVITE", to: agent, from: peer, toTag: tag, branch: "z9hG4bKrefresh",
                                         body: opusSDP(port: 6000).text), to: agent.localAddress)
        #expect(peer.receiveResponse(to: .invite, cseq: 2)?.statusCode == 200)
        try call.reinvite(offer: Self.hold)
        // Nothing goes out while that INVITE transaction is open (only the 200's retransmissions).
        network.advance(by: .seconds(2))
        let meanwhile = peer.drain()
        #expect(!meanwhile.contains { if case .request(let r) = $0 { r.method == .invite } else { false } })
        peer.send(ProtocolTests.inDialog("ACK", to: agent, from: peer, toTag: tag, branch: "z9hG4bKrefreshack"),
                  to: agent.localAddress)
        let invite = try #require(peer.next(.invite))
        #expect(invite.body == Self.hold.bytes)
    }

    @Test func anOfferOnAnAnsweredCallWaitsForItsACK() async throws {
        let (network, agent, peer) = try EmbeddedSIPNetwork.agentAndPeer()
        let calls = Recorder(agent.incomingCalls)
        peer.send(ProtocolTests.invite(to: agent, from: peer), to: agent.localAddress)
        let call = try #require(await calls.element(0))
        try call.accept(answer: opusSDP(port: 5000))
        let ok = try #require(peer.receiveResponse { $0.statusCode == 200 })
        #expect(call.state == .connecting)
        try call.reinvite(offer: Self.hold)
        network.advance(by: .seconds(2))
        let meanwhile = peer.drain()
        #expect(!meanwhile.contains { if case .request(let r) = $0 { r.method == .invite } else { false } })
        let tag = try #require(try ok.headers.to().tag)
        peer.send(ProtocolTests.inDialog("ACK", to: agent, from: peer, toTag: tag, cseq: 1, branch: "z9hG4bKack"), to: agent.localAddress)
        let invite = try #require(peer.next(.invite))
        #expect(invite.body == Self.hold.bytes)
    }

    @Test func aRefusalKeepsTheSessionAndA481EndsTheCall() async throws {
        let c = try await ProtocolTests.establishedCall()
        let (agent, peer, call, events) = (c.agent, c.peer, c.call, c.events)
        try call.reinvite(offer: Self.hold)
        let first = try #require(peer.next(.invite))
        peer.send(Self.response(488, to: first), to: agent.localAddress)
        #expect(await events.wait { $0.count == 2 })
        #expect(events.all.last == .reinviteDeclined(status: 488, reason: "Not Acceptable Here"))
        #expect(call.state == .established)
        #expect(call.localDescription == opusSDP(port: 5000))  // still our answer: the offer was refused

        try call.reinvite(offer: Self.hold)
        let second = try #require(peer.next(.invite, cseq: 2))
        peer.send(Self.response(481, to: second), to: agent.localAddress)
        #expect(await events.endReason() == .failed(status: 481, reason: "Call/Transaction Does Not Exist"))
    }

    @Test func onlyAnEstablishedCallCanReinvite() async throws {
        let callee = try ProtocolTests.Callee()
        #expect(throws: SIPError.invalidState(.calling)) { try callee.call.reinvite(offer: Self.hold) }
        callee.call.hangUp()
    }
}
