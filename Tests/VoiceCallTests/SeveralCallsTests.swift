import AudioSession
import Platform
import Synchronization
import Testing
import TestSupport
import VoiceCall

/// Several calls on one controller: call waiting, swapping, the limit, and the session's life.
@Suite("Several calls on one controller", .serialized)
struct SeveralCallsTests {
    /// Whether `call` receives packets now: more arrive within `window`.
    static func receives(_ call: Call, within window: Duration = .milliseconds(300)) async -> Bool {
        let before = await call.statistics.packetsReceived
        try? await Task.sleep(for: window)
        return await call.statistics.packetsReceived > before
    }

    /// Whether `call` stops receiving: a quiet `window` comes within the patient wait.
    static func fallsQuiet(_ call: Call) async -> Bool {
        await eventually { await !receives(call) }
    }

    @Test("A second call rings while one is up; answering it holds the first; resuming the first swaps them")
    func callWaitingAndSwap() async throws {
        let alice = try Phone("alice"), bob = try Phone("bob"), carol = try Phone("carol")
        let peerHolds = Mutex<[String]>([])
        let watcher = Task {
            for await event in alice.controller.events { if case let .peerHold(_, held) = event { peerHolds.withLock { $0.append("alice \(held)") } } }
        }
        defer { watcher.cancel() }
        let (aliceCall, bobWithAlice) = try await alice.call(bob)
        #expect(await eventually { await aliceCall.statistics.packetsReceived > 20 })

        // Carol calls: it rings at Bob while Alice's call goes on.
        await carol.controller.start()
        let waiting = Task { () -> Call? in
            for await call in bob.controller.incomingCalls where call.remoteURI.contains("carol") { return call }
            return nil
        }
        let carolCall = try await carol.controller.dial("sip:bob@\(bob.controller.sipAddress)")
        let bobWithCarol = try #require(await waiting.value)
        #expect(bobWithCarol.state == .incomingRinging)
        #expect(bobWithAlice.state == .active)
        #expect(await bob.controller.calls.map(\.id) == [bobWithAlice.id, bobWithCarol.id])

        // Answered, Carol's call takes the audio and Alice's is held (and Alice is told).
        try await bobWithCarol.answer()
        #expect(await carolCall.connected() == .active)
        #expect(bobWithAlice.state == .held(.local))
        #expect(await eventually { peerHolds.withLock { $0 } == ["alice true"] })
        #expect(await eventually { await carolCall.statistics.packetsReceived > 20 })
        #expect(await Self.fallsQuiet(aliceCall))
        #expect(bob.session.isActive)

        // Swapped: Alice's call resumes and Carol's is held.
        try await bobWithAlice.resume()
        #expect(bobWithAlice.state == .active)
        #expect(bobWithCarol.state == .held(.local))
        #expect(await eventually { peerHolds.withLock { $0 } == ["alice true", "alice false"] })
        #expect(await eventually { await Self.receives(aliceCall) })
        #expect(await Self.fallsQuiet(carolCall))

        // The session stays active until the last call with media ends.
        await bobWithAlice.hangUp()
        #expect(bob.session.isActive)
        await bobWithCarol.hangUp()
        #expect(await eventually { !bob.session.isActive })
        #expect(await carolCall.ended() == .remoteHangUp)
        await alice.shutdown(); await bob.shutdown(); await carol.shutdown()
    }

    @Test("Beyond maximumCalls an INVITE gets 486 and dial() throws busy, changing nothing")
    func limit() async throws {
        let alice = try Phone("alice"), bob = try Phone("bob") { $0.maximumCalls = 1 }, carol = try Phone("carol")
        let (_, bobWithAlice) = try await alice.call(bob)
        await carol.controller.start()
        let refused = try await carol.controller.dial("sip:bob@\(bob.controller.sipAddress)")
        #expect(await refused.ended() == .busy(SIPFinalResponse(status: 486, reason: "Busy Here")))
        await #expect(throws: CallError.busy) { _ = try await bob.controller.dial("sip:carol@\(carol.controller.sipAddress)") }
        #expect(bobWithAlice.state == .active)
        #expect(await bob.controller.calls.count == 1)
        await alice.shutdown(); await bob.shutdown(); await carol.shutdown()
    }

    @Test("A configuration with maximumCalls below 1 is refused")
    func invalidLimit() throws {
        #expect(throws: CallError.self) { _ = try Phone("x") { $0.maximumCalls = 0 } }
    }
}
