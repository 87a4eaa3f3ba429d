import Testing
@testable import VoiceCall

/// The streams behind `CallController.events` and `incomingCalls`: every reader gets every
/// value, a reader that never reads costs a bounded buffer, and late readers get what replays.
@Suite("Event broadcast")
struct BroadcastTests {
    static func drain(_ stream: AsyncStream<Int>) async -> [Int] {
        var values: [Int] = []
        for await value in stream { values.append(value) }
        return values
    }

    @Test("Two readers each get every value, in order")
    func everyReaderGetsEverything() async {
        let broadcast = Broadcast<Int>(limit: 64)
        let a = broadcast.subscribe(), b = broadcast.subscribe()
        for v in 0..<10 { broadcast.yield(v) }
        broadcast.finish()
        #expect(await Self.drain(a) == Array(0..<10))
        #expect(await Self.drain(b) == Array(0..<10))
    }

    @Test("A reader that never reads keeps only the newest values; the others are not held back")
    func unreadReaderIsBounded() async {
        let broadcast = Broadcast<Int>(limit: 8)
        let idle = broadcast.subscribe(), reader = broadcast.subscribe()
        let collected = Task { await Self.drain(reader) }
        for v in 0..<1000 { broadcast.yield(v) }
        broadcast.finish()
        #expect(await Self.drain(idle) == Array(992..<1000))
        #expect(await collected.value.count >= 8)
    }

    @Test("A late subscriber gets the recent values that still replay, then the new ones; after finish, nothing")
    func lateSubscriberAndFinish() async {
        let broadcast = Broadcast<Int>(limit: 4) { $0 % 2 == 0 }
        for v in 1...6 { broadcast.yield(v) }  // recent: 3, 4, 5, 6; 4 and 6 replay
        let late = broadcast.subscribe()
        broadcast.yield(7)
        broadcast.finish()
        #expect(await Self.drain(late) == [4, 6, 7])
        #expect(await Self.drain(broadcast.subscribe()) == [])
    }
}
