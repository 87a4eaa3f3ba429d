import Platform
@testable import SIP
import SIPEmbedded
import Testing
import TestSupport

/// Credentials go only to the realm they are for, at most twice per request, and a server's
/// proof (`rspauth`) is checked: a peer that is not our registrar or proxy learns no digest.
/// On an embedded network with RFC 3261's timers.
@Suite struct DigestRealmTests {
    typealias Flow = AuthenticationFlowTests

    static func agent(realm: String? = nil) throws -> (EmbeddedSIPNetwork, SIPUserAgent) {
        let network = EmbeddedSIPNetwork()
        return (network, try network.agent(user: "alice", credentials: SIPCredentials(username: "alice", password: "secret", realm: realm)))
    }

    /// Registers at `registrar`, answering its 401 for realm "home": the realm is learned.
    static func register(_ agent: SIPUserAgent, at registrar: EmbeddedSIPPeer) async throws {
        async let granted = agent.register(at: SIPURI(host: "127.0.0.1", port: registrar.port), expires: 300)
        let first = try #require(await Flow.nextRequest(registrar, .register))
        registrar.send(Flow.response(401, to: first, extra: [("WWW-Authenticate", #"Digest realm="home", nonce="n1", qop="auth""#)]),
                       to: agent.localAddress)
        let second = try #require(await Flow.nextRequest(registrar, .register))
        #expect(second.headers["Authorization"] != nil)
        registrar.send(Flow.response(200, to: second), to: agent.localAddress)
        #expect(try await granted == 300)
    }

    /// A call from the agent to `peer`, which answers; `challenge` (a 407 realm) is sent to the first INVITE.
    /// Returns whether the INVITE came again with credentials.
    static func call(_ agent: SIPUserAgent, to peer: EmbeddedSIPPeer, challenge realm: String) async throws -> (Recorder<SIPCallEvent>, Bool) {
        let call = try agent.invite(to: SIPURI(user: "bob", host: "127.0.0.1", port: peer.port), offer: opusSDP(port: 4000))
        let events = Recorder(call.events)
        let first = try #require(await Flow.nextRequest(peer, .invite))
        peer.send(Flow.response(407, to: first, extra: [("Proxy-Authenticate", "Digest realm=\"\(realm)\", nonce=\"p1\"")]),
                  to: agent.localAddress)
        let again = peer.next(.invite)
        return (events, again?.headers["Proxy-Authorization"] != nil)
    }

    /// The callee challenges our BYE (for its own realm, or the one our credentials are for):
    /// it gets no digest, whatever the credentials' realm.
    @Test(arguments: [nil, "pbx"] as [String?])
    func aCalleeChallengingOurBYEGetsNoDigest(realm: String?) async throws {
        let (network, agent) = try Self.agent(realm: realm)
        let callee = try network.makePeer()
        let call = try agent.invite(to: SIPURI(user: "bob", host: "127.0.0.1", port: callee.port), offer: opusSDP(port: 4000))
        let events = Recorder(call.events)
        let invite = try #require(await Flow.nextRequest(callee, .invite))
        callee.send(Flow.response(200, to: invite, extra: [("Contact", "<sip:bob@127.0.0.1:\(callee.port)>")]), to: agent.localAddress)
        #expect(await events.wait { $0.contains { if case .answered = $0 { true } else { false } } })
        try call.bye()
        let bye = try #require(await Flow.nextRequest(callee, .bye))
        callee.send(Flow.response(401, to: bye, extra: [("WWW-Authenticate", #"Digest realm="callee", nonce="c1""#)]),
                    to: agent.localAddress)
        #expect(callee.next(.bye) == nil)
        #expect(agent.statistics.challengesDeclined == 1)
        #expect(agent.statistics.challengesAnswered == 0)
    }

    /// Without a realm, the registrar's is learned from its challenge, and answered only from
    /// its address: not from a callee that names the same realm, nor for another realm.
    @Test func theRegistrarsRealmIsAnsweredOnlyFromTheRegistrar() async throws {
        let (network, agent) = try Self.agent()
        let registrar = try network.makePeer(), callee = try network.makePeer()
        try await Self.register(agent, at: registrar)
        let (direct, directAnswered) = try await Self.call(agent, to: callee, challenge: "home")
        #expect(!directAnswered)
        #expect(await direct.endReason() == .failed(status: 407, reason: "Proxy Authentication Required"))
        let (_, otherRealmAnswered) = try await Self.call(agent, to: registrar, challenge: "elsewhere")
        #expect(!otherRealmAnswered)
        let (_, throughRegistrar) = try await Self.call(agent, to: registrar, challenge: "home")
        #expect(throughRegistrar)
        #expect(agent.statistics.challengesAnswered == 2)  // the REGISTER and the last INVITE
        #expect(agent.statistics.challengesDeclined == 2)
    }

    /// With a realm, that realm is answered (from any next hop), and no other.
    @Test func aConfiguredRealmIsTheOnlyOneAnswered() async throws {
        let (network, agent) = try Self.agent(realm: "pbx")
        let proxy = try network.makePeer()
        #expect(try await Self.call(agent, to: proxy, challenge: "pbx").1)
        #expect(try await !Self.call(agent, to: proxy, challenge: "home").1)
    }

    /// A stale nonce gets one more try, and only one: a server that keeps saying stale gets
    /// three REGISTERs in all, not an endless loop.
    @Test func staleIsAnsweredOnce() async throws {
        let (network, agent) = try Self.agent(realm: "home")
        let registrar = try network.makePeer()
        let outcome = Task { try await agent.register(at: SIPURI(host: "127.0.0.1", port: registrar.port)) }
        for nonce in ["n1", "n2", "n3"] {
            let request = try #require(await Flow.nextRequest(registrar, .register))
            registrar.send(Flow.response(401, to: request, extra: [("WWW-Authenticate", "Digest realm=\"home\", nonce=\"\(nonce)\", stale=true")]),
                           to: agent.localAddress)
        }
        await #expect(throws: SIPError.rejected(status: 401, reason: "Unauthorized")) { try await outcome.value }
        network.advance(by: .seconds(40))
        #expect(registrar.requests(.register).isEmpty)
        #expect(agent.statistics.challengesAnswered == 2)
        #expect(agent.statistics.challengesDeclined == 1)
    }

    /// The registrar's `rspauth` proves it knows the password: a right one is accepted, a
    /// wrong one drops the response (and the REGISTER times out), counted.
    @Test(arguments: [true, false])
    func rspauthIsChecked(right: Bool) async throws {
        let (network, agent) = try Self.agent(realm: "home")
        let registrar = try network.makePeer()
        let outcome = Task { try await agent.register(at: SIPURI(host: "127.0.0.1", port: registrar.port), expires: 300) }
        let first = try #require(await Flow.nextRequest(registrar, .register))
        registrar.send(Flow.response(401, to: first, extra: [("WWW-Authenticate", #"Digest realm="home", nonce="n1", qop="auth""#)]),
                       to: agent.localAddress)
        let second = try #require(await Flow.nextRequest(registrar, .register))
        let authorization = try #require(second.headers["Authorization"])
        let sent = try #require(digestParameters(authorization.dropFirst("Digest ".count)))
        let h = { (text: String) in MessageDigest.hex(MessageDigest.md5(Array(text.utf8))) }
        let ha1 = h("alice:home:\(right ? "secret" : "guess")")
        let nc = try #require(sent["nc"]), cnonce = try #require(sent["cnonce"])
        let uri = try #require(sent["uri"])
        let rspauth = h("\(ha1):n1:\(nc):\(cnonce):auth:\(h(":\(uri)"))")
        registrar.send(Flow.response(200, to: second, extra: [("Authentication-Info", "qop=auth, rspauth=\"\(rspauth)\", cnonce=\"\(cnonce)\", nc=\(nc)")]),
                       to: agent.localAddress)
        if right {
            #expect(try await outcome.value == 300)
        } else {
            network.advance(by: .seconds(32))
            await #expect(throws: SIPError.timeout) { try await outcome.value }
            #expect(agent.statistics.badServerAuthentication >= 1)
        }
    }
}
