import Synchronization

/// Delivers each value to every subscriber, each through its own stream that keeps the newest
/// ``limit`` values when its reader falls behind: any number of readers, none of which can make
/// the others miss a value or grow memory without bound.
///
/// A new subscriber first gets the recent values that `replays` still holds for (the calls
/// still ringing, for ``CallController/incomingCalls``), so a reader that subscribes just after
/// a value came does not miss it.
///
/// Thread safety: safe from any thread; a leaf lock, never held while a value is delivered.
final class Broadcast<Value: Sendable>: Sendable {
    private struct State {
        var nextID = 0
        var subscribers: [Int: AsyncStream<Value>.Continuation] = [:]
        var recent: [Value] = []
        var finished = false
    }

    /// Values each subscriber's stream keeps while its reader is behind.
    let limit: Int
    private let replays: @Sendable (Value) -> Bool
    private let state = Mutex(State())

    init(limit: Int, replays: @escaping @Sendable (Value) -> Bool = { _ in false }) {
        self.limit = limit
        self.replays = replays
    }

    /// A new stream of every value from now on (after the recent ones that still replay);
    /// it finishes when ``finish()`` is called, at once if it was.
    func subscribe() -> AsyncStream<Value> {
        let (stream, continuation) = AsyncStream.makeStream(of: Value.self, bufferingPolicy: .bufferingNewest(limit))
        let (id, recent) = state.withLock { s -> (Int?, [Value]) in
            guard !s.finished else { return (nil, []) }
            s.nextID += 1
            s.subscribers[s.nextID] = continuation
            return (s.nextID, s.recent)
        }
        guard let id else {
            continuation.finish()
            return stream
        }
        for value in recent where replays(value) { continuation.yield(value) }
        continuation.onTermination = { [weak self] _ in self?.state.withLock { _ = $0.subscribers.removeValue(forKey: id) } }
        return stream
    }

    /// Delivers `value` to every subscriber.
    func yield(_ value: Value) {
        let subscribers = state.withLock { s -> [AsyncStream<Value>.Continuation] in
            s.recent.append(value)
            if s.recent.count > limit { s.recent.removeFirst(s.recent.count - limit) }
            return Array(s.subscribers.values)
        }
        for subscriber in subscribers { subscriber.yield(value) }
    }

    /// Finishes every stream, and every later subscription at once.
    func finish() {
        let subscribers = state.withLock { s -> [AsyncStream<Value>.Continuation] in
            s.finished = true
            s.recent = []
            defer { s.subscribers = [:] }
            return Array(s.subscribers.values)
        }
        for subscriber in subscribers { subscriber.finish() }
    }
}
