import AudioSession
import MediaNegotiation
import Synchronization
import Testing
import TestSupport
import VoiceCall

/// Calls between two controllers with SRTP: SDES and DTLS-SRTP end to end, the policies that
/// decline, and a hold and resume (re-INVITEs) under SDES.
@Suite("Encrypted calls", .serialized)
struct EncryptedCallTests {
    static func phone(_ name: String, _ encryption: MediaEncryption, _ requirement: SRTPRequirement = .optional,
                      clearKeys: Bool = true) throws -> Phone {
        try Phone(name) { $0.mediaSecurity = MediaSecurityPolicy(encryption: encryption, requirement: requirement,
                                                                  allowsClearKeys: clearKeys) }
    }

    @Test("SDES: both ends encrypt with the suite agreed; a hold and resume by re-INVITE keeps the keys working")
    func sdesCallHoldsAndResumes() async throws {
        let alice = try Self.phone("alice", .sdes, .mandatory), bob = try Self.phone("bob", .sdes, .mandatory)
        let (call, theirs) = try await alice.call(bob)
        #expect(await eventually {
            let (a, b) = (await theirs.statistics.srtpUnprotected, await call.statistics.srtpUnprotected)
            return a > 20 && b > 20
        })
        var s = await call.statistics
        #expect(s.mediaEncryption == "sdes" && s.srtpProfile == "AES_CM_128_HMAC_SHA1_80" && s.packetsReceived > 10)
        let phone = alice.system.makeSession(name: "phone", priority: .phoneCall)
        try phone.setCategory(.playAndRecord, mode: .voiceChat)
        try phone.setActive(true)
        #expect(await eventually { call.state == .held(.interrupted) })
        try phone.setActive(false, options: .notifyOthersOnDeactivation)
        #expect(await eventually { call.state == .active })
        let before = await theirs.statistics.srtpUnprotected
        #expect(await eventually { await theirs.statistics.srtpUnprotected > before + 20 })
        s = await theirs.statistics
        #expect(s.srtpAuthenticationFailures == 0 && s.srtpReplays == 0)
        await call.hangUp()
        await alice.shutdown(); await bob.shutdown()
    }

    @Test("DTLS-SRTP: the handshake on the media ports keys both ends, and media flows")
    func dtlsCall() async throws {
        let alice = try Self.phone("alice", .dtls, .mandatory), bob = try Self.phone("bob", .dtls)
        let (call, theirs) = try await alice.call(bob)
        #expect(await eventually {
            let (a, b) = (await theirs.statistics.srtpUnprotected, await call.statistics.srtpUnprotected)
            return a > 20 && b > 20
        })
        let mine = await call.statistics, other = await theirs.statistics
        #expect(mine.mediaEncryption == "dtls" && mine.srtpProfile != nil && mine.srtpProfile == other.srtpProfile)
        // Not timed here: the client's time includes the offerer's own media start after the 2xx,
        // which a loaded machine delays by seconds. Docs/performance.md has the measurement.
        #expect(mine.dtlsHandshakeMs != nil && other.dtlsHandshakeMs != nil)
        print("DTLS-SRTP call: handshake \(mine.dtlsHandshakeMs ?? -1) ms (caller, server), \(other.dtlsHandshakeMs ?? -1) ms (callee, client)")
        await call.hangUp()
        await alice.shutdown(); await bob.shutdown()
    }

    @Test("Mandatory SRTP against a peer that cannot: 488, the call ends as not acceptable", arguments: [
        (MediaEncryption.sdes, MediaEncryption.off), (.dtls, .off), (.dtls, .sdes), (.sdes, .dtls),
    ])
    func mandatoryAgainstClear(caller: MediaEncryption, callee: MediaEncryption) async throws {
        let alice = try Self.phone("alice", caller, .mandatory), bob = try Self.phone("bob", callee)
        await alice.controller.start()
        await bob.controller.start()
        let call = try await alice.controller.dial("sip:bob@\(bob.controller.sipAddress)")
        let reason = await call.ended()
        // Refused by the callee's 488, or by us after its clear answer (a BYE: no response).
        #expect([nil, 488].contains(reason.response?.status))
        guard case .notAcceptable = reason else { Issue.record("ended as \(reason)"); return }
        #expect(!alice.session.isActive && !bob.session.isActive)
        await alice.shutdown(); await bob.shutdown()
    }

    @Test("A mandatory callee declines a clear offer with 488")
    func mandatoryCalleeDeclinesClear() async throws {
        let alice = try Self.phone("alice", .off), bob = try Self.phone("bob", .sdes, .mandatory)
        await alice.controller.start()
        await bob.controller.start()
        let call = try await alice.controller.dial("sip:bob@\(bob.controller.sipAddress)")
        #expect(await call.ended() == .notAcceptable(SIPFinalResponse(status: 488, reason: "Not Acceptable Here")))
        await alice.shutdown(); await bob.shutdown()
    }

    @Test("Optional SDES with a peer that does not encrypt: the call goes on in clear")
    func optionalFallsBackToClear() async throws {
        let alice = try Self.phone("alice", .sdes), bob = try Self.phone("bob", .off)
        let (call, _) = try await alice.call(bob)
        #expect(await eventually { await call.statistics.packetsReceived > 20 })
        let s = await call.statistics
        #expect(s.mediaEncryption == "off" && s.srtpProfile == nil && s.srtpProtected == 0)
        await call.hangUp()
        await alice.shutdown(); await bob.shutdown()
    }

    @Test("SDES over UDP without clear keys allowed: dial refuses, saying why and how")
    func sdesKeysNeedTLS() async throws {
        let alice = try Self.phone("alice", .sdes, clearKeys: false), bob = try Self.phone("bob", .sdes)
        await alice.controller.start()
        await bob.controller.start()
        await #expect(throws: CallError.mediaSecurity(MediaSecurityError.keysInClearSignalling.description)) {
            _ = try await alice.controller.dial("sip:bob@\(bob.controller.sipAddress)")
        }
        #expect(MediaSecurityError.keysInClearSignalling.description.contains("--allow-clear-keys"))
        await alice.shutdown(); await bob.shutdown()
    }
}
