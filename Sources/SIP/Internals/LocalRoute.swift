import Glibc

/// The local IP address the kernel would send from to reach `host`, found by connecting a
/// throwaway UDP socket (nothing is sent): what a socket bound to `0.0.0.0` or `::` puts in
/// its `Via` and `Contact`. Nil when there is no route.
///
/// The corresponding C functions are `getaddrinfo`, `socket`, `connect` and `getsockname`.
func localAddressToward(host: String, port: UInt16) -> String? {
    var hints = addrinfo()
    hints.ai_family = AF_UNSPEC
    hints.ai_socktype = Int32(SOCK_DGRAM.rawValue)
    hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV
    var result: UnsafeMutablePointer<addrinfo>?
    guard getaddrinfo(host, String(port), &hints, &result) == 0, let info = result else { return nil }
    defer { freeaddrinfo(result) }
    let fd = socket(info.pointee.ai_family, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    guard fd >= 0 else { return nil }
    defer { close(fd) }
    guard connect(fd, info.pointee.ai_addr, info.pointee.ai_addrlen) == 0 else { return nil }
    var local = sockaddr_storage()
    var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
    let named = withUnsafeMutablePointer(to: &local) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
    }
    guard named == 0 else { return nil }
    var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
    let family = Int32(local.ss_family)
    let ok = withUnsafeBytes(of: &local) { raw in
        inet_ntop(family, raw.baseAddress! + (family == AF_INET6 ? 8 : 4), &text, socklen_t(text.count)) != nil
    }
    guard ok else { return nil }
    return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
}

/// The first numeric address of `host` in one family (`AF_INET` or `AF_INET6`), or nil.
/// (A name such as `localhost` may resolve to `::1` first; an IPv4 socket needs `127.0.0.1`.)
///
/// The corresponding C functions are `getaddrinfo` and `getnameinfo`.
func numericHost(_ host: String, ipv6: Bool) -> String? {
    var hints = addrinfo()
    hints.ai_family = ipv6 ? AF_INET6 : AF_INET
    hints.ai_socktype = Int32(SOCK_DGRAM.rawValue)
    var result: UnsafeMutablePointer<addrinfo>?
    guard getaddrinfo(host, nil, &hints, &result) == 0, let info = result else { return nil }
    defer { freeaddrinfo(result) }
    var text = [CChar](repeating: 0, count: Int(NI_MAXHOST))
    guard getnameinfo(info.pointee.ai_addr, info.pointee.ai_addrlen, &text, socklen_t(text.count), nil, 0,
                      NI_NUMERICHOST) == 0
    else { return nil }
    return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
}

/// Whether `host` is an IPv4 or IPv6 literal (so resolving it needs no DNS).
func isIPLiteral(_ host: String) -> Bool {
    var v4 = in_addr(), v6 = in6_addr()
    return inet_pton(AF_INET, host, &v4) == 1 || inet_pton(AF_INET6, host, &v6) == 1
}

/// A random lowercase hex string of `bytes` random bytes (tags, branches, Call-IDs).
func randomToken(bytes: Int = 8) -> String {
    var generator = SystemRandomNumberGenerator()
    var out = ""
    out.reserveCapacity(bytes * 2)
    let digits = Array("0123456789abcdef")
    for _ in 0..<bytes {
        let b = UInt8.random(in: 0...255, using: &generator)
        out.append(digits[Int(b >> 4)])
        out.append(digits[Int(b & 0xF)])
    }
    return out
}
