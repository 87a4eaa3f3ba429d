import Platform
import AudioAnalysis
import Foundation
import SIP
import SIPEmbedded
import Synchronization
import Testing
import TestSupport

// What the agent does not support, and input it must survive (on an embedded network).
extension ProtocolTests {
    @Test func methodsAndExtensionsWeDoNotSupport() async throws {
        let (_, agent, peer) = try EmbeddedSIPNetwork.agentAndPeer()
        func ask(_ method: String, extra: [String] = [], branch: String) -> SIPResponse? {
            peer.send(sipText([
                "\(method) sip:bob@127.0.0.1 SIP/2.0", "Via: SIP/2.0/UDP 127.0.0.1:\(peer.port);branch=\(branch)",
                "From: <sip:raw@127.0.0.1>;tag=1", "To: <sip:bob@127.0.0.1>", "Call-ID: m-\(branch)", "CSeq: 1 \(method)",
                "Max-Forwards: 70",
            ] + extra), to: agent.localAddress)
            return peer.receiveResponse()
        }
        let register = ask("REGISTER", branch: "z9hG4bKm1")
        #expect(register?.statusCode == 405)
        #expect(register?.headers.tokens("Allow") == ["INVITE", "ACK", "CANCEL", "BYE", "OPTIONS", "REFER", "NOTIFY", "UPDATE"])
        #expect(ask("FROBNICATE", branch: "z9hG4bKm2")?.statusCode == 501)
        let required = ask("OPTIONS", extra: ["Require: 100rel"], branch: "z9hG4bKm3")
        #expect(required?.statusCode == 420)
        #expect(required?.headers["Unsupported"] == "100rel")
        #expect(ask("BYE", branch: "z9hG4bKm4")?.statusCode == 481)  // BYE outside a dialog
        #expect(ask("REFER", extra: ["Refer-To: <sip:c@127.0.0.1>"], branch: "z9hG4bKm6")?.statusCode == 481)
        #expect(ask("NOTIFY", extra: ["Event: refer"], branch: "z9hG4bKm7")?.statusCode == 481)
        #expect(ask("OPTIONS", branch: "z9hG4bKm5")?.statusCode == 200)
    }

    @Test func unsupportedBodyIs415() async throws {
        let (_, agent, peer) = try EmbeddedSIPNetwork.agentAndPeer()
        let text = Self.invite(to: agent, from: peer).replacingOccurrences(of: "application/sdp", with: "text/plain")
        peer.send(text, to: agent.localAddress)
        let response = peer.receiveResponse()
        #expect(response?.statusCode == 415)
        #expect(response?.headers["Accept"] == "application/sdp")
    }

    @Test func malformedRequestsGet400OrAreDropped() async throws {
        let (_, agent, peer) = try EmbeddedSIPNetwork.agentAndPeer()
        let port = peer.port
        // Parseable enough: 400, with the Via, tags and CSeq the client matches it with.
        peer.send(sipText([
            "INVITE sip:bob@127.0.0.1 SIP/2.0", "Via: SIP/2.0/UDP 127.0.0.1:\(port);branch=z9hG4bKbad;rport",
            "From: <sip:raw@127.0.0.1>;tag=1", "To: <sip:bob@127.0.0.1>", "Call-ID: bad", "CSeq: 1 BYE",
        ]), to: agent.localAddress)
        let bad = try #require(peer.receiveResponse())
        #expect(bad.statusCode == 400)
        #expect(try bad.headers.topVia().branch == "z9hG4bKbad")
        #expect(try bad.headers.topVia().rport == port)
        #expect(bad.headers["CSeq"] == "1 BYE")
        #expect(try bad.headers.to().tag != nil)
        // A tel: Request-URI: 416.
        peer.send(sipText([
            "INVITE tel:+15551234 SIP/2.0", "Via: SIP/2.0/UDP 127.0.0.1:\(port);branch=z9hG4bKtel",
            "From: <sip:raw@127.0.0.1>;tag=1", "To: <sip:+15551234@127.0.0.1;user=phone>", "Call-ID: tel", "CSeq: 1 INVITE",
        ]), to: agent.localAddress)
        #expect(peer.receiveResponse()?.statusCode == 416)
        // Not parseable enough: dropped and counted.
        peer.send("garbage\r\n\r\n", to: agent.localAddress)
        peer.send(sipText(["INVITE sip:bob@127.0.0.1 SIP/2.0", "Via: SIP/2.0/UDP 127.0.0.1:\(port);branch=z9hG4bKx"]),
                  to: agent.localAddress)
        peer.send("\r\n\r\n", to: agent.localAddress)  // a keep-alive: neither
        #expect(peer.receiveResponse(within: .seconds(40)) == nil)
        let statistics = agent.statistics
        #expect(statistics.badRequestsAnswered == 2)
        #expect(statistics.malformedDropped == 2)
    }

    @Test func aStreamOfMutatedDatagramsLeavesTheAgentWorking() async throws {
        // No rate limit: every datagram should be read (the limit has its own tests).
        let network = EmbeddedSIPNetwork()
        let agent = try network.agent(limits: .unlimitedRate), peer = try network.makePeer()
        let calls = Recorder(agent.incomingCalls)
        var rng = SeededRandom(seed: 42)
        let corpus = fuzzCorpus + [Array(Self.invite(to: agent, from: peer).utf8)]
        let count = 2000
        for i in 0..<count {
            peer.send(mutate(corpus[i % corpus.count], using: &rng), to: agent.localAddress)
            if i % 50 == 49 {
                network.advance(by: .seconds(1))
                _ = peer.drain()
            }
        }
        let checker = try network.agent()
        #expect(try await checker.options(to: agent.uri()).statusCode == 200)
        let statistics = agent.statistics
        #expect(statistics.datagramsReceived == count + 1)  // and the checker's OPTIONS
        #expect(statistics.malformedDropped + statistics.badRequestsAnswered + statistics.messagesReceived > count * 9 / 10)
        for call in calls.all { call.hangUp() }
    }
}
