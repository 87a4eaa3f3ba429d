import Platform
import Foundation
import RTP
import Testing

@Suite("SPSC packet ring")
struct PacketRingTests {
    func packet(_ n: Int) -> RTPReceivedPacket {
        RTPReceivedPacket(sequenceNumber: Int64(n), timestamp: UInt32(n * 960), arrival: UInt64(n))
    }

    @Test("Every start offset: fill, overrun, drain in order", arguments: 0..<8)
    func everyOffset(offset: Int) {
        let ring = RTPPacketRing(capacity: 8, maxPayloadSize: 16)
        // Move the indices to `offset` first.
        for i in 0..<offset {
            #expect(ring.push(packet(i), payload: UnsafeRawBufferPointer(start: nil, count: 0)))
            #expect(ring.pop { _, _ in })
        }
        for i in 0..<8 {
            let bytes = [UInt8](repeating: UInt8(i), count: i + 1)
            #expect(bytes.withUnsafeBytes { ring.push(packet(i), payload: $0) })
        }
        #expect(ring.count == 8)
        #expect(![UInt8(9)].withUnsafeBytes { ring.push(packet(99), payload: $0) })
        #expect(ring.overruns == 1)
        for i in 0..<8 {
            var seen: (Int64, [UInt8]) = (-1, [])
            #expect(ring.pop { p, payload in seen = (p.sequenceNumber, Array(payload)) })
            #expect(seen.0 == Int64(i))
            #expect(seen.1 == [UInt8](repeating: UInt8(i), count: i + 1))
        }
        #expect(!ring.pop { _, _ in })
        #expect(ring.count == 0)
    }

    @Test("A producer thread and a consumer thread: nothing lost, reordered or torn")
    func twoThreads() async {
        let ring = RTPPacketRing(capacity: 16, maxPayloadSize: 8)
        let total = 20_000
        let producer = Thread {
            var i = 0
            while i < total {
                var bytes = UInt64(i).littleEndian
                let pushed = withUnsafeBytes(of: &bytes) { ring.push(RTPReceivedPacket(sequenceNumber: Int64(i), timestamp: 0, arrival: 0), payload: $0) }
                if pushed { i += 1 }
            }
        }
        producer.start()
        var next = 0
        var torn = 0
        let deadline = Date().addingTimeInterval(20)
        while next < total, Date() < deadline {
            _ = ring.pop { p, payload in
                let value = payload.loadUnaligned(as: UInt64.self)
                if p.sequenceNumber != Int64(next) || value != UInt64(next) { torn += 1 }
                next += 1
            }
        }
        #expect(next == total)
        #expect(torn == 0)
    }
}
