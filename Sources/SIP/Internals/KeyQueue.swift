/// Keys in arrival order, oldest first, for forgetting the oldest of something. Keys are not
/// removed when their entry goes away by itself; ``compact(keeping:)`` drops those now and then.
///
/// Thread safety: a value type, used under the user agent's lock.
struct KeyQueue<Key: Hashable & Sendable>: Sendable {
    private var keys: [Key] = []
    private var head = 0

    var count: Int { keys.count - head }

    mutating func append(_ key: Key) { keys.append(key) }

    mutating func popFirst() -> Key? {
        guard head < keys.count else { return nil }
        defer {
            head += 1
            if head > 64, head * 2 > keys.count {
                keys.removeFirst(head)
                head = 0
            }
        }
        return keys[head]
    }

    /// Keeps the keys for which `isLive` holds, in order. Linear: call it when the queue has
    /// grown to a multiple of what can be live, so its cost per key stays constant.
    mutating func compact(keeping isLive: (Key) -> Bool) {
        keys = keys[head...].filter(isLive)
        head = 0
    }
}
