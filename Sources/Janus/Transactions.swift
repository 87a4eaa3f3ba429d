import Synchronization

/// Replies that come later, on the long poll: a request registers its transaction before it is
/// sent (the event may arrive before the POST's own reply), then waits for it.
///
/// Thread safety: safe from any thread; a leaf lock.
final class Transactions: Sendable {
    private enum Slot {
        case expected
        case arrived(JanusMessage)
        case waiting(CheckedContinuation<Result<JanusMessage, JanusError>, Never>)
    }

    private let slots = Mutex<[String: Slot]>([:])
    private let closed = Atomic<Bool>(false)

    /// Expects a reply to `transaction`.
    func expect(_ transaction: String) { slots.withLock { $0[transaction] = .expected } }

    /// Hands `message` to whoever expects its transaction; false when nobody does.
    func deliver(_ message: JanusMessage) -> Bool {
        guard let transaction = message.transaction else { return false }
        let waiter: CheckedContinuation<Result<JanusMessage, JanusError>, Never>? = slots.withLock { slots in
            switch slots[transaction] {
            case .expected:
                slots[transaction] = .arrived(message)
                return nil
            case let .waiting(continuation):
                slots[transaction] = nil
                return continuation
            case .arrived, nil:
                return nil
            }
        }
        if let waiter { waiter.resume(returning: .success(message)); return true }
        return slots.withLock { $0[transaction] != nil }
    }

    /// The reply to `transaction`, or `unreachable` after `timeout`, or `closed`.
    func wait(for transaction: String, timeout: Duration) async throws(JanusError) -> JanusMessage {
        let timer = Task { [weak self] in
            try? await Task.sleep(for: timeout)
            self?.fail(transaction, .unreachable("no reply to a request within \(timeout)"))
        }
        defer { timer.cancel() }
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<JanusMessage, JanusError>, Never>) in
            let early: Result<JanusMessage, JanusError>? = slots.withLock { slots in
                if closed.load(ordering: .acquiring) { return .failure(.closed) }
                if case let .arrived(message) = slots[transaction] {
                    slots[transaction] = nil
                    return .success(message)
                }
                slots[transaction] = .waiting(continuation)
                return nil
            }
            if let early { continuation.resume(returning: early) }
        }
        return try result.get()
    }

    /// Gives up on `transaction` with `error`.
    func fail(_ transaction: String, _ error: JanusError) {
        let waiter: CheckedContinuation<Result<JanusMessage, JanusError>, Never>? = slots.withLock { slots in
            defer { slots[transaction] = nil }
            if case let .waiting(continuation) = slots[transaction] { return continuation }
            return nil
        }
        waiter?.resume(returning: .failure(error))
    }

    /// Stops expecting `transaction` (its reply came with the request's own).
    func forget(_ transaction: String) { slots.withLock { $0[transaction] = nil } }

    /// Fails every request waiting, and any later one, with `closed`.
    func close() {
        closed.store(true, ordering: .releasing)
        let waiters = slots.withLock { slots in
            defer { slots.removeAll() }
            return slots.values.compactMap { slot -> CheckedContinuation<Result<JanusMessage, JanusError>, Never>? in
                if case let .waiting(continuation) = slot { return continuation }
                return nil
            }
        }
        for waiter in waiters { waiter.resume(returning: .failure(.closed)) }
    }
}
