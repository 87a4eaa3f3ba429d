import AudioSession
import Synchronization
import Testing
import TestSupport
import VoiceCall

/// Transfers between three controllers on loopback: blind and attended, and a transferee that
/// declines. Each side is a real `CallController`; nothing in between.
@Suite("Call transfer", .serialized)
struct TransferCallTests {
    /// Answers every call that rings at `phone` (the transfer's target).
    static func answerAll(at phone: Phone) -> Task<Void, Never> {
        Task {
            for await call in phone.controller.incomingCalls { try? await call.answer() }
        }
    }

    /// The first `.transferred` or `.replaced` event's new call at `phone`.
    static func nextCall(at phone: Phone) -> Task<(String, Call)?, Never> {
        Task {
            for await event in phone.controller.events {
                switch event {
                case let .transferred(from, to): return (from, to)
                case let .replaced(callID, by): return (callID, by)
                default: continue
                }
            }
            return nil
        }
    }

    @Test("Blind: the transferee calls the target, the transferor's call ends as transferred, and the two talk")
    func blindTransfer() async throws {
        let alice = try Phone("alice"), bob = try Phone("bob"), carol = try Phone("carol")
        let (aliceCall, bobCall) = try await alice.call(bob)
        await carol.controller.start()
        let answering = Self.answerAll(at: carol)
        defer { answering.cancel() }
        let placed = Self.nextCall(at: alice)
        try await bobCall.transfer(to: "sip:carol@\(carol.controller.sipAddress)")
        #expect(await bobCall.ended() == .transferred)
        #expect(await aliceCall.ended() == .remoteHangUp)
        let (from, aliceToCarol) = try #require(await placed.value)
        #expect(from == aliceCall.id)
        #expect(aliceToCarol.state == .active)
        #expect(await eventually { await aliceToCarol.statistics.packetsReceived > 20 })
        #expect(await bob.controller.calls.isEmpty)
        #expect(await eventually { !bob.session.isActive })
        await alice.shutdown(); await bob.shutdown(); await carol.shutdown()
    }

    @Test("A transferee that does not accept transfers declines, and the call goes on")
    func declinedTransfer() async throws {
        let alice = try Phone("alice") { $0.acceptsTransfers = false }, bob = try Phone("bob"), carol = try Phone("carol")
        let (aliceCall, bobCall) = try await alice.call(bob)
        await carol.controller.start()
        await #expect(throws: CallError.transferFailed(status: 603, reason: "Decline")) {
            try await bobCall.transfer(to: "sip:carol@\(carol.controller.sipAddress)")
        }
        #expect(bobCall.state == .active && aliceCall.state == .active)
        #expect(await carol.controller.calls.isEmpty)
        await #expect(throws: CallError.self) { try await bobCall.transfer(to: "not a uri") }
        await bobCall.hangUp()
        await alice.shutdown(); await bob.shutdown(); await carol.shutdown()
    }

    @Test("Attended: the transferee's call replaces the consultation at the target; every old call ends")
    func attendedTransfer() async throws {
        let alice = try Phone("alice"), bob = try Phone("bob"), carol = try Phone("carol")
        let (aliceCall, bobWithAlice) = try await alice.call(bob)
        // Bob consults Carol: dialling holds Alice's call once Carol answers.
        let (bobWithCarol, carolWithBob) = try await bob.call(carol)
        #expect(bobWithAlice.state == .held(.local))
        let replacing = Self.nextCall(at: carol)
        try await bobWithAlice.transfer(to: bobWithCarol)
        #expect(await bobWithAlice.ended() == .transferred)
        #expect(await carolWithBob.ended() == .replaced)
        #expect(await bobWithCarol.ended() == .remoteHangUp)
        #expect(await aliceCall.ended() == .remoteHangUp)
        let (replacedID, carolWithAlice) = try #require(await replacing.value)
        #expect(replacedID == carolWithBob.id)
        #expect(carolWithAlice.state == .active)
        #expect(carolWithAlice.remoteURI.contains("alice"))
        #expect(await eventually { await carolWithAlice.statistics.packetsReceived > 20 })
        #expect(await eventually { !bob.session.isActive })
        await alice.shutdown(); await bob.shutdown(); await carol.shutdown()
    }
}
