import AudioAnalysis
import AudioSession
import Simulation
import WAV
import Janus
import Testing
import TestSupport
import VoiceCall
import VoiceProcessing

/// Conference legs in a Janus AudioBridge room (Debian's Janus on loopback, Tools/janus/run).
@Suite("Conference rooms, with Janus", .serialized)
struct ConferenceRoomTestsWithJanus {
    static let plain: @Sendable (inout CallConfiguration) -> Void = { $0.voiceProcessing.mode = .other }

    static func janus() throws -> String { try #require(JanusServer.url, Comment(rawValue: JanusServer.missing)) }

    @Test("Three phones join one room: each hears the other two and not itself, the room lists all three, and each leaves with its session inactive")
    func threeInARoom() async throws {
        let room = ConferenceRoom(server: try Self.janus(), room: JanusServer.newRoom(), createsRoom: true)
        let phones = try [("alice", 300.0), ("bob", 440), ("carol", 550)].map { try Phone($0.0, tone: $0.1, echo: 0, configure: Self.plain) }
        var calls: [Call] = []
        for phone in phones {
            var mine = room
            mine.display = phone.session.name
            calls.append(try await phone.controller.join(mine))
            #expect(calls.last?.state == .active && phone.session.isActive)
        }
        try await Task.sleep(for: .seconds(3))
        let listed = try await calls[0].roomParticipants()
        #expect(Set(listed.compactMap(\.display)) == ["alice", "bob", "carol"])
        let heard = try phones.map { try ConferenceCallTests.heard(by: $0) }
        print("Janus room: alice hears \(heard[0]), bob \(heard[1]), carol \(heard[2]) (dBFS at 300, 440, 550 Hz)")
        for (phone, own) in zip(heard, [300.0, 440, 550]) {
            for tone in [300.0, 440, 550] where tone != own { #expect(phone[tone]! > -45, "\(tone) Hz: \(phone)") }
            #expect(phone[own]! < -55, "its own \(own) Hz: \(phone)")
        }
        let statistics = await calls[0].statistics
        #expect(statistics.packetsReceived > 100 && statistics.concealedWithoutLossMs < 100)
        for (phone, call) in zip(phones, calls) {
            await call.hangUp()
            #expect(await call.ended() == .localHangUp)
            #expect(await eventually { !phone.session.isActive })
        }
        #expect(await eventually { (try? await JanusRoomProbe.participants(room)) == [] })
        for phone in phones { await phone.shutdown() }
    }

    @Test("Join to first audio within 500 ms; mouth to ear through Janus's mixer measured from one leg's talker to another's loudspeaker")
    func latency() async throws {
        let room = ConferenceRoom(server: try Self.janus(), room: JanusServer.newRoom(), createsRoom: true)
        let speech = try Fixtures.speech(Fixtures.englishMale).samples
        let talker = try Phone("talker", talker: speech, echo: 0, configure: Self.plain)
        let listener = try Phone("listener", talker: [Float](repeating: 0, count: 16000), echo: 0, configure: Self.plain)
        let first = try await talker.controller.join(room)
        let started = ContinuousClock.now
        let second = try await listener.controller.join(room)
        while await second.statistics.packetsReceived == 0, started.duration(to: .now) < .seconds(2) {
            try await Task.sleep(for: .milliseconds(2))
        }
        let firstAudio = started.duration(to: .now)
        print("Janus room: join to first audio \(firstAudio)")
        #expect(firstAudio <= .milliseconds(500))
        try await Task.sleep(for: .seconds(8))
        await second.hangUp(); await first.hangUp()
        let (spoke, heard) = (try #require(talker.newestDevice), try #require(listener.newestDevice))
        let offset = Double(Int64(bitPattern: heard.startTimeNanoseconds &- spoke.startTimeNanoseconds)) / 1e6
        let said = spoke.spokenNearSpeech, played = heard.recording.played
        let half = min(said.count, played.count) / 2
        let aligned = Alignment.find(reference: Array(said[half...]), test: Array(played[half...]), maxLag: 16000)
        let mouthToEar = Double(aligned.lag) / 16 + offset
        print("Janus room: mouth to ear \(mouthToEar) ms (correlation \(aligned.correlation)); the talker's side: processing \(await first.statistics.processingLatencyMs) ms, the listener's jitter buffer \(await second.statistics.jitterBufferDelayMs) ms")
        #expect(aligned.correlation > 0.3 && mouthToEar > 0 && mouthToEar < 400)
        await talker.shutdown(); await listener.shutdown()
    }

    @Test("A SIP call and a room leg in one controller: joining the room holds the call, resuming the call mutes us in the room, and both end cleanly")
    func besideASIPCall() async throws {
        let room = ConferenceRoom(server: try Self.janus(), room: JanusServer.newRoom(), createsRoom: true, display: "alice")
        let alice = try Phone("alice", tone: 300, echo: 0, configure: Self.plain)
        let bob = try Phone("bob", tone: 440, echo: 0, configure: Self.plain)
        let carol = try Phone("carol", tone: 550, echo: 0, configure: Self.plain)
        let (withBob, bobsCall) = try await alice.call(bob)
        var carols = room
        carols.display = "carol"
        let carolsLeg = try await carol.controller.join(carols)
        let leg = try await alice.controller.join(room)
        #expect(withBob.state == .held(.local), "the room took the audio")
        #expect(bobsCall.state == .active)
        try await Task.sleep(for: .seconds(2.5))
        let carolHears = try ConferenceCallTests.heard(by: carol)
        #expect(carolHears[300]! > -45, "carol hears alice through the room: \(carolHears)")

        try await withBob.resume()
        #expect(leg.state == .held(.local))
        #expect(await eventually { (try? await leg.roomParticipants())?.first { $0.display == "alice" }?.muted == true },
                "the held leg is muted in the room")
        try await Task.sleep(for: .seconds(2))
        let bobHears = try ConferenceCallTests.heard(by: bob)
        #expect(bobHears[300]! > -45, "bob hears alice again: \(bobHears)")
        await leg.hangUp()
        await withBob.hangUp()
        #expect(await bobsCall.ended() == .remoteHangUp)
        await carolsLeg.hangUp()
        #expect(await eventually { !alice.session.isActive && !carol.session.isActive })
        await alice.shutdown(); await bob.shutdown(); await carol.shutdown()
    }

    @Test("Unreachable Janus, a room that does not exist, a room without plain RTP: a conference error, no call, the session inactive")
    func refused() async throws {
        let janus = try Self.janus()
        let phone = try Phone("alice", configure: Self.plain)
        for room in [ConferenceRoom(server: "http://127.0.0.1:1/janus", room: 1234),
                     ConferenceRoom(server: janus, room: JanusServer.newRoom()),
                     ConferenceRoom(server: janus, room: JanusServer.webRTCOnlyRoom)] {
            do {
                _ = try await phone.controller.join(room)
                Issue.record("joined \(room)")
            } catch let error {
                guard case let .conference(why) = error else { Issue.record("\(error)"); continue }
                print("join \(room.server) room \(room.room): \(why)")
            }
            #expect(await phone.controller.calls.isEmpty)
            #expect(!phone.session.isActive)
        }
        await #expect(throws: CallError.self) { _ = try await phone.controller.join(ConferenceRoom(server: "ftp://x", room: 1)) }
        await phone.shutdown()
    }
}

/// The room's participants as a separate Janus session sees them.
enum JanusRoomProbe {
    static func participants(_ room: ConferenceRoom) async throws -> [AudioBridgeParticipant] {
        let client = try await AudioBridgeClient.connect(to: room.server)
        defer { Task { await client.close() } }
        return try await client.participants(room: room.room)
    }
}
