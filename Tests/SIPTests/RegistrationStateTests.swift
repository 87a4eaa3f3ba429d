import Platform
import Synchronization
import Testing
import TestSupport
@testable import SIP

/// The registration's states as an app shows them: registering, registered with its lifetime,
/// failed with the registrar's status and when it is tried again, unregistered.
@Suite struct RegistrationStateTests {
    typealias Flow = AuthenticationFlowTests

    /// Collects `agent`'s registration states as they come.
    final class States: Sendable {
        private let list = Mutex<[SIPRegistrationState]>([])
        init(_ agent: SIPUserAgent) {
            Task { [self] in for await state in agent.registrationStates { list.withLock { $0.append(state) } } }
        }
        var all: [SIPRegistrationState] { list.withLock { $0 } }
    }

    @Test func statesFollowTheRegistrationThroughAFailedRefreshAndItsRetry() async throws {
        let agent = try Flow.agent(credentials: nil)
        defer { agent.close() }
        let states = States(agent)
        let registrar = try RawPeer()
        let uri = SIPURI(host: "127.0.0.1", port: registrar.port)
        #expect(agent.registrationState == .unregistered)
        async let granted = agent.register(at: uri, expires: 600)
        let first = try #require(await Flow.nextRequest(registrar, .register))
        #expect(agent.registrationState == .registering(uri))
        // A lifetime of 2 s: the refresh comes after 80 % of it, and is refused.
        registrar.send(Flow.response(200, to: first, extra: [("Expires", "2")]), to: agent.localAddress)
        #expect(try await granted == 2)
        let refresh = try #require(await Flow.nextRequest(registrar, .register))
        registrar.send(Flow.response(503, to: refresh, extra: [("Retry-After", "1")]), to: agent.localAddress)
        #expect(await eventually { agent.registrationState != .registered(uri, expires: 2) })
        let retrySeconds = Int(SIPTimers.fast.registrationRetry.components.seconds)
        #expect(agent.registrationState == .failed(uri, .rejected(status: 503, reason: "Service Unavailable"), retryIn: retrySeconds))
        // Tried again after the retry wait: registering, then registered.
        let retry = try #require(await Flow.nextRequest(registrar, .register, timeout: .seconds(10)))
        registrar.send(Flow.response(200, to: retry, extra: [("Expires", "600")]), to: agent.localAddress)
        #expect(await eventually { agent.registrationState == .registered(uri, expires: 600) })

        async let removed: Void = agent.unregister()
        let unregister = try #require(await Flow.nextRequest(registrar, .register))
        registrar.send(Flow.response(200, to: unregister), to: agent.localAddress)
        try await removed
        #expect(await eventually { states.all.last == .unregistered })
        #expect(states.all == [
            .registering(uri), .registered(uri, expires: 2),
            .failed(uri, .rejected(status: 503, reason: "Service Unavailable"), retryIn: retrySeconds),
            .registering(uri), .registered(uri, expires: 600), .unregistered,
        ])
    }

    @Test func aRefusedFirstRegistrationFailsForGood() async throws {
        let agent = try Flow.agent(credentials: nil)
        defer { agent.close() }
        let registrar = try RawPeer()
        let uri = SIPURI(host: "127.0.0.1", port: registrar.port)
        let outcome = Task { try await agent.register(at: uri) }
        let request = try #require(await Flow.nextRequest(registrar, .register))
        registrar.send(Flow.response(403, to: request), to: agent.localAddress)
        await #expect(throws: SIPError.rejected(status: 403, reason: "Forbidden")) { try await outcome.value }
        #expect(agent.registrationState == .failed(uri, .rejected(status: 403, reason: "Forbidden"), retryIn: nil))
    }
}
