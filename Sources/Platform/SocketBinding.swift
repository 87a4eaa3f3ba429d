import Glibc

// What every socket of the module does to get an address: bind (and for a listener, listen),
// then read back the address the kernel gave (the port it chose for port 0).

/// Binds `fd` to `address` (then listens with `backlog`, for a listener) and returns the bound
/// address; on failure closes `fd` and throws.
func bind(_ fd: Int32, to address: SocketAddress, listening backlog: Int32? = nil) throws(SocketError) -> SocketAddress {
    var storage = address.storage
    let bound = withUnsafePointer(to: &storage) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { system_bind(fd, $0, address.length) }
    }
    guard bound == 0, backlog.map({ listen(fd, $0) == 0 }) ?? true else {
        let error = SocketError.last("\(backlog == nil ? "bind" : "bind/listen") \(address)")
        _ = system_close(fd)
        throw error
    }
    return localAddress(of: fd)
}

/// The local address of a socket (`getsockname`).
func localAddress(of fd: Int32) -> SocketAddress {
    var local = sockaddr_storage()
    var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
    _ = withUnsafeMutablePointer(to: &local) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { system_getsockname(fd, $0, &length) }
    }
    return SocketAddress(storage: local)
}
