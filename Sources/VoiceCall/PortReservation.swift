import Platform
import RTP
import Synchronization

/// An RTP port (even) and its RTCP port (the next one), held by bound sockets from the
/// moment they are offered in SDP until the call's RTP session binds them.
///
/// Thread safety: safe from any thread.
final class PortReservation: Sendable {
    /// The RTP address to put in SDP.
    let rtp: SocketAddress
    private let holders: Mutex<[UDPSocket]>

    /// Finds a free even port on `host` whose next port is free too.
    init(host: String) throws(CallError) {
        for _ in 0..<32 {
            guard let any = try? UDPSocket(bindingTo: SocketAddress(host: host, port: 0)) else { break }
            let port = any.localAddress.port
            guard port % 2 == 0, port < UInt16.max,
                  let rtcp = try? UDPSocket(bindingTo: any.localAddress.with(port: port + 1)) else { continue }
            rtp = any.localAddress
            holders = Mutex([any, rtcp])
            return
        }
        throw .media("no free RTP/RTCP port pair on \(host)")
    }

    /// Lets the ports go.
    func release() { holders.withLock { $0.removeAll() } }

    /// Hands the bound sockets over (to the call's RTP session), once; nil after.
    func take() -> (rtp: UDPSocket, rtcp: UDPSocket)? {
        holders.withLock { holders in
            defer { holders.removeAll() }
            return holders.count == 2 ? (holders[0], holders[1]) : nil
        }
    }
}
