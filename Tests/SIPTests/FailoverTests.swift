import DNS
import Platform
@testable import SIP
import Testing
import TestSupport

/// Failover between the servers SRV gives for a name (RFC 3263 section 4.3), with a real DNS
/// server (dnsmasq): the first one does not answer, or answers 503, and the request goes on to
/// the next. Serialized: starting and stopping dnsmasq blocks a thread of Swift's pool for
/// seconds, which beside the other tests' waits starved them (1 run in 4 missed its 10 s).
@Suite("SIP failover against dnsmasq", .enabled(if: DNSTestbed.isUsable), .serialized)
struct FailoverTestsWithTestbed {
    /// An agent that asks `testbed` for names.
    static func agent(_ testbed: DNSTestbed, timers: SIPTimers = .fast) throws -> SIPUserAgent {
        var configuration = SIPUserAgent.Configuration(localAddress: try SocketAddress(host: "127.0.0.1", port: 0), user: "caller",
                                                       timers: timers)
        configuration.dnsServers = [testbed.address]
        return try SIPUserAgent(configuration: configuration)
    }

    static func srv(_ priority: Int, _ port: UInt16) -> [String] { ["--srv", "_sip._udp=\(priority) 50 \(port) sip.example.test"] }

    /// Two raw servers behind example.test's SRV records (priority 10, then 20), and an agent
    /// calling sip:bob@example.test: `body` gets (first, second, agent, call).
    static func withTwoServers(_ body: (RawPeer, RawPeer, SIPUserAgent, SIPCall) async throws -> Void) async throws {
        let first = try RawPeer(), second = try RawPeer()
        let testbed = try DNSTestbed.start(srv(10, first.port) + srv(20, second.port))
        defer { testbed.stop() }
        let agent = try Self.agent(testbed)
        defer { agent.close() }
        let call = try agent.invite(to: SIPURI(user: "bob", host: "example.test"), offer: opusSDP(port: 4000))
        try await body(first, second, agent, call)
    }

    /// The first server never answers: after Timer B the INVITE goes to the second.
    @Test func aServerThatDoesNotAnswerIsPassedOver() async throws {
        try await Self.withTwoServers { silent, second, _, call async throws in
            #expect(await silent.receiveMessage() != nil)
            guard case .request(let invite)? = await second.receiveMessage() else { Issue.record("no INVITE at the second server"); return }
            #expect(invite.method == .invite)
            #expect(invite.uri.host == "example.test")
            #expect(try invite.headers.cseq().sequence == 2)
            call.hangUp()
        }
    }

    /// The first server answers 503 Service Unavailable: the INVITE goes to the second at once.
    @Test func aServerThatAnswers503IsPassedOver() async throws {
        try await Self.withTwoServers { busy, second, agent, call async throws in
            let events = Recorder(call.events)
            guard case .request(let first)? = await busy.receiveMessage() else { Issue.record("no INVITE at the first server"); return }
            busy.send(ReinviteTests.response(503, to: first), to: agent.localAddress)
            guard case .request(let invite)? = await second.receiveMessage() else { Issue.record("no INVITE at the second server"); return }
            #expect(invite.method == .invite)
            second.send(ReinviteTests.response(486, to: invite), to: agent.localAddress)
            #expect(await events.endReason() == .failed(status: 486, reason: "Busy Here"))
        }
    }

    /// Over TCP, a first server where nothing listens is passed over at once (the refused
    /// connection is a transport error), and the call is answered by the second.
    @Test func aRefusedConnectionIsPassedOverAtOnce() async throws {
        let callee = try TransportTests.agent(user: "bob", tcp: true)
        defer { callee.close() }
        let dead = try TCPListener(bindingTo: SocketAddress(host: "127.0.0.1", port: 0)).localAddress.port
        let port = try #require(callee.listeningAddress(for: .tcp)?.port)
        let testbed = try DNSTestbed.start(["--srv", "_sip._tcp=10 50 \(dead) sip.example.test",
                                            "--srv", "_sip._tcp=20 50 \(port) sip.example.test"])
        defer { testbed.stop() }
        // RFC timers: Timer B is 32 s, so an answer within the patient wait came by failover.
        let agent = try Self.agent(testbed, timers: .rfc3261)
        defer { agent.close() }
        let incoming = Recorder(callee.incomingCalls)
        let start = ContinuousClock.now
        let call = try agent.invite(to: SIPURI(user: "bob", host: "example.test"), offer: opusSDP(port: 4000))
        #expect(call.transport == .tcp)
        let answered = try #require(await incoming.element(0))
        #expect(ContinuousClock.now - start < .seconds(30))
        answered.hangUp()
    }

    /// A name with no SRV record and no address is an error at once.
    @Test func aNameThatDoesNotExistIsAnError() throws {
        let testbed = try DNSTestbed.start()
        defer { testbed.stop() }
        let agent = try Self.agent(testbed)
        defer { agent.close() }
        #expect(throws: SIPError.unresolvableHost("nobody.example.test")) {
            try agent.invite(to: SIPURI(user: "bob", host: "nobody.example.test"), offer: nil)
        }
    }
}
