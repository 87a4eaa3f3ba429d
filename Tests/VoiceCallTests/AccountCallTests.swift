import Platform
import SIP
import Testing
import TestSupport
@testable import VoiceCall

/// A controller with a second account (a second line or provider): it registers as itself,
/// its changes come on the controller's events, calls are placed from it and name it, and
/// shutdown removes its binding (a hand-written registrar on loopback).
@Suite("Accounts on one controller")
struct AccountCallTests {
    /// The next request of `method` the peer gets, within the patient wait.
    static func next(_ method: SIPMethod, at peer: RawCallee) async throws -> SIPRequest {
        for _ in 0..<5 {
            if case let .request(request)? = await peer.peer.receiveMessage(), request.method == method { return request }
        }
        throw CallError.signalling("no \(method) came")
    }

    @Test("A second account registers as itself, calls from it carry its name, and shutdown removes its binding")
    func aSecondAccountRegistersCallsAndUnregisters() async throws {
        let alice = try Phone("alice") { $0.displayName = "Alice" }
        await alice.controller.start()
        let events = alice.controller.events
        let registrar = RawCallee()
        let bob = try await alice.controller.addAccount(user: "bob", displayName: "Bob")
        await #expect(throws: CallError.invalidAccount(user: "bob", reason: "the agent has it already")) {
            try await alice.controller.addAccount(user: "bob")
        }
        #expect(await alice.controller.accounts.map(\.user) == ["bob"])

        let granted = Task { try await bob.register(at: SIPURI(host: "127.0.0.1", port: registrar.peer.port)) }
        let register = try await Self.next(.register, at: registrar)
        #expect(try register.headers.to().uri.user == "bob")
        registrar.respond(to: register, 200, "OK")
        #expect(try await granted.value == 3600)
        var stateSeen = false
        for await event in events {
            if case let .registration(account, state) = event, account == "bob", state.isRegistered { stateSeen = true; break }
        }
        #expect(stateSeen, "the account's registration comes on the controller's events")

        let call = try await alice.controller.dial("sip:carol@127.0.0.1:\(registrar.peer.port)", from: bob)
        #expect(call.account == "bob")
        let invite = try await Self.next(.invite, at: registrar)
        let from = try invite.headers.from()
        #expect(from.uri.user == "bob" && from.displayName == "Bob")
        registrar.respond(to: invite, 486, "Busy Here")
        #expect(await eventually { call.state.isEnded })
        // Without an account: the configuration's user and display name.
        let own = try await alice.controller.dial("sip:carol@127.0.0.1:\(registrar.peer.port)")
        #expect(own.account == "alice")
        let ownInvite = try await Self.next(.invite, at: registrar)
        #expect(try ownInvite.headers.from().displayName == "Alice")
        registrar.respond(to: ownInvite, 486, "Busy Here")

        let shutdown = Task { await alice.shutdown() }
        let removal = try await Self.next(.register, at: registrar)
        #expect(try removal.headers.to().uri.user == "bob" && removal.headers["Expires"] == "0")
        registrar.respond(to: removal, 200, "OK")
        await shutdown.value
        #expect(bob.registrationState == .unregistered)
    }

    @Test("A registrar's refusal is thrown with its status and phrase: CallError.refused")
    func aRefusedRegistrationCarriesTheStatus() async throws {
        let alice = try Phone("alice")
        await alice.controller.start()
        let registrar = RawCallee()
        let registering = Task { () async throws(CallError) -> Int in
            try await alice.controller.register(at: "sip:127.0.0.1:\(registrar.peer.port)")
        }
        registrar.respond(to: try await Self.next(.register, at: registrar), 403, "Forbidden Here")
        let refusal = SIPFinalResponse(status: 403, reason: "Forbidden Here")
        await #expect(throws: CallError.refused(request: "REGISTER", response: refusal)) { try await registering.value }
        await alice.shutdown()
    }
}
