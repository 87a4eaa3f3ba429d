import AudioIO
import AudioSession
import Platform
import Synchronization
import Testing
import TestSupport
import VoiceCall

/// What the app does to a call: hold and resume, mute, and decline with a status of its choice.
@Suite("Call control", .serialized)
struct CallControlTests {
    @Test("hold() stops the audio and tells the peer; resume() brings both back; an interruption's end does not resume it")
    func holdAndResume() async throws {
        let alice = try Phone("alice"), bob = try Phone("bob")
        let bobHolds = Mutex<[Bool]>([])
        let watcher = Task {
            for await event in bob.controller.events { if case let .peerHold(_, held) = event { bobHolds.withLock { $0.append(held) } } }
        }
        defer { watcher.cancel() }
        let (call, theirs) = try await alice.call(bob)
        #expect(await eventually { await theirs.statistics.packetsReceived > 20 })
        let holdStart = MonotonicClock.nanoseconds()
        try await call.hold()
        #expect(call.state == .held(.local))
        #expect(await eventually { bobHolds.withLock { $0 } == [true] })
        // Silence at the peer: no more packets arrive from us.
        var last = await theirs.statistics.packetsReceived, quietSince = MonotonicClock.nanoseconds()
        while MonotonicClock.nanoseconds() - quietSince < 300_000_000 {
            try await Task.sleep(for: .milliseconds(10))
            let now = await theirs.statistics.packetsReceived
            if now != last { (last, quietSince) = (now, MonotonicClock.nanoseconds()) }
        }
        let holdToSilence = Double(quietSince - holdStart) / 1e6
        // An interruption that begins and ends meanwhile leaves the call on hold.
        let phone = alice.system.makeSession(name: "phone", priority: .phoneCall)
        try phone.setCategory(.playAndRecord, mode: .voiceChat)
        try phone.setActive(true)
        try phone.setActive(false, options: .notifyOthersOnDeactivation)
        try await Task.sleep(for: .milliseconds(200))
        #expect(call.state == .held(.local))
        let resumeStart = MonotonicClock.nanoseconds()
        try await call.resume()
        #expect(call.state == .active)
        #expect(await eventually { await theirs.statistics.packetsReceived > last })
        let resumeToAudio = Double(MonotonicClock.nanoseconds() - resumeStart) / 1e6
        #expect(await eventually { bobHolds.withLock { $0 } == [true, false] })
        await #expect(throws: CallError.self) { try await call.resume() }  // not held
        print("hold to silence at the peer \(holdToSilence) ms; resume to audio \(resumeToAudio) ms")
        await call.hangUp()
        await alice.shutdown(); await bob.shutdown()
    }

    @Test("A muted call sends silence while the voice processing goes on; unmuted, the microphone again")
    func mute() async throws {
        let alice = try Phone("alice") { $0.recordUplinkSeconds = 6 }, bob = try Phone("bob")
        let (call, _) = try await alice.call(bob)
        try await Task.sleep(for: .milliseconds(500))
        await call.setMuted(true)
        #expect(call.isMuted)
        let mutedAt = await alice.controller.recordedUplink(of: call).count
        try await Task.sleep(for: .milliseconds(500))
        let during = await alice.controller.recordedUplink(of: call)
        await call.setMuted(false)
        try await Task.sleep(for: .milliseconds(500))
        let after = await alice.controller.recordedUplink(of: call)
        let skip = 16000 / 25  // periods already under way when the flag changed
        // Slices that cannot trap: a loaded machine may have recorded little.
        #expect(during.count > mutedAt + skip && during.dropFirst(mutedAt + skip).allSatisfy { $0 == 0 })
        #expect(after.dropFirst(during.count).contains { $0 != 0 })
        #expect(during[..<mutedAt].contains { $0 != 0 })
        await call.hangUp()
        await alice.shutdown(); await bob.shutdown()
    }

    @Test("The defaults work together: a controller made with the default configuration and no session drives the sound card")
    func defaultsWorkTogether() throws {
        let controller = try CallController(configuration: CallConfiguration(sipAddress: "127.0.0.1:0"))
        #expect(controller.session.system.hardware is ALSAAudioHardware)
        var files = CallConfiguration(sipAddress: "127.0.0.1:0")
        files.audio = .device { _ in throw CallError.media("unused") }
        #expect(try CallController(configuration: files).session === AudioSession.shared)
    }

    @Test("reject(status:) sends the status asked for, and each end carries it; a status that is not a final error sends nothing", arguments: [
        (603, CallEndReason.busy(SIPFinalResponse(status: 603, reason: "Decline"))),
        (480, .noAnswer(SIPFinalResponse(status: 480, reason: "Temporarily Unavailable"))),
        (404, .refused(SIPFinalResponse(status: 404, reason: "Not Found"))),
    ])
    func rejectWithStatus(status: Int, callerSees: CallEndReason) async throws {
        let alice = try Phone("alice"), bob = try Phone("bob")
        await alice.controller.start()
        await bob.controller.start()
        let rejected = Task { () throws -> Void in
            for await incoming in bob.controller.incomingCalls {
                await #expect(throws: CallError.self) { try await incoming.reject(status: 200) }
                await #expect(throws: CallError.self) { try await incoming.reject(status: 486, reason: "two\r\nlines") }
                #expect(incoming.state == .incomingRinging)
                try await incoming.reject(status: status)
                #expect(await incoming.ended() == .rejected(callerSees.response!))
                return
            }
        }
        let call = try await alice.controller.dial("sip:bob@\(bob.controller.sipAddress)")
        #expect(await call.ended() == callerSees)
        try await rejected.value
        await alice.shutdown(); await bob.shutdown()
    }
}
