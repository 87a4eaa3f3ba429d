import Glibc

/// What a non-blocking stream read or write did.
///
/// Thread safety: a value type; safe to use from any thread.
public enum StreamIOResult: Sendable, Equatable {
    /// This many bytes were moved (more than zero).
    case transferred(Int)
    /// Nothing can move now: wait until the socket is ready.
    case wouldBlock
    /// The peer closed its side (a read of end-of-file), or the connection is gone.
    case closed
    case failed(Int32)
}

/// A TCP connection (IPv4 or IPv6), non-blocking: reads and writes never wait, and a connect
/// completes in the background (wait until writable, then ``finishConnect()``).
///
/// Thread safety: safe from any thread as the kernel allows; one thread reads while another
/// writes. The descriptor is closed when the socket goes away.
public final class TCPSocket: Sendable {
    /// The peer's address.
    public let remoteAddress: SocketAddress
    package let descriptor: Int32

    package init(descriptor: Int32, remoteAddress: SocketAddress) {
        self.descriptor = descriptor
        self.remoteAddress = remoteAddress
        _ = system_setsockopt(descriptor, Int32(IPPROTO_TCP), TCP_NODELAY, 1)
    }

    deinit { _ = system_close(descriptor) }

    /// Starts connecting to `remote` without waiting (the connection is ready once the socket
    /// is writable and ``finishConnect()`` returns nil).
    ///
    /// The corresponding C functions are `socket` and `connect`.
    public static func connect(to remote: SocketAddress) throws(SocketError) -> TCPSocket {
        let domain = remote.family == .ipv6 ? AF_INET6 : AF_INET
        let type = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue)
        let fd = system_socket(domain, type, 0)
        guard fd >= 0 else { throw .last("socket") }
        var storage = remote.storage
        let result = withUnsafePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { system_connect(fd, $0, remote.length) }
        }
        guard result == 0 || errno == EINPROGRESS else {
            let error = SocketError.last("connect \(remote)")
            _ = system_close(fd)
            throw error
        }
        return TCPSocket(descriptor: fd, remoteAddress: remote)
    }

    /// The outcome of a connect once the socket became writable: nil when connected.
    ///
    /// The corresponding C function is `getsockopt(SO_ERROR)`.
    public func finishConnect() -> SocketError? {
        var code: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        guard getsockopt(descriptor, SOL_SOCKET, SO_ERROR, &code, &length) == 0 else { return .last("getsockopt") }
        guard code != 0 else { return nil }
        return SocketError(code: code, detail: "connect \(remoteAddress)")
    }

    /// The local end of the connection.
    public var localAddress: SocketAddress { Platform.localAddress(of: descriptor) }

    /// Writes what the kernel takes now (`send` with `MSG_DONTWAIT | MSG_NOSIGNAL`: a closed
    /// peer is an error, never a SIGPIPE).
    public func send(_ bytes: UnsafeRawBufferPointer) -> StreamIOResult {
        guard !bytes.isEmpty else { return .transferred(0) }
        while true {
            let n = Glibc.send(descriptor, bytes.baseAddress, bytes.count, Int32(MSG_DONTWAIT) | Int32(MSG_NOSIGNAL))
            if n > 0 { return .transferred(n) }
            if n < 0, errno == EINTR { continue }
            return Self.result(errno)
        }
    }

    /// Reads what is waiting, up to the buffer's size.
    public func receive(into buffer: UnsafeMutableRawBufferPointer) -> StreamIOResult {
        while true {
            let n = recv(descriptor, buffer.baseAddress, buffer.count, Int32(MSG_DONTWAIT))
            if n > 0 { return .transferred(n) }
            if n == 0 { return .closed }
            if errno == EINTR { continue }
            return Self.result(errno)
        }
    }

    private static func result(_ code: Int32) -> StreamIOResult {
        switch code {
        case EAGAIN, EWOULDBLOCK: .wouldBlock
        case EPIPE, ECONNRESET, ENOTCONN: .closed
        default: .failed(code)
        }
    }
}

/// A listening TCP socket, non-blocking.
///
/// Thread safety: safe from any thread as the kernel allows. The descriptor is closed when
/// the listener goes away.
public final class TCPListener: Sendable {
    /// The bound address (the actual port when bound to port 0).
    public let localAddress: SocketAddress
    package let descriptor: Int32

    /// Binds (with `SO_REUSEADDR`, so a restarted agent gets its port back) and listens.
    ///
    /// The corresponding C functions are `socket`, `setsockopt`, `bind` and `listen`.
    public init(bindingTo address: SocketAddress, backlog: Int32 = 64) throws(SocketError) {
        let domain = address.family == .ipv6 ? AF_INET6 : AF_INET
        let type = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue)
        let fd = system_socket(domain, type, 0)
        guard fd >= 0 else { throw .last("socket") }
        _ = system_setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, 1)
        if address.family == .ipv6 { _ = system_setsockopt(fd, Int32(IPPROTO_IPV6), IPV6_V6ONLY, 1) }
        localAddress = try bind(fd, to: address, listening: backlog)
        descriptor = fd
    }

    deinit { _ = system_close(descriptor) }

    /// A connection waiting to be accepted, or nil when none is (or on an error, which the next
    /// poll reports again).
    public func accept() -> TCPSocket? {
        var remote = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let fd = withUnsafeMutablePointer(to: &remote) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.accept(descriptor, $0, &length) }
        }
        guard fd >= 0 else { return nil }
        makeNonBlocking(fd)
        return TCPSocket(descriptor: fd, remoteAddress: SocketAddress(storage: remote))
    }
}
