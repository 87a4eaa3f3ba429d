import Glibc

// Every socket call of the RTP module goes through these functions (as swift-system
// routes libc through `system_*`), so the C surface is in one place and each call
// retries on EINTR where that is the right thing to do.

@inline(__always)
func system_socket(_ domain: Int32, _ type: Int32, _ proto: Int32) -> Int32 {
    socket(domain, type, proto)
}

@inline(__always)
func system_bind(_ fd: Int32, _ address: UnsafePointer<sockaddr>, _ length: socklen_t) -> Int32 {
    bind(fd, address, length)
}

@inline(__always)
func system_connect(_ fd: Int32, _ address: UnsafePointer<sockaddr>, _ length: socklen_t) -> Int32 {
    connect(fd, address, length)
}

@inline(__always)
func system_getsockname(_ fd: Int32, _ address: UnsafeMutablePointer<sockaddr>, _ length: UnsafeMutablePointer<socklen_t>) -> Int32 {
    getsockname(fd, address, length)
}

@inline(__always)
func system_setsockopt(_ fd: Int32, _ level: Int32, _ name: Int32, _ value: Int32) -> Int32 {
    var v = value
    return setsockopt(fd, level, name, &v, socklen_t(MemoryLayout<Int32>.size))
}

@inline(__always)
func system_close(_ fd: Int32) -> Int32 { close(fd) }

/// `sendto` without blocking (`MSG_DONTWAIT`); retried on EINTR.
@inline(__always)
func system_sendto(_ fd: Int32, _ bytes: UnsafeRawPointer?, _ count: Int, _ address: UnsafePointer<sockaddr>,
                   _ length: socklen_t) -> Int {
    while true {
        let n = sendto(fd, bytes, count, Int32(MSG_DONTWAIT), address, length)
        if n >= 0 || errno != EINTR { return n }
    }
}

/// `recvfrom` without blocking; `MSG_TRUNC` makes the result the datagram's real length.
@inline(__always)
func system_recvfrom(_ fd: Int32, _ bytes: UnsafeMutableRawPointer?, _ count: Int, _ address: UnsafeMutablePointer<sockaddr>,
                     _ length: UnsafeMutablePointer<socklen_t>) -> Int {
    while true {
        let n = recvfrom(fd, bytes, count, Int32(MSG_DONTWAIT) | Int32(MSG_TRUNC), address, length)
        if n >= 0 || errno != EINTR { return n }
    }
}

/// `poll`; EINTR counts as a timeout (the caller loops anyway).
@inline(__always)
func system_poll(_ fds: UnsafeMutablePointer<pollfd>, _ count: Int, _ timeoutMs: Int32) -> Int32 {
    let n = poll(fds, nfds_t(count), timeoutMs)
    return n < 0 && errno == EINTR ? 0 : n
}
