import DNS
import Platform
@testable import SIP
import Testing
import TestSupport

/// Failover between the servers SRV gives for a name (RFC 3263 section 4.3), with a real DNS
/// server (dnsmasq): the first one does not answer, or answers 503, and the request goes on to
/// the next.
@Suite("SIP failover against dnsmasq", .enabled(if: DNSTestbed.isUsable))
struct FailoverTestsWithTestbed {
    /// An agent that asks `testbed` for names.
    static func agent(_ testbed: DNSTestbed) throws -> SIPUserAgent {
        var configuration = SIPUserAgent.Configuration(localAddress: try SocketAddress(host: "127.0.0.1", port: 0), user: "caller",
                                                       timers: .fast)
        configuration.dnsServers = [testbed.address]
        return try SIPUserAgent(configuration: configuration)
    }

    static func srv(_ priority: Int, _ port: UInt16) -> [String] { ["--srv", "_sip._udp=\(priority) 50 \(port) sip.example.test"] }

    /// The first server never answers: after Timer B the INVITE goes to the second.
    @Test func aServerThatDoesNotAnswerIsPassedOver() async throws {
        let silent = try RawPeer(), second = try RawPeer()
        let testbed = try DNSTestbed.start(Self.srv(10, silent.port) + Self.srv(20, second.port))
        defer { testbed.stop() }
        let agent = try Self.agent(testbed)
        defer { agent.close() }
        let call = try agent.invite(to: SIPURI(user: "bob", host: "example.test"), offer: opusSDP(port: 4000))
        #expect(await silent.receiveMessage() != nil)
        guard case .request(let invite)? = await second.receiveMessage() else { Issue.record("no INVITE at the second server"); return }
        #expect(invite.method == .invite)
        #expect(invite.uri.host == "example.test")
        #expect(try invite.headers.cseq().sequence == 2)
        call.hangUp()
    }

    /// The first server answers 503 Service Unavailable: the INVITE goes to the second at once.
    @Test func aServerThatAnswers503IsPassedOver() async throws {
        let busy = try RawPeer(), second = try RawPeer()
        let testbed = try DNSTestbed.start(Self.srv(10, busy.port) + Self.srv(20, second.port))
        defer { testbed.stop() }
        let agent = try Self.agent(testbed)
        defer { agent.close() }
        let call = try agent.invite(to: SIPURI(user: "bob", host: "example.test"), offer: opusSDP(port: 4000))
        let events = Recorder(call.events)
        guard case .request(let first)? = await busy.receiveMessage() else { Issue.record("no INVITE at the first server"); return }
        busy.send(ReinviteTests.response(503, to: first), to: agent.localAddress)
        guard case .request(let invite)? = await second.receiveMessage() else { Issue.record("no INVITE at the second server"); return }
        #expect(invite.method == .invite)
        second.send(ReinviteTests.response(486, to: invite), to: agent.localAddress)
        #expect(await events.endReason() == .failed(status: 486, reason: "Busy Here"))
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
