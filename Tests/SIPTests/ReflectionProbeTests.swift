import Platform
@testable import SIP
import SIPEmbedded
import Testing
import TestSupport

/// The reflection probes measured against the agent, at their sizes: nothing reaches an address
/// that did not send the trigger, and a sender gets back at most 3 times what it sent. On an
/// embedded network, where the attacker can spoof its source and every byte the agent sends is
/// counted by destination, with every timer run out (64 × T1 and more).
@Suite("SIP reflection probes")
struct ReflectionProbeTests {
    /// Everything a peer received once every timer has run out.
    static func drain(_ peer: EmbeddedSIPPeer, _ network: EmbeddedSIPNetwork) -> [[UInt8]] {
        network.advance(by: .seconds(120))
        var received: [[UInt8]] = []
        while let (bytes, _) = peer.receive() { received.append(bytes) }
        return received
    }

    /// A large OPTIONS from a (spoofed) victim, then small requests from another port that repeat
    /// only its Via branch and sent-by: the victim gets its one response, the repeats nothing.
    @Test func aRepeatedBranchFromElsewhereIsNotARetransmission() async throws {
        let network = EmbeddedSIPNetwork()
        let agent = try network.agent(), victim = try network.makePeer(), attacker = try network.makePeer()
        let branch = "z9hG4bKvictim1"
        let via = "Via: SIP/2.0/UDP 127.0.0.1:\(victim.port);branch=\(branch)"
        let padding = Array(repeating: "X-Pad: " + String(repeating: "p", count: 255), count: 240)
        let large = Array(HostilePeerTests.request("OPTIONS", port: victim.port, branch: branch, via: via, extra: padding).utf8)
        #expect(large.count > 62_000)
        attacker.send(large, to: agent.localAddress, from: victim.address)  // spoofed
        let first = try #require(victim.receive())
        let small = Array(sipText(["OPTIONS sip:b@127.0.0.1 SIP/2.0", via, "f: <sip:a@h>;tag=1", "t: <sip:b@h>",
                                   "i: x", "CSeq: 1 OPTIONS"]).utf8)
        for _ in 0..<40 { attacker.send(small, to: agent.localAddress) }
        #expect(agent.statistics.spoofedRetransmissions == 40)
        let toVictim = Self.drain(victim, network), toAttacker = Self.drain(attacker, network)
        print("SIP reflection probe repeated branch: victim \(first.bytes.count) + \(toVictim.map(\.count).reduce(0, +)) bytes for \(large.count); attacker \(toAttacker.map(\.count).reduce(0, +)) for \(40 * small.count)")
        #expect(first.bytes.count <= large.count + 1024)
        #expect(toVictim.isEmpty)
        #expect(toAttacker.map(\.count).reduce(0, +) <= 3 * 40 * small.count)
        #expect(network.traffic.bytes(from: agent.localAddress) == first.bytes.count + toAttacker.map(\.count).reduce(0, +))
    }

    /// A request whose display name, Call-ID and Via are raw 0xFF bytes is dropped unanswered:
    /// decoded with replacement characters, a response would be three times its size.
    @Test func bytesThatAreNotUTF8AreDropped() async throws {
        let (network, agent, peer) = try EmbeddedSIPNetwork.agentAndPeer()
        let junk = String(repeating: "j", count: 6_400)
        var text = Array(sipText(["OPTIONS sip:b@127.0.0.1 SIP/2.0", "Via: SIP/2.0/UDP 127.0.0.1:\(peer.port);branch=z9hG4bK\(junk)",
                                  "From: \"\(junk)\" <sip:a@h>;tag=1", "To: <sip:b@h>", "Call-ID: \(junk)", "CSeq: 1 OPTIONS"]).utf8)
        for i in text.indices where text[i] == UInt8(ascii: "j") { text[i] = 0xFF }
        #expect(text.count > 19_000)
        peer.send(text, to: agent.localAddress)
        let back = Self.drain(peer, network)
        print("SIP reflection probe not UTF-8: \(back.map(\.count).reduce(0, +)) bytes back for \(text.count)")
        #expect(back.isEmpty)
        #expect(agent.statistics.malformedDropped == 1)
        #expect(network.traffic.bytes(from: agent.localAddress) == 0)
        #expect(throws: SIPParseError.invalidUTF8) { try SIPMessage(parsing: text) }
    }

    /// A hostile callee answers with about 2,400 Record-Route values, the last a victim's: the
    /// call fails and nothing is sent; 2xx retransmissions from another port are dropped too.
    @Test func aCalleesHugeRouteSetIsRefused() async throws {
        let network = EmbeddedSIPNetwork()
        let agent = try network.agent(), callee = try network.makePeer(), attacker = try network.makePeer()
        let victim = try network.makePeer()
        let call = try agent.invite(to: SIPURI(user: "b", host: "127.0.0.1", port: callee.port), offer: opusSDP(port: 4000))
        let events = Recorder(call.events)
        let invite = try #require(callee.next(.invite))
        var routes = Array(repeating: "<sip:10.0.0.1;lr>", count: 2_399)
        routes.append("<sip:127.0.0.1:\(victim.port);lr>")
        // In fields of 200 values: each field stays under the parser's 8 KB.
        let fields = stride(from: 0, to: routes.count, by: 200).map { "Record-Route: " + routes[$0..<min($0 + 200, routes.count)].joined(separator: ",") }
        let ok = Self.answer(invite, tag: "t1", extra: fields)
        callee.send(ok, to: agent.localAddress)
        #expect(await events.endReason() == .failed(status: 502, reason: "Too Many Routes"))
        let small = Self.answer(invite, tag: "t1")
        for _ in 0..<40 { attacker.send(small, to: agent.localAddress) }
        #expect(agent.statistics.unacceptable2xxDropped == 41)
        let toVictim = Self.drain(victim, network), toAttacker = Self.drain(attacker, network), toCallee = Self.drain(callee, network)
        print("SIP reflection probe route set: 2xx of \(ok.utf8.count) bytes; victim \(toVictim.count) messages, attacker \(toAttacker.count), callee \(toCallee.count)")
        #expect(toVictim.isEmpty && toAttacker.isEmpty)
        #expect(toCallee.allSatisfy { $0.count < 2_000 })
        #expect(network.traffic.bytes(from: agent.localAddress, to: victim.address) == 0)
    }

    /// A callee that forks many 2xx gets an ACK and a BYE for at most `maximumForks` of them,
    /// and 2xx from any other address than the first 2xx's are dropped.
    @Test func forkedAnswersAreBounded() async throws {
        let network = EmbeddedSIPNetwork()
        let agent = try network.agent(), callee = try network.makePeer(), attacker = try network.makePeer()
        let call = try agent.invite(to: SIPURI(user: "b", host: "127.0.0.1", port: callee.port), offer: opusSDP(port: 4000))
        let events = Recorder(call.events)
        let invite = try #require(callee.next(.invite))
        callee.send(Self.answer(invite, tag: "first"), to: agent.localAddress)
        #expect(await events.wait { $0.contains { if case .answered = $0 { true } else { false } } })
        #expect(callee.next(.ack) != nil)
        for fork in 0..<11 { callee.send(Self.answer(invite, tag: "fork\(fork)"), to: agent.localAddress) }
        for _ in 0..<40 { attacker.send(Self.answer(invite, tag: "first"), to: agent.localAddress) }
        // Until the BYEs' retransmissions (Timer E) stop.
        let toCallee = Self.drain(callee, network)
        func count(_ method: String) -> Int { toCallee.filter { $0.starts(with: Array("\(method) ".utf8)) }.count }
        let toAttacker = Self.drain(attacker, network)
        let byes = count("BYE"), acks = count("ACK")
        print("SIP reflection probe forks: 11 forked 2xx -> \(acks) ACK, \(byes) BYE (with retransmissions); attacker \(toAttacker.count) messages")
        #expect(acks == 4)
        #expect(byes == 4 * 11)  // Timer E sends each unanswered BYE 11 times in 64 × T1
        #expect(toAttacker.isEmpty)
        #expect(agent.statistics.unacceptable2xxDropped == 47)
        call.hangUp()
    }

    /// A 200 to `invite` with a To tag, our peer's Contact, and `extra` header lines.
    static func answer(_ invite: SIPRequest, tag: String, extra: [String] = []) -> String {
        let headers = invite.headers
        var lines = ["SIP/2.0 200 OK"]
        for field in headers where field.name == "Via" { lines.append("Via: \(field.value)") }
        lines += ["From: \(headers["From"] ?? "")", "To: \(headers["To"] ?? "");tag=\(tag)",
                  "Call-ID: \(headers["Call-ID"] ?? "")", "CSeq: \(headers["CSeq"] ?? "")",
                  "Contact: <sip:b@127.0.0.1:\(invite.uri.port ?? 5060)>"] + extra
        return sipText(lines)
    }
}
