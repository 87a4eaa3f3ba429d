import DSP
import Testing
@testable import VoiceProcessing

/// The unit's first and last stage on its own: periods into blocks and back, at equal rates and
/// across a rate change.
@Suite("Rate adapter")
struct RateAdapterTests {
    static func adapter(deviceRate: Int, period: Int) throws -> (RateAdapter, ProcessingScratch, block: Int) {
        let c = VoiceProcessingConfiguration(deviceSampleRate: deviceRate, processingSampleRate: 16000,
                                             maximumFramesPerPeriod: period)
        let block = 160
        let scratch = ProcessingScratch(capacity: RateAdapter.scratchCapacity(c, block: block), block: block)
        return (try RateAdapter(configuration: c, block: block, scratch: scratch), scratch, block)
    }

    @Test("At equal rates the stream comes back whole, after one gap for framing, and so does the linear output")
    func equalRatesDelayByABlock() throws {
        let (adapter, scratch, block) = try Self.adapter(deviceRate: 16000, period: 320)
        #expect(!adapter.convertsRate)
        #expect(adapter.fixedLatency == 0.01)
        var sent: [Int16] = [], received: [Int16] = [], linear: [Int16] = []
        var out = [Int16](repeating: 0, count: 240), linearOut = [Int16](repeating: 0, count: 240)
        // Periods of 240 samples: blocks of 160 straddle them, so framing holds samples back.
        for p in 0..<8 {
            let period = (0..<240).map { Int16(p * 240 + $0) }
            sent += period
            period.withUnsafeBufferPointer { adapter.pushCapture($0.baseAddress!, 240) }
            while adapter.popBlock(into: scratch.blockIn) {
                adapter.pushLinear(scratch.blockIn)
                adapter.pushProcessed(scratch.blockIn)
            }
            out.withUnsafeMutableBufferPointer { o in
                linearOut.withUnsafeMutableBufferPointer { adapter.deliver(into: o.baseAddress!, 240, linearOutput: $0.baseAddress!) }
            }
            received += out
            linear += linearOut
        }
        // The first period holds one block and then the zeros framing needs, once; after them
        // the stream goes on whole, late by those zeros.
        let gap = 240 - block
        #expect(Array(received[0..<block]) == Array(sent[0..<block]))
        #expect(received[block..<240].allSatisfy { $0 == 0 })
        #expect(Array(received[240...]) == Array(sent[block..<(sent.count - gap)]))
        #expect(linear == received)
    }

    @Test("At 48 kHz a tone goes through at the processing rate and comes back at the device's, in time")
    func rateChangeKeepsTheTone() throws {
        let (adapter, scratch, _) = try Self.adapter(deviceRate: 48000, period: 960)
        #expect(adapter.convertsRate)
        #expect(adapter.fixedLatency > 0.01)
        var received: [Float] = []
        var out = [Int16](repeating: 0, count: 960)
        var blocks = 0
        for p in 0..<50 {
            let period = (0..<960).map { Int16(8000 * Math.sin(2 * Double.pi * 500 * Double(p * 960 + $0) / 48000)) }
            period.withUnsafeBufferPointer { adapter.pushCapture($0.baseAddress!, 960) }
            while adapter.popBlock(into: scratch.blockIn) {
                blocks += 1
                adapter.pushProcessed(scratch.blockIn)
            }
            out.withUnsafeMutableBufferPointer { adapter.deliver(into: $0.baseAddress!, 960, linearOutput: nil) }
            received += out.map { Float($0) }
        }
        // 50 periods of 20 ms are 100 blocks of 10 ms, give or take the resampler's delay.
        #expect((98...100).contains(blocks))
        // After the first periods the tone is back at its level, and the queue stays under a period.
        let tail = received.suffix(48000)
        let rms = (tail.reduce(0) { $0 + $1 * $1 } / Float(tail.count)).squareRoot()
        #expect(abs(rms - 8000 / Float(2).squareRoot()) < 400)
        #expect(adapter.queuedSeconds < 0.02)
    }
}
