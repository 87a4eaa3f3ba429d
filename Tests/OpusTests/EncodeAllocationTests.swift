import Opus
import Testing
import TestSupport

@Suite("Opus calls on the audio thread")
struct EncodeAllocationTests {
    @Test("Every rate accepts exactly the six Opus frame durations")
    func frameCounts() {
        for rate in OpusFormat.sampleRates {
            for tenths in OpusFormat.frameDurationsTenthsMs {
                let frames = OpusFormat.frames(tenthsMs: tenths, sampleRate: rate)
                #expect(OpusFormat.isValidEncoderFrameCount(frames, sampleRate: rate))
            }
            // Nothing else up to 120 ms (a decoder-only duration) passes.
            let valid = Set(OpusFormat.frameDurationsTenthsMs.map { OpusFormat.frames(tenthsMs: $0, sampleRate: rate) })
            for frames in 0...(rate * 120 / 1000) where !valid.contains(frames) {
                #expect(!OpusFormat.isValidEncoderFrameCount(frames, sampleRate: rate))
            }
        }
    }

    @Test("Encoding and decoding a frame does not allocate, even unoptimised")
    func noAllocations() throws {
        #expect(AllocationCounter.isActive)
        let encoder = try OpusEncoder(sampleRate: 16000, channels: 1, application: .voip)
        let decoder = try OpusDecoder(sampleRate: 16000, channels: 1)
        let pcm = UnsafeMutableBufferPointer<Int16>.allocate(capacity: 320)
        let packet = UnsafeMutableRawBufferPointer.allocate(byteCount: 1275, alignment: 16)
        defer { pcm.deallocate(); packet.deallocate() }
        for i in 0..<320 { pcm[i] = Int16(truncatingIfNeeded: (i * 397) % 4000 - 2000) }
        for _ in 0..<20 { _ = try encoder.encode(UnsafeBufferPointer(pcm), into: packet) }  // warm up
        let c0 = AllocationCounter.thisThread
        var n = 0
        for _ in 0..<50 { n = try encoder.encode(UnsafeBufferPointer(pcm), into: packet) }
        let c1 = AllocationCounter.thisThread
        for _ in 0..<50 {
            _ = try decoder.decode(UnsafeRawBufferPointer(rebasing: packet[0..<n]), into: pcm)
        }
        let c2 = AllocationCounter.thisThread
        for _ in 0..<50 { _ = try decoder.concealLoss(frames: 320, into: pcm) }
        let c3 = AllocationCounter.thisThread
        #expect([c1 - c0, c2 - c1, c3 - c2] == [0, 0, 0], "allocations for 50 encodes, decodes, concealments")
    }
}
