import Glibc

/// A socket error: the `errno` value and what was being done.
///
/// Thread safety: a value type; safe to use from any thread.
public struct SocketError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The `errno` value (`EINVAL` for an address that does not parse).
    public let code: Int32
    public let message: String

    public init(code: Int32, detail: String) {
        self.code = code
        message = "\(detail): \(String(cString: strerror(code)))"
    }

    public var description: String { message }

    public static func == (a: SocketError, b: SocketError) -> Bool { a.code == b.code }

    /// The last `errno`, for `detail`.
    static func last(_ detail: String) -> SocketError { SocketError(code: errno, detail: detail) }
}

/// An IPv4 or IPv6 address and UDP port.
///
/// Stored inline (a `sockaddr_storage`), so passing one to `UDPSocket/send(_:to:)`
/// does not allocate.
///
/// Thread safety: a value type; safe to use from any thread.
public struct SocketAddress: Sendable, Hashable, CustomStringConvertible {
    public enum Family: Sendable, Equatable {
        case ipv4, ipv6
    }

    var storage = sockaddr_storage()

    init(storage: sockaddr_storage) { self.storage = storage }

    /// The address as its first four 64-bit words (a `sockaddr_in6` is 28 bytes): what a
    /// lock-free hand-over between threads stores in atomics.
    package var words: [4 of UInt64] {
        withUnsafeBytes(of: storage) { raw in
            [4 of UInt64] { raw.loadUnaligned(fromByteOffset: 8 * $0, as: UInt64.self) }
        }
    }

    /// An address from its ``words``.
    package init(words: [4 of UInt64]) {
        withUnsafeMutableBytes(of: &storage) { raw in
            for w in 0..<4 { raw.storeBytes(of: words[w], toByteOffset: 8 * w, as: UInt64.self) }
        }
    }

    /// An address from a numeric IPv4 or IPv6 host (or a name such as `localhost`) and a port.
    ///
    /// - Parameter host: a numeric address or a name.
    /// - Parameter port: the UDP port.
    /// - Parameter family: when given, only an address of that family will do (a name such as
    ///   `localhost` may list `::1` first, where an IPv4 socket needs `127.0.0.1`).
    /// - Throws: ``SocketError`` with `EINVAL` when the host does not resolve (in `family`).
    ///
    /// The corresponding C function is `getaddrinfo`.
    public init(host: String, port: UInt16, family: Family? = nil) throws(SocketError) {
        var hints = addrinfo()
        hints.ai_family = switch family {
        case nil: AF_UNSPEC
        case .ipv4: AF_INET
        case .ipv6: AF_INET6
        }
        hints.ai_socktype = Int32(SOCK_DGRAM.rawValue)
        hints.ai_flags = AI_NUMERICSERV
        var result: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &result)
        guard status == 0, let info = result, let address = info.pointee.ai_addr else {
            throw SocketError(code: EINVAL, detail: "cannot resolve host '\(host)'")
        }
        defer { freeaddrinfo(result) }
        withUnsafeMutableBytes(of: &storage) { dst in
            dst.copyMemory(from: UnsafeRawBufferPointer(start: address, count: Int(info.pointee.ai_addrlen)))
        }
    }

    /// Parses `HOST:PORT`, with IPv6 hosts in brackets (`[::1]:5004`).
    public init(parsing text: String) throws(SocketError) {
        let host: Substring, portText: Substring
        if text.hasPrefix("["), let close = text.firstIndex(of: "]") {
            host = text[text.index(after: text.startIndex)..<close]
            let rest = text[text.index(after: close)...]
            guard rest.hasPrefix(":") else { throw SocketError(code: EINVAL, detail: "'\(text)' needs [HOST]:PORT") }
            portText = rest.dropFirst()
        } else if let colon = text.lastIndex(of: ":"), text.firstIndex(of: ":") == colon {
            host = text[..<colon]
            portText = text[text.index(after: colon)...]
        } else {
            throw SocketError(code: EINVAL, detail: "'\(text)' is not HOST:PORT (IPv6 as [HOST]:PORT)")
        }
        guard let port = UInt16(portText), !host.isEmpty else {
            throw SocketError(code: EINVAL, detail: "'\(text)' is not HOST:PORT with a port 0 ... 65535")
        }
        try self.init(host: String(host), port: port)
    }

    public var family: Family { Int32(storage.ss_family) == AF_INET6 ? .ipv6 : .ipv4 }

    /// The port.
    public var port: UInt16 {
        get {
            withUnsafeBytes(of: storage) { raw in
                UInt16(bigEndian: raw.loadUnaligned(fromByteOffset: 2, as: UInt16.self))  // sin_port and sin6_port
            }
        }
        set {
            withUnsafeMutableBytes(of: &storage) { raw in
                raw.storeBytes(of: newValue.bigEndian, toByteOffset: 2, as: UInt16.self)
            }
        }
    }

    /// The same host with another port.
    public func with(port: UInt16) -> SocketAddress {
        var copy = self
        copy.port = port
        return copy
    }

    /// The numeric host.
    public var host: String {
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        withUnsafeBytes(of: storage) { raw in
            let offset = family == .ipv6 ? 8 : 4  // sin6_addr, sin_addr
            _ = inet_ntop(Int32(storage.ss_family), raw.baseAddress! + offset, &text, socklen_t(text.count))
        }
        return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    public var description: String { family == .ipv6 ? "[\(host)]:\(port)" : "\(host):\(port)" }

    var length: socklen_t {
        socklen_t(family == .ipv6 ? MemoryLayout<sockaddr_in6>.size : MemoryLayout<sockaddr_in>.size)
    }

    /// Whether both have the same family and host (ports may differ).
    public func sameHost(as other: SocketAddress) -> Bool {
        guard family == other.family else { return false }
        return withUnsafeBytes(of: storage) { a in
            withUnsafeBytes(of: other.storage) { b in
                let range = family == .ipv6 ? 8..<24 : 4..<8
                return a[range].elementsEqual(b[range])
            }
        }
    }

    /// A network's part of an address, as a dictionary key: the whole host for IPv4, the first
    /// 64 bits for IPv6 (one subscriber's prefix: a limit per IPv6 host would give one
    /// attacker 2^64 keys).
    public struct NetworkPrefix: Sendable, Hashable {
        let high: UInt64
        let low: UInt64
    }

    /// This address's ``NetworkPrefix``.
    public var networkPrefix: NetworkPrefix {
        withUnsafeBytes(of: storage) { raw in
            if family == .ipv6 {
                return NetworkPrefix(high: 6 << 32, low: raw.loadUnaligned(fromByteOffset: 8, as: UInt64.self))
            }
            return NetworkPrefix(high: 4 << 32, low: UInt64(raw.loadUnaligned(fromByteOffset: 4, as: UInt32.self)))
        }
    }

    public static func == (a: SocketAddress, b: SocketAddress) -> Bool {
        a.family == b.family && a.port == b.port && a.sameHost(as: b)
            && (a.family == .ipv4 || a.scopeID == b.scopeID)
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(family == .ipv6)
        hasher.combine(port)
        withUnsafeBytes(of: storage) { raw in
            let range = family == .ipv6 ? 8..<24 : 4..<8
            for byte in raw[range] { hasher.combine(byte) }
        }
    }

    private var scopeID: UInt32 {
        withUnsafeBytes(of: storage) { $0.loadUnaligned(fromByteOffset: 24, as: UInt32.self) }
    }
}

/// What became of a datagram handed to `UDPSocket/send(_:to:)`.
public enum UDPSendResult: Sendable, Equatable {
    case sent
    /// The socket's send buffer is full: the datagram was dropped (the caller never waits).
    case wouldBlock
    /// Any other error, with its `errno` (for example `ECONNREFUSED` after an ICMP port unreachable).
    case failed(Int32)
}

/// What ``UDPSocket/receive(into:timeoutMs:)`` found.
public enum UDPReceiveResult: Sendable, Equatable {
    /// A datagram of `length` bytes from `source`; `truncated` when it did not fit the buffer (the rest is lost).
    case datagram(length: Int, source: SocketAddress, truncated: Bool)
    case timeout
    case failed(Int32)
}

/// A UDP socket (IPv4 or IPv6) bound to a local address.
///
/// Sending never blocks (`MSG_DONTWAIT`): the I/O thread may send directly. Receiving
/// waits with `poll` up to a timeout, for the network thread. The descriptor is
/// closed when the socket goes away.
///
/// Thread safety: safe from any thread. One thread receives while any other sends,
/// as the kernel allows. `send(_:to:)` does not allocate (real-time safe).
public final class UDPSocket: Sendable {
    /// The address the socket is bound to (the actual port when bound to port 0).
    public let localAddress: SocketAddress
    package let descriptor: Int32

    /// Opens a UDP socket and binds it.
    ///
    /// An IPv6 socket is IPv6-only, so `::` and `0.0.0.0` on one port can coexist.
    /// The corresponding C functions are `socket`, `setsockopt` and `bind`.
    public init(bindingTo address: SocketAddress, receiveBufferBytes: Int = 1 << 18) throws(SocketError) {
        let domain = address.family == .ipv6 ? AF_INET6 : AF_INET
        let fd = system_socket(domain, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw .last("socket") }
        if address.family == .ipv6 { _ = system_setsockopt(fd, Int32(IPPROTO_IPV6), IPV6_V6ONLY, 1) }
        _ = system_setsockopt(fd, SOL_SOCKET, SO_RCVBUF, Int32(clamping: receiveBufferBytes))
        localAddress = try bind(fd, to: address)
        descriptor = fd
    }

    deinit { _ = system_close(descriptor) }

    /// The local address the kernel would send from to reach `peer` (its port is an ephemeral
    /// one): what a socket bound to `0.0.0.0` or `::` should advertise to that peer. Found by
    /// connecting a throwaway UDP socket, so nothing is sent; nil when there is no route.
    ///
    /// Thread safety: safe from any thread; it allocates nothing but makes four syscalls.
    /// The corresponding C functions are `socket`, `connect`, `getsockname` and `close`.
    public static func localAddress(toward peer: SocketAddress) -> SocketAddress? {
        let domain = peer.family == .ipv6 ? AF_INET6 : AF_INET
        let fd = system_socket(domain, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return nil }
        defer { _ = system_close(fd) }
        var storage = peer.storage
        let connected = withUnsafePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { system_connect(fd, $0, peer.length) }
        }
        guard connected == 0 else { return nil }
        var local = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let named = withUnsafeMutablePointer(to: &local) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { system_getsockname(fd, $0, &length) }
        }
        return named == 0 ? SocketAddress(storage: local) : nil
    }

    /// Sends one datagram without blocking.
    ///
    /// The corresponding C function is `sendto` with `MSG_DONTWAIT`.
    @discardableResult
    public func send(_ datagram: UnsafeRawBufferPointer, to destination: SocketAddress) -> UDPSendResult {
        var storage = destination.storage
        let n = withUnsafePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                system_sendto(descriptor, datagram.baseAddress, datagram.count, $0, destination.length)
            }
        }
        if n >= 0 { return .sent }
        let code = errno
        return code == EAGAIN || code == EWOULDBLOCK || code == ENOBUFS ? .wouldBlock : .failed(code)
    }

    /// Sends bytes (convenience for tools and tests).
    @discardableResult
    public func send(_ bytes: [UInt8], to destination: SocketAddress) -> UDPSendResult {
        bytes.withUnsafeBytes { send($0, to: destination) }
    }

    /// Waits up to `timeoutMs` for a datagram and reads it into `buffer`.
    ///
    /// The corresponding C functions are `poll` and `recvfrom`.
    public func receive(into buffer: UnsafeMutableRawBufferPointer, timeoutMs: Int) -> UDPReceiveResult {
        var fd = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        let ready = system_poll(&fd, 1, Int32(clamping: timeoutMs))
        if ready < 0 { return .failed(errno) }
        if ready == 0 { return .timeout }
        return receiveNow(into: buffer)
    }

    /// Reads a datagram if one is waiting, without blocking.
    public func receiveNow(into buffer: UnsafeMutableRawBufferPointer) -> UDPReceiveResult {
        var source = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let n = withUnsafeMutablePointer(to: &source) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                system_recvfrom(descriptor, buffer.baseAddress, buffer.count, $0, &length)
            }
        }
        if n < 0 {
            let code = errno
            return code == EAGAIN || code == EWOULDBLOCK ? .timeout : .failed(code)
        }
        return .datagram(length: min(n, buffer.count), source: SocketAddress(storage: source), truncated: n > buffer.count)
    }

    /// As ``waitReadable(_:_:timeoutMs:)``, also waking when `wake` is signalled (third value).
    package static func waitReadable(_ a: UDPSocket, _ b: UDPSocket?, wake: WakeEvent?,
                                     timeoutMs: Int) -> (Bool, Bool, Bool) {
        // poll ignores entries with a negative descriptor.
        var fds = (pollfd(fd: a.descriptor, events: Int16(POLLIN), revents: 0),
                   pollfd(fd: b?.descriptor ?? -1, events: Int16(POLLIN), revents: 0),
                   pollfd(fd: wake?.descriptor ?? -1, events: Int16(POLLIN), revents: 0))
        let n = withUnsafeMutableBytes(of: &fds) { raw in
            system_poll(raw.baseAddress!.assumingMemoryBound(to: pollfd.self), 3, Int32(clamping: timeoutMs))
        }
        guard n > 0 else { return (false, false, false) }
        return (fds.0.revents != 0, fds.1.revents != 0, fds.2.revents != 0)
    }

    /// Waits until one of `sockets` is readable or `timeoutMs` passes.
    ///
    /// - Returns: for each socket, whether it has data.
    package static func waitReadable(_ a: UDPSocket, _ b: UDPSocket?, timeoutMs: Int) -> (Bool, Bool) {
        var fds = (pollfd(fd: a.descriptor, events: Int16(POLLIN), revents: 0),
                   pollfd(fd: b?.descriptor ?? -1, events: Int16(POLLIN), revents: 0))
        let n = withUnsafeMutableBytes(of: &fds) { raw in
            system_poll(raw.baseAddress!.assumingMemoryBound(to: pollfd.self), b == nil ? 1 : 2, Int32(clamping: timeoutMs))
        }
        guard n > 0 else { return (false, false) }
        return (fds.0.revents != 0, fds.1.revents != 0)
    }
}
