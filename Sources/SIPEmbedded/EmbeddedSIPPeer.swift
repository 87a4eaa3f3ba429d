public import Platform
public import SIP
import Synchronization

/// An endpoint of an ``EmbeddedSIPNetwork`` that speaks SIP by hand: the peer in transaction
/// and robustness tests, and the attacker in reflection tests (it may send from any address).
///
/// What reaches it waits in order until taken. The `receive` functions return what has already
/// arrived; with `within:` they first move the network's time forward, timer by timer, until
/// something arrives or that much virtual time has passed.
///
/// It holds its network (which holds its peers and agents weakly).
///
/// Thread safety: safe from any thread.
public final class EmbeddedSIPPeer: Sendable {
    /// Where it is bound.
    public let address: SocketAddress
    private let network: EmbeddedSIPNetwork?
    private let inbox = Mutex<Inbox>(Inbox())

    private struct Inbox {
        var datagrams: [(bytes: [UInt8], source: SocketAddress)] = []
        var waiters: [CheckedContinuation<Bool, Never>] = []

        mutating func wakeAll(_ result: Bool) {
            for waiter in waiters { waiter.resume(returning: result) }
            waiters.removeAll()
        }
    }

    init(network: EmbeddedSIPNetwork, address: SocketAddress) {
        self.network = network
        self.address = address
    }

    public var port: UInt16 { address.port }

    /// How many datagrams wait to be taken.
    public var pending: Int { inbox.withLock { $0.datagrams.count } }

    /// Sends `text` to `destination`, from this peer's address or a spoofed `source`; the
    /// receiver's answers are delivered before it returns.
    public func send(_ text: String, to destination: SocketAddress, from source: SocketAddress? = nil) {
        send(Array(text.utf8), to: destination, from: source)
    }

    public func send(_ bytes: [UInt8], to destination: SocketAddress, from source: SocketAddress? = nil) {
        network?.transmit(bytes, from: source ?? address, to: destination)
    }

    func arrived(_ bytes: [UInt8], from source: SocketAddress) {
        inbox.withLock { inbox in
            inbox.datagrams.append((bytes, source))
            inbox.wakeAll(true)
        }
    }

    /// The oldest datagram not yet taken, after moving time forward by up to `within` for one
    /// to arrive.
    public func receive(within duration: Duration = .zero) -> (bytes: [UInt8], source: SocketAddress)? {
        if pending == 0, duration > .zero { network?.advance(by: duration) { pending > 0 } }
        return inbox.withLock { $0.datagrams.isEmpty ? nil : $0.datagrams.removeFirst() }
    }

    /// Waits until a datagram is waiting to be taken: for one that an async API sends from
    /// another task (`SIPUserAgent.register(at:expires:)`). Time does not move. `timeout` is
    /// wall-clock time, a bound for a test that fails; returns false at it.
    public func waitForDatagram(timeout: Duration = .seconds(10)) async -> Bool {
        let watchdog = Task { [self] in
            try? await Task.sleep(for: timeout)
            inbox.withLock { $0.wakeAll(false) }
        }
        defer { watchdog.cancel() }
        return await withCheckedContinuation { continuation in
            inbox.withLock { inbox in
                if inbox.datagrams.isEmpty { inbox.waiters.append(continuation) } else { continuation.resume(returning: true) }
            }
        }
    }

    /// The oldest message not yet taken (unparsable datagrams are skipped).
    public func receiveMessage(within duration: Duration = .zero) -> SIPMessage? {
        while let (bytes, _) = receive(within: duration) {
            if let message = try? SIPMessage(parsing: bytes) { return message }
        }
        return nil
    }

    /// The next response for which `condition` holds, skipping anything else, moving time by up
    /// to `within` in all.
    public func receiveResponse(within duration: Duration = .zero,
                                where condition: (SIPResponse) -> Bool = { _ in true }) -> SIPResponse? {
        let end = (network?.elapsed ?? .zero) + duration
        repeat {
            let left = max(end - (network?.elapsed ?? end), .zero)
            guard let message = receiveMessage(within: left) else { return nil }
            if case .response(let response) = message, condition(response) { return response }
        } while true
    }

    /// The next response to a request with this CSeq method (and number, when given).
    public func receiveResponse(to method: SIPMethod, cseq: UInt32? = nil, within duration: Duration = .zero) -> SIPResponse? {
        receiveResponse(within: duration) { response in
            guard let c = try? response.headers.cseq() else { return false }
            return c.method == method && (cseq == nil || c.sequence == cseq)
        }
    }

    /// The next request with this method, skipping anything else.
    public func receiveRequest(_ method: SIPMethod, within duration: Duration = .zero) -> SIPRequest? {
        let end = (network?.elapsed ?? .zero) + duration
        repeat {
            let left = max(end - (network?.elapsed ?? end), .zero)
            guard let message = receiveMessage(within: left) else { return nil }
            if case .request(let request) = message, request.method == method { return request }
        } while true
    }

    /// Every message that has arrived and was not taken.
    public func drain() -> [SIPMessage] {
        var messages: [SIPMessage] = []
        while let message = receiveMessage() { messages.append(message) }
        return messages
    }

    /// Messages until `count` have arrived, moving time by up to `within` in all.
    public func collect(_ count: Int, within duration: Duration) -> [SIPMessage] {
        var messages: [SIPMessage] = []
        let end = (network?.elapsed ?? .zero) + duration
        while messages.count < count {
            let left = max(end - (network?.elapsed ?? end), .zero)
            guard let message = receiveMessage(within: left) else { break }
            messages.append(message)
        }
        return messages
    }

    /// Stops receiving: the address is free again.
    public func close() { network?.unbind(address) }
}
