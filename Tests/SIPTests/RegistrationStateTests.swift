import Platform
import Testing
import TestSupport
@testable import SIP
import SIPEmbedded

/// The registration's states as an app shows them: registering, registered with its lifetime,
/// failed with the registrar's status and when it is tried again, unregistered (on an embedded
/// network with RFC 3261's timers).
@Suite struct RegistrationStateTests {
    typealias Flow = AuthenticationFlowTests

    @Test func statesFollowTheRegistrationThroughAFailedRefreshAndItsRetry() async throws {
        let (network, agent, registrar) = try Flow.agentAndPeer(credentials: nil)
        let states = Recorder(agent.registrationStates)
        let uri = SIPURI(host: "127.0.0.1", port: registrar.port)
        #expect(agent.registrationState == .unregistered)
        async let granted = agent.register(at: uri, expires: 600)
        let first = try #require(await Flow.nextRequest(registrar, .register))
        #expect(agent.registrationState == .registering(uri))
        // A lifetime of 120 s: the refresh comes after 80 % of it, and is refused.
        registrar.send(Flow.response(200, to: first, extra: [("Expires", "120")]), to: agent.localAddress)
        #expect(try await granted == 120)
        let refresh = try #require(registrar.next(.register, within: .seconds(120)))
        #expect(network.elapsed == .seconds(96))
        registrar.send(Flow.response(503, to: refresh, extra: [("Retry-After", "1")]), to: agent.localAddress)
        let retrySeconds = Int(SIPTimers.rfc3261.registrationRetry.components.seconds)
        #expect(agent.registrationState == .failed(uri, .rejected(status: 503, reason: "Service Unavailable"), retryIn: retrySeconds))
        // Tried again after the retry wait: registering, then registered.
        let retry = try #require(registrar.next(.register, within: .seconds(retrySeconds + 1)))
        #expect(network.elapsed == .seconds(96 + retrySeconds))
        registrar.send(Flow.response(200, to: retry, extra: [("Expires", "600")]), to: agent.localAddress)
        #expect(agent.registrationState == .registered(uri, expires: 600))

        async let removed: Void = agent.unregister()
        let unregister = try #require(await Flow.nextRequest(registrar, .register))
        registrar.send(Flow.response(200, to: unregister), to: agent.localAddress)
        try await removed
        #expect(await states.wait { $0.last == .unregistered })
        #expect(states.all == [
            .registering(uri), .registered(uri, expires: 120),
            .failed(uri, .rejected(status: 503, reason: "Service Unavailable"), retryIn: retrySeconds),
            .registering(uri), .registered(uri, expires: 600), .unregistered,
        ])
    }

    @Test func aFirstRegistrationWithoutAnswerIsTriedAgainWithBackoff() async throws {
        let (network, agent, registrar) = try Flow.agentAndPeer(credentials: nil)
        let uri = SIPURI(host: "127.0.0.1", port: registrar.port)
        let retrySeconds = Int(SIPTimers.rfc3261.registrationRetry.components.seconds)
        let outcome = Task { try await agent.register(at: uri) }
        _ = try #require(await Flow.nextRequest(registrar, .register))
        // The registrar is down: Timer F (64 x T1) ends the transaction, the caller hears why.
        network.advance(by: .seconds(33))
        await #expect(throws: SIPError.timeout) { try await outcome.value }
        #expect(agent.registrationState == .failed(uri, .timeout, retryIn: retrySeconds))
        // Down again at the retry: the wait doubles.
        _ = registrar.drain()
        let start = network.elapsed
        _ = try #require(registrar.next(.register, within: .seconds(retrySeconds + 1)))
        #expect(network.elapsed - start <= .seconds(retrySeconds))
        network.advance(by: .seconds(33))
        #expect(agent.registrationState == .failed(uri, .timeout, retryIn: 2 * retrySeconds))
        // Back up: the next try registers.
        _ = registrar.drain()
        let retry = try #require(registrar.next(.register, within: .seconds(2 * retrySeconds + 1)))
        registrar.send(Flow.response(200, to: retry, extra: [("Expires", "600")]), to: agent.localAddress)
        #expect(agent.registrationState == .registered(uri, expires: 600))
    }

    @Test func unregisteringAFirstRegistrationThatWaitsForItsRetrySendsNothing() async throws {
        let (network, agent, registrar, _) = try await Self.firstRegistration(answered: 500, "Server Internal Error")
        try await agent.unregister()
        #expect(agent.registrationState == .unregistered)
        network.advance(by: .seconds(600))
        #expect(registrar.drain().isEmpty)
    }

    @Test func aRegistrationReplacedByAnotherRegistrarEndsItsCallerWithReplaced() async throws {
        let (network, agent, first) = try Flow.agentAndPeer(credentials: nil)
        let second = try network.makePeer()
        let waiting = Task { try await agent.register(at: SIPURI(host: "127.0.0.1", port: first.port)) }
        _ = try #require(await Flow.nextRequest(first, .register))
        let other = Task { try await agent.register(at: SIPURI(host: "127.0.0.1", port: second.port), expires: 600) }
        let request = try #require(await Flow.nextRequest(second, .register))
        await #expect(throws: SIPError.replaced) { try await waiting.value }
        second.send(Flow.response(200, to: request), to: agent.localAddress)
        #expect(try await other.value == 600)
    }

    @Test func aRefusedFirstRegistrationFailsForGood() async throws {
        let (_, agent, _, uri) = try await Self.firstRegistration(answered: 403, "Forbidden")
        #expect(agent.registrationState == .failed(uri, .rejected(status: 403, reason: "Forbidden"), retryIn: nil))
    }

    /// An agent whose first REGISTER the registrar answered `status`; the call threw that.
    static func firstRegistration(answered status: Int, _ reason: String) async throws
        -> (EmbeddedSIPNetwork, SIPUserAgent, EmbeddedSIPPeer, SIPURI) {
        let (network, agent, registrar) = try Flow.agentAndPeer(credentials: nil)
        let uri = SIPURI(host: "127.0.0.1", port: registrar.port)
        let outcome = Task { try await agent.register(at: uri) }
        let request = try #require(await Flow.nextRequest(registrar, .register))
        registrar.send(Flow.response(status, to: request), to: agent.localAddress)
        await #expect(throws: SIPError.rejected(status: status, reason: reason)) { try await outcome.value }
        return (network, agent, registrar, uri)
    }
}
