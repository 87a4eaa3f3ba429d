import Glibc

// Random tokens (tags, branches, Call-IDs) and IP literals. Address lookups and the local
// route to a peer are RTP's `SocketAddress` and `UDPSocket.localAddress(toward:)`.

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
