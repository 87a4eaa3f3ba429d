import Platform
import Testing
import TestSupport
@testable import SIP
import SIPEmbedded

/// A network change under an agent bound to the wildcard address (a laptop on another network):
/// its binding is registered again from the new address, the old Contact removed, and calls
/// reach it there (on an embedded network whose machine moves, with RFC 3261's timers).
@Suite struct NetworkChangeTests {
    typealias Flow = AuthenticationFlowTests

    /// An agent on a machine at 10.0.0.1 registered at a registrar at 10.0.0.9 for 600 s.
    static func registeredLaptop() async throws -> (EmbeddedSIPNetwork, SIPUserAgent, EmbeddedSIPPeer, SIPRequest) {
        let network = EmbeddedSIPNetwork()
        let configuration = SIPUserAgent.Configuration(localAddress: try SocketAddress(host: "0.0.0.0", port: 0), user: "alice")
        let agent = try network.makeAgent(configuration, host: "10.0.0.1")
        let registrar = try network.makePeer(at: SocketAddress(host: "10.0.0.9", port: 5060))
        let outcome = Task { try await agent.register(at: SIPURI(host: "10.0.0.9"), expires: 600) }
        let first = try #require(await Flow.nextRequest(registrar, .register))
        #expect(try first.headers.contacts().map(\.uri.host) == ["10.0.0.1"])
        registrar.send(Flow.response(200, to: first, extra: [("Expires", "600")]), to: network.address(of: agent))
        #expect(try await outcome.value == 600)
        return (network, agent, registrar, first)
    }

    @Test func aMovedAddressIsRegisteredAgainWithTheOldContactRemoved() async throws {
        let (network, agent, registrar, first) = try await Self.registeredLaptop()
        try network.move(agent, to: "10.0.0.2")
        let start = network.elapsed
        let again = try #require(registrar.next(.register, within: .seconds(6)))
        #expect(network.elapsed - start <= SIPTimers.rfc3261.networkCheck)
        let contacts = try again.headers.contacts()
        #expect(contacts.map(\.uri.host) == ["10.0.0.2", "10.0.0.1"])
        #expect(contacts.map { $0.parameters["expires"] } == [nil, "0"])
        #expect(try again.headers.topVia().host == "10.0.0.2")
        #expect(try again.headers.callID() == first.headers.callID())
        #expect(try again.headers.cseq().sequence == first.headers.cseq().sequence + 1)
        registrar.send(Flow.response(200, to: again, extra: [("Expires", "600")]), to: network.address(of: agent))
        #expect(agent.registrationState.isRegistered)

        // The refresh names only the new Contact; a call forwarded there reaches the agent.
        let refresh = try #require(registrar.next(.register, within: .seconds(600)))
        #expect(try refresh.headers.contacts().map(\.uri.host) == ["10.0.0.2"])
        let calls = Recorder(agent.incomingCalls)
        let invite = ProtocolTests.invite(to: agent, from: registrar)
            .replacing("127.0.0.1:\(agent.localAddress.port)", with: "10.0.0.2:\(agent.localAddress.port)")
        registrar.send(invite, to: network.address(of: agent))
        #expect(try await #require(calls.element(0)).localHost == "10.0.0.2")
    }

    @Test func networkChangedRegistersAgainAtOnce() async throws {
        let (network, agent, registrar, _) = try await Self.registeredLaptop()
        try network.move(agent, to: "10.0.0.3")
        let start = network.elapsed
        agent.networkChanged()
        let again = try #require(registrar.next(.register))
        #expect(network.elapsed == start)
        #expect(try again.headers.contacts().map(\.uri.host) == ["10.0.0.3", "10.0.0.1"])
        // Unchanged since: the next check sends nothing.
        registrar.send(Flow.response(200, to: again, extra: [("Expires", "600")]), to: network.address(of: agent))
        agent.networkChanged()
        network.advance(by: .seconds(60))
        #expect(registrar.drain().isEmpty)
    }

    @Test func anAgentBoundToAnAddressNeverRegistersForANetworkCheck() async throws {
        let (network, agent, registrar) = try Flow.agentAndPeer(credentials: nil)
        let outcome = Task { try await agent.register(at: SIPURI(host: "127.0.0.1", port: registrar.port), expires: 600) }
        let first = try #require(await Flow.nextRequest(registrar, .register))
        registrar.send(Flow.response(200, to: first, extra: [("Expires", "600")]), to: agent.localAddress)
        _ = try await outcome.value
        agent.networkChanged()
        network.advance(by: .seconds(300))
        #expect(registrar.drain().isEmpty)
    }
}
