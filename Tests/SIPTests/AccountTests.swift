import Platform
import Testing
import TestSupport
@testable import SIP
import SIPEmbedded

/// Several accounts on one user agent (as pjsua2's): each registers with its own address of
/// record, Contact and credentials, reports its own states, places calls as itself, and is
/// named by the calls its registrar forwards (on an embedded network with RFC 3261's timers).
@Suite struct AccountTests {
    typealias Flow = AuthenticationFlowTests
    static let bobCredentials = SIPCredentials(username: "bob-auth", password: "bob-secret")

    /// Registers `register`'s account at `registrar`, answering its challenge, and returns the
    /// REGISTER that carried the credentials.
    static func registerChallenged(_ register: @escaping @Sendable () async throws -> Int, at registrar: EmbeddedSIPPeer,
                                   agent: SIPUserAgent) async throws -> SIPRequest {
        let outcome = Task { try await register() }
        let first = try #require(await Flow.nextRequest(registrar, .register))
        registrar.send(Flow.response(401, to: first, extra: [("WWW-Authenticate", #"Digest realm="home", nonce="n1", qop="auth""#)]),
                       to: agent.localAddress)
        let second = try #require(await Flow.nextRequest(registrar, .register))
        registrar.send(Flow.response(200, to: second, extra: [("Expires", "600")]), to: agent.localAddress)
        #expect(try await outcome.value == 600)
        return second
    }

    @Test func twoAccountsRegisterAtOneRegistrarEachAsItself() async throws {
        let (network, agent, registrar) = try Flow.agentAndPeer()
        let bob = try agent.addAccount(user: "bob", displayName: "Bob", credentials: Self.bobCredentials)
        let bobStates = Recorder(bob.registrationStates)
        let uri = SIPURI(host: "127.0.0.1", port: registrar.port)

        let alices = try await Self.registerChallenged({ try await agent.register(at: uri) }, at: registrar, agent: agent)
        let bobs = try await Self.registerChallenged({ try await bob.register(at: uri) }, at: registrar, agent: agent)
        #expect(try alices.headers.to().uri == SIPURI(user: "alice", host: "127.0.0.1"))
        #expect(try bobs.headers.to().uri == SIPURI(user: "bob", host: "127.0.0.1"))
        #expect(try bobs.headers.contacts().first?.uri.user == "bob")
        #expect(try alices.headers.callID() != bobs.headers.callID())
        #expect(try Flow.expectedResponse(#require(alices.headers["Authorization"]), method: "REGISTER"))
        let bobsAnswer = try #require(bobs.headers["Authorization"])
        #expect(bobsAnswer.contains(#"username="bob-auth""#))
        #expect(try Flow.expectedResponse(bobsAnswer, method: "REGISTER", password: "bob-secret"))
        #expect(agent.registrationState == .registered(uri, expires: 600))
        #expect(bob.registrationState == .registered(uri, expires: 600))
        #expect(await bobStates.wait { $0 == [.registering(uri), .registered(uri, expires: 600)] })

        // Each refreshes its own binding, and bob's removal leaves alice's.
        let refreshes = (0..<2).compactMap { _ in registrar.next(.register, within: .seconds(600)) }
        #expect(Set(refreshes.compactMap { try? $0.headers.to().uri.user }) == ["alice", "bob"])
        for refresh in refreshes { registrar.send(Flow.response(200, to: refresh, extra: [("Expires", "600")]), to: agent.localAddress) }
        async let removed: Void = bob.unregister()
        let removal = try #require(await Flow.nextRequest(registrar, .register))
        #expect(try removal.headers.to().uri.user == "bob" && removal.headers["Expires"] == "0")
        registrar.send(Flow.response(200, to: removal), to: agent.localAddress)
        try await removed
        #expect(bob.registrationState == .unregistered)
        #expect(agent.registrationState == .registered(uri, expires: 600))
        _ = network
    }

    @Test func aCallFromAnAccountCarriesItsAddressOfRecordAndItsCredentials() async throws {
        let (_, agent, registrar) = try Flow.agentAndPeer()
        let bob = try agent.addAccount(user: "bob", displayName: "Bob", credentials: Self.bobCredentials)
        let uri = SIPURI(host: "127.0.0.1", port: registrar.port)
        _ = try await Self.registerChallenged({ try await bob.register(at: uri) }, at: registrar, agent: agent)

        let call = try agent.invite(to: SIPURI(user: "carol", host: "127.0.0.1", port: registrar.port), offer: nil, from: bob)
        #expect(call.account == "bob")
        #expect(call.local.uri == SIPURI(user: "bob", host: "127.0.0.1") && call.local.displayName == "Bob")
        let invite = try #require(registrar.next(.invite))
        #expect(try invite.headers.from().uri.user == "bob")
        #expect(try invite.headers.contacts().first?.uri.user == "bob")
        // The proxy challenges: bob's credentials answer, not the configuration's.
        registrar.send(Flow.response(407, to: invite, extra: [("Proxy-Authenticate", #"Digest realm="home", nonce="p1", qop="auth""#)]),
                       to: agent.localAddress)
        let again = try #require(registrar.next(.invite, within: .seconds(1)))
        let answer = try #require(again.headers["Proxy-Authorization"])
        #expect(answer.contains(#"username="bob-auth""#))
        #expect(try Flow.expectedResponse(answer, method: "INVITE", password: "bob-secret"))
        // A call without an account is the configuration's.
        #expect(try agent.invite(to: SIPURI(user: "dave", host: "127.0.0.1", port: registrar.port), offer: nil).account == "alice")
    }

    @Test func anIncomingCallNamesTheAccountItIsAddressedTo() async throws {
        let (_, agent, peer) = try Flow.agentAndPeer()
        _ = try agent.addAccount(user: "bob")
        let calls = Recorder(agent.incomingCalls)
        peer.send(ProtocolTests.invite(to: agent, from: peer, callID: "to-bob"), to: agent.localAddress)
        let toBob = try #require(await calls.element(0))
        #expect(toBob.account == "bob")
        try toBob.ringing()
        let ringing = try #require(peer.receiveResponse(where: { $0.statusCode == 180 }))
        #expect(try ringing.headers.contacts().first?.uri.user == "bob")
        // A user the agent has no account for is the configuration's.
        let other = ProtocolTests.invite(to: agent, from: peer, callID: "to-nobody", branch: "z9hG4bKraw9")
            .replacing("sip:bob@", with: "sip:nobody@")
        peer.send(other, to: agent.localAddress)
        #expect(try await #require(calls.element(1)).account == "alice")
    }

    @Test func anAccountThatCannotBeAddedThrowsAndChangesNothing() throws {
        let (_, agent, _) = try Flow.agentAndPeer()
        _ = try agent.addAccount(user: "bob")
        for (user, reason) in [("bob", "the agent has it already"), ("alice", "the agent has it already"), ("", "an empty user"),
                               ("bo b", "a character a SIP URI's user cannot carry unescaped"),
                               ("a@b", "a character a SIP URI's user cannot carry unescaped"),
                               ("b\r\nVia: x", "a character a SIP URI's user cannot carry unescaped"),
                               (String(repeating: "b", count: 65), "a user over 64 bytes")] {
            #expect(throws: SIPError.invalidAccount(user: user, reason: reason)) { try agent.addAccount(user: user) }
        }
        #expect(agent.machinery.withState { $0.accounts.keys.sorted() } == ["alice", "bob"])
        for index in 2..<CoreState.maximumAccounts { _ = try agent.addAccount(user: "user\(index)") }
        #expect(throws: SIPError.invalidAccount(user: "one-more", reason: "an agent has at most 32 accounts")) {
            try agent.addAccount(user: "one-more")
        }
        agent.close()
        #expect(throws: SIPError.closed) { try agent.addAccount(user: "late") }
    }

    @Test func closingRemovesEveryAccountsBindingAndEndsEveryStream() async throws {
        let (_, agent, registrar) = try Flow.agentAndPeer(credentials: nil)
        let bob = try agent.addAccount(user: "bob")
        let uri = SIPURI(host: "127.0.0.1", port: registrar.port)
        for register in [{ try await agent.register(at: uri) }, { try await bob.register(at: uri) }] as [@Sendable () async throws -> Int] {
            let outcome = Task { try await register() }
            let request = try #require(await Flow.nextRequest(registrar, .register))
            registrar.send(Flow.response(200, to: request, extra: [("Expires", "600")]), to: agent.localAddress)
            _ = try await outcome.value
        }
        let bobStates = Recorder(bob.registrationStates)
        agent.close()
        let removals = registrar.requests(.register)
        #expect(Set(removals.compactMap { try? $0.headers.to().uri.user }) == ["alice", "bob"])
        #expect(removals.allSatisfy { $0.headers["Expires"] == "0" })
        _ = await bobStates.wait { _ in false }
        #expect(bobStates.isFinished)
        await #expect(throws: SIPError.closed) { try await bob.register(at: uri) }
    }
}
