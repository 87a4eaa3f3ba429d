import Platform
import Testing
import TestSupport
@testable import Janus

/// The AudioBridge client against Debian's Janus on loopback (Tools/janus/run).
@Suite("AudioBridge client, with Janus", .serialized)
struct AudioBridgeClientTestsWithJanus {
    @Test("Create a room, join it over plain RTP, see ourselves listed, mute, leave and close")
    func roomLifecycle() async throws {
        let client = try await AudioBridgeClient.connect(to: try #require(JanusServer.url, Comment(rawValue: JanusServer.missing)))
        let room = JanusServer.newRoom()
        #expect(try await client.exists(room: room) == false)
        try await client.create(room: room, description: "test")
        #expect(try await client.exists(room: room))
        await #expect(throws: JanusError.self) { try await client.create(room: room, description: "again") }

        let socket = try UDPSocket(bindingTo: SocketAddress(host: "127.0.0.1", port: 0))
        let joined = try await client.join(room: room, display: "tester", host: "127.0.0.1", port: socket.localAddress.port)
        #expect(joined.participants.isEmpty)
        #expect((21000...21999).contains(joined.rtpPort), "the shipped configuration's rtp_port_range")
        #expect(joined.rtpHost == "127.0.0.1" && joined.payloadType == 111)
        var listed = try await client.participants(room: room)
        #expect(listed.map(\.id) == [joined.participantID] && listed.first?.display == "tester" && listed.first?.muted == false)

        try await client.configure(muted: true, expectedLoss: 10)
        listed = try await client.participants(room: room)
        #expect(listed.first?.muted == true)
        try await client.leave()
        #expect(try await client.participants(room: room).isEmpty)
        await client.close()
        await #expect(throws: JanusError.closed) { try await client.exists(room: room) }
        await client.close()  // twice: nothing
    }

    @Test("A room that does not exist, and one without plain-RTP participants, refuse the join with AudioBridge's error")
    func refusedJoins() async throws {
        let client = try await AudioBridgeClient.connect(to: try #require(JanusServer.url, Comment(rawValue: JanusServer.missing)))
        defer { Task { await client.close() } }
        do {
            _ = try await client.join(room: JanusServer.newRoom(), display: nil, host: "127.0.0.1", port: 40000)
            Issue.record("joined a room that does not exist")
        } catch let error {
            guard case let .audioBridge(code, _) = error else { Issue.record("\(error)"); return }
            #expect(code == 485)
        }
        do {
            _ = try await client.join(room: JanusServer.webRTCOnlyRoom, display: nil, host: "127.0.0.1", port: 40000)
            Issue.record("joined a room without plain-RTP participants")
        } catch let error {
            guard case .audioBridge = error else { Issue.record("\(error)"); return }
            print("a room without plain-RTP participants: \(error)")
        }
    }

    @Test("Another participant's join and leave come as events")
    func events() async throws {
        let url = try #require(JanusServer.url, Comment(rawValue: JanusServer.missing))
        let (watcher, other) = (try await AudioBridgeClient.connect(to: url), try await AudioBridgeClient.connect(to: url))
        let room = JanusServer.newRoom()
        try await watcher.create(room: room, description: "events")
        _ = try await watcher.join(room: room, display: "watcher", host: "127.0.0.1", port: 40002)
        let seen = Task { () -> [AudioBridgeEvent] in
            var seen: [AudioBridgeEvent] = []
            for await event in watcher.events {
                seen.append(event)
                if case .left = event { break }
            }
            return seen
        }
        let joined = try await other.join(room: room, display: "other", host: "127.0.0.1", port: 40004)
        try await other.leave()
        let events = await seen.value
        #expect(events.contains { if case let .participants(list) = $0 { list.contains { $0.id == joined.participantID && $0.display == "other" } } else { false } })
        #expect(events.contains(.left(joined.participantID)))
        await other.close()
        await watcher.close()
    }
}
