@testable import AudioIO
import Testing

@Suite("Single-producer single-consumer ring")
struct SPSCRingTests {
    @Test("Capacity rounds up to a power of two")
    func capacityIsPowerOfTwo() {
        #expect(SPSCRing<Int16>(minimumCapacity: 1000, zero: 0).capacity == 1024)
        #expect(SPSCRing<Int16>(minimumCapacity: 1024, zero: 0).capacity == 1024)
        #expect(SPSCRing<Int16>(minimumCapacity: 1, zero: 0).capacity == 1)
    }

    @Test("Writes and reads keep order across the wrap at every offset and length")
    func wrapsAtEveryOffset() {
        // A sweep over every start offset and every chunk length of an 8-slot ring.
        for offset in 0..<8 {
            for length in 1...8 {
                let ring = SPSCRing<Int>(minimumCapacity: 8, zero: 0)
                var scratch = [Int](repeating: 0, count: 8)
                let skip = (0..<offset).map { $0 }
                skip.withUnsafeBufferPointer { _ = ring.write($0) }
                scratch.withUnsafeMutableBufferPointer { _ = ring.read(into: UnsafeMutableBufferPointer(rebasing: $0[0..<offset])) }
                let values = (0..<length).map { 100 + $0 }
                #expect(values.withUnsafeBufferPointer { ring.write($0) } == length)
                #expect(ring.availableToRead == length)
                let got = scratch.withUnsafeMutableBufferPointer { ring.read(into: UnsafeMutableBufferPointer(rebasing: $0[0..<length])) }
                #expect(got == length)
                #expect(Array(scratch[0..<length]) == values, "offset \(offset) length \(length)")
                #expect(ring.overruns == 0 && ring.underruns == 0)
            }
        }
    }

    @Test("A write that does not fit is cut and counted as an overrun")
    func overrun() {
        let ring = SPSCRing<Int16>(minimumCapacity: 4, zero: 0)
        let five: [Int16] = [1, 2, 3, 4, 5]
        #expect(five.withUnsafeBufferPointer { ring.write($0) } == 4)
        #expect(ring.overruns == 1)
        #expect(ring.availableToWrite == 0)
    }

    @Test("A read that finds too little is counted as an underrun and leaves the rest untouched")
    func underrun() {
        let ring = SPSCRing<Int16>(minimumCapacity: 4, zero: 0)
        let two: [Int16] = [7, 8]
        two.withUnsafeBufferPointer { _ = ring.write($0) }
        var out: [Int16] = [0, 0, -1, -1]
        #expect(out.withUnsafeMutableBufferPointer { ring.read(into: $0) } == 2)
        #expect(out == [7, 8, -1, -1])
        #expect(ring.underruns == 1)
    }

    @Test("Discard drops what is there and no more")
    func discard() {
        let ring = SPSCRing<Int16>(minimumCapacity: 8, zero: 0)
        let three: [Int16] = [1, 2, 3]
        three.withUnsafeBufferPointer { _ = ring.write($0) }
        #expect(ring.discard(5) == 3)
        #expect(ring.availableToRead == 0)
    }

    @Test("A producer and a consumer thread move a million values in order")
    func concurrentTransfer() async {
        let ring = SPSCRing<UInt32>(minimumCapacity: 256, zero: 0)
        let total: UInt32 = 1_000_000
        async let produced: Void = Task.detached {
            var next: UInt32 = 0
            var chunk = [UInt32](repeating: 0, count: 37)
            while next < total {
                let n = min(Int(total - next), chunk.count)
                for i in 0..<n { chunk[i] = next + UInt32(i) }
                let written = chunk.withUnsafeBufferPointer { ring.write(UnsafeBufferPointer(rebasing: $0[0..<min(n, ring.availableToWrite)])) }
                next += UInt32(written)
                if written == 0 { await Task.yield() }
            }
        }.value
        let ok = await Task.detached {
            var expected: UInt32 = 0
            var chunk = [UInt32](repeating: 0, count: 53)
            while expected < total {
                let got = chunk.withUnsafeMutableBufferPointer { ring.read(into: UnsafeMutableBufferPointer(rebasing: $0[0..<min(53, ring.availableToRead)])) }
                for i in 0..<got where chunk[i] != expected + UInt32(i) { return false }
                expected += UInt32(got)
                if got == 0 { await Task.yield() }
            }
            return true
        }.value
        await produced
        #expect(ok)
    }
}
