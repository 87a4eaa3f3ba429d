import SpanDSP
import Testing
import TestSupport

/// The calls the real-time I/O thread will make, 1000 each after a warm-up, counted on this
/// thread by the malloc interposer.
@Suite("SpanDSP allocations")
struct AllocationTests {
    static let calls = 1000

    /// Buffers made before counting: 20 ms at 16 kHz, and room for its G.722 or G.711 bytes.
    final class Buffers {
        let pcm = UnsafeMutableBufferPointer<Int16>.allocate(capacity: 320)
        let out = UnsafeMutableBufferPointer<Int16>.allocate(capacity: 320)
        let bytes = UnsafeMutableRawBufferPointer.allocate(byteCount: 320, alignment: 16)
        init() {
            for i in pcm.indices { pcm[i] = Int16(truncatingIfNeeded: (i * 397) % 4000 - 2000) }
            out.initialize(repeating: 0)
            bytes.initializeMemory(as: UInt8.self, repeating: 0)
        }
        deinit { pcm.deallocate(); out.deallocate(); bytes.deallocate() }
        var input: UnsafeBufferPointer<Int16> { UnsafeBufferPointer(pcm) }
        var narrow: UnsafeBufferPointer<Int16> { UnsafeBufferPointer(rebasing: pcm[0..<160]) }
        func encoded(_ count: Int) -> UnsafeRawBufferPointer { UnsafeRawBufferPointer(rebasing: bytes[0..<count]) }
    }

    /// Allocations `body` makes over `calls` runs on this thread, after one run to warm up.
    static func count(_ body: () -> Void) -> UInt64 {
        body()
        let before = AllocationCounter.thisThread
        for _ in 0..<calls { body() }
        return AllocationCounter.thisThread - before
    }

    @Test("G.711 encode and decode allocate nothing", arguments: [G711Law.mulaw, .alaw])
    func g711(law: G711Law) {
        #expect(AllocationCounter.isActive)
        let b = Buffers()
        let encodes = Self.count { _ = G711.encode(b.narrow, law: law, into: b.bytes) }
        let decodes = Self.count { _ = G711.decode(b.encoded(160), law: law, into: b.out) }
        #expect([encodes, decodes] == [0, 0], "allocations in \(Self.calls) encodes, decodes")
    }

    @Test("G.722 encode and decode allocate nothing")
    func g722() throws {
        #expect(AllocationCounter.isActive)
        let b = Buffers()
        var encoder = try G722Encoder(), decoder = try G722Decoder()
        let encodes = Self.count { _ = encoder.encode(b.input, into: b.bytes) }
        let decodes = Self.count { _ = decoder.decode(b.encoded(160), into: b.out) }
        #expect([encodes, decodes] == [0, 0], "allocations in \(Self.calls) encodes, decodes")
    }

    @Test("Packet loss concealment allocates nothing, receiving or concealing")
    func plc() throws {
        #expect(AllocationCounter.isActive)
        let b = Buffers()
        var plc = try PacketLossConcealer()
        let frame = UnsafeMutableBufferPointer(rebasing: b.out[0..<160])
        let receives = Self.count {
            _ = frame.update(fromContentsOf: b.narrow)
            plc.received(frame)
        }
        let conceals = Self.count { plc.conceal(frame) }
        // Alternating: every received frame after a loss takes the blending path.
        let alternating = Self.count {
            plc.conceal(frame)
            _ = frame.update(fromContentsOf: b.narrow)
            plc.received(frame)
        }
        #expect([receives, conceals, alternating] == [0, 0, 0], "allocations in \(Self.calls) receives, conceals, both")
    }
}
