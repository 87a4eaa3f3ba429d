import Platform
import Synchronization

/// Where the peer receives RTP and RTCP, handed from the control thread to the I/O and
/// network threads when it changes mid-call (a re-INVITE that moves the media), without a lock.
///
/// A sequence lock over atomic words: the writer makes the sequence odd, stores the words and
/// makes it even again; a reader copies the words and keeps them only if the sequence was the
/// same even number before and after. A reader never waits: when it sees a write under way it
/// keeps its old address and looks again at its next frame.
///
/// Thread safety: writers (``publish(rtp:rtcp:)``: the control thread for a re-INVITE, the
/// network thread when it latches to the peer's source) take turns on a mutex; readers
/// (``read(newerThan:)``, the I/O and network threads) do not allocate, lock or block (real-time safe).
final class PeerAddressMailbox: Sendable {
    /// Bytes of an address kept: a `sockaddr_in6` (28 bytes) fits, and a `sockaddr_in`.
    private static let wordsPerAddress = 4
    private let sequence = Atomic<Int>(0)
    private let words = AtomicCells(count: 2 * wordsPerAddress)
    /// Two writers must not interleave: a reader could then take half of each address.
    private let writing = Mutex<Void>(())


    /// Publishes new destinations.
    func publish(rtp: SocketAddress, rtcp: SocketAddress) {
        writing.withLock { _ in write(rtp: rtp, rtcp: rtcp) }
    }

    private func write(rtp: SocketAddress, rtcp: SocketAddress) {
        let start = sequence.load(ordering: .relaxed)
        sequence.store(start + 1, ordering: .relaxed)
        atomicMemoryFence(ordering: .releasing)
        for (slot, address) in [rtp, rtcp].enumerated() {
            let addressWords = address.words
            for w in 0..<Self.wordsPerAddress {
                words.store(slot * Self.wordsPerAddress + w, Int(bitPattern: UInt(addressWords[w])))
            }
        }
        sequence.store(start + 2, ordering: .releasing)
    }

    /// The destinations if a write newer than `seen` has completed (then `seen` moves to it);
    /// nil when nothing changed or a write is under way.
    func read(newerThan seen: inout Int) -> (rtp: SocketAddress, rtcp: SocketAddress)? {
        let before = sequence.load(ordering: .acquiring)
        guard before != seen, before & 1 == 0 else { return nil }
        let address = { (slot: Int) in
            SocketAddress(words: [4 of UInt64] { UInt64(UInt(bitPattern: self.words.int(slot * Self.wordsPerAddress + $0))) })
        }
        let addresses = (address(0), address(1))
        atomicMemoryFence(ordering: .acquiring)
        guard sequence.load(ordering: .relaxed) == before else { return nil }
        seen = before
        return addresses
    }
}
