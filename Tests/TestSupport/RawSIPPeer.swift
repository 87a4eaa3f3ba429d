public import Platform

public import SIP

/// A bare UDP socket speaking SIP by hand: the peer in transaction and robustness tests.
public final class RawPeer: Sendable {
    public let socket: UDPSocket

    public init() throws {
        socket = try UDPSocket(bindingTo: SocketAddress(host: "127.0.0.1", port: 0))
    }

    public var port: UInt16 { socket.localAddress.port }

    public func send(_ text: String, to address: SocketAddress) {
        socket.send(Array(text.utf8), to: address)
    }

    public func send(_ bytes: [UInt8], to address: SocketAddress) {
        socket.send(bytes, to: address)
    }

    /// The next datagram within `timeout` (polling, so no cooperative thread blocks).
    public func receive(timeout: Duration = patientWait) async -> (bytes: [UInt8], source: SocketAddress)? {
        let deadline = ContinuousClock.now + timeout
        var buffer = [UInt8](repeating: 0, count: 65_536)
        repeat {
            let result = buffer.withUnsafeMutableBytes { socket.receiveNow(into: $0) }
            if case .datagram(let length, let source, _) = result { return (Array(buffer[..<length]), source) }
            try? await Task.sleep(for: .milliseconds(2))
        } while ContinuousClock.now < deadline
        return nil
    }

    /// The next parsed message within `timeout`.
    public func receiveMessage(timeout: Duration = patientWait) async -> SIPMessage? {
        guard let (bytes, _) = await receive(timeout: timeout) else { return nil }
        return try? SIPMessage(parsing: bytes)
    }

    /// The next response within `timeout` for which `condition` holds, skipping anything else.
    public func receiveResponse(timeout: Duration = patientWait,
                         where condition: (SIPResponse) -> Bool = { _ in true }) async -> SIPResponse? {
        let deadline = ContinuousClock.now + timeout
        repeat {
            if case .response(let r)? = await receiveMessage(timeout: max(deadline - ContinuousClock.now, .zero)),
               condition(r) {
                return r
            }
        } while ContinuousClock.now < deadline
        return nil
    }

    /// The next response to a request with this CSeq method (and number, when given).
    public func receiveResponse(to method: SIPMethod, cseq: UInt32? = nil, timeout: Duration = patientWait) async -> SIPResponse? {
        await receiveResponse(timeout: timeout) { response in
            guard let c = try? response.headers.cseq() else { return false }
            return c.method == method && (cseq == nil || c.sequence == cseq)
        }
    }

    /// Everything that arrives until nothing has come for `idle`.
    public func drain(idle: Duration = .milliseconds(100)) async -> [SIPMessage] {
        var messages: [SIPMessage] = []
        while let (bytes, _) = await receive(timeout: idle) {
            if let m = try? SIPMessage(parsing: bytes) { messages.append(m) }
        }
        return messages
    }

    /// Collects messages until `count` have arrived or `timeout` passes.
    public func collect(_ count: Int, timeout: Duration = patientWait) async -> [SIPMessage] {
        var messages: [SIPMessage] = []
        let deadline = ContinuousClock.now + timeout
        while messages.count < count, ContinuousClock.now < deadline {
            if let m = await receiveMessage(timeout: deadline - ContinuousClock.now) { messages.append(m) }
        }
        return messages
    }
}

/// A request as a test peer writes it (CRLF line ends, Content-Length computed).
public func sipText(_ lines: [String], body: String = "") -> String {
    var text = lines.joined(separator: "\r\n") + "\r\n"
    if !lines.contains(where: { $0.lowercased().hasPrefix("content-length") || $0.hasPrefix("l:") }) {
        text += "Content-Length: \(body.utf8.count)\r\n"
    }
    return text + "\r\n" + body
}
