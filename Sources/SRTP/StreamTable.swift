/// The SSRCs an inbound context holds libsrtp2 streams for, up to a fixed count.
///
/// libsrtp2 makes a stream (a heap allocation, never freed until the session is) for every new
/// SSRC whose first packet authenticates; the table lets the context refuse a new SSRC once it
/// is full, before libsrtp sees the packet, so a peer cannot grow our memory without bound.
/// Linear search: the table is small (8 by default), and a scan of it costs less than a hash.
struct StreamTable {
    private var ssrcs: [UInt32]
    let capacity: Int

    /// Reserves all the room now: appending within capacity to a uniquely held array never
    /// allocates, so recording a stream on the packet path does not either.
    init(capacity: Int) {
        self.capacity = capacity
        ssrcs = []
        ssrcs.reserveCapacity(capacity)
    }

    var count: Int { ssrcs.count }
    var isFull: Bool { ssrcs.count >= capacity }

    func contains(_ ssrc: UInt32) -> Bool {
        for i in ssrcs.indices where ssrcs[i] == ssrc { return true }
        return false
    }

    /// Records an SSRC whose packet libsrtp2 has just authenticated.
    mutating func insert(_ ssrc: UInt32) {
        precondition(!isFull && !contains(ssrc), "StreamTable.insert(\(ssrc)) when full or present")
        ssrcs.append(ssrc)
    }
}
