import ALSA
@testable import AudioIO
import Testing
import TestSupport

/// PipeWire activates a playback stream and a capture stream one after the other, and may run
/// the playback for a few of its cycles before the capture's first period arrives. What it plays
/// then is the prefill's silence, but also headroom the stream never gets back: calls that
/// started that way met an underrun in their first periods under load. With a prefill of two
/// periods the playback often runs dry before the first read.
extension RealTimeLoopbackTests {
    @Test("Every start leaves the prefill less one period queued after the first read, with no xrun counted",
          .enabled(if: Testbed.hasPipeWire), arguments: [2, 3])
    func startKeepsTheHeadroom(prefillPeriods: Int) throws {
        try Testbed.start()
        let device = try Self.loopbackDevice("pipewire", prefillPeriods: prefillPeriods)
        let buffer = UnsafeMutableBufferPointer<Int16>.allocate(capacity: Self.period)
        defer { buffer.deallocate() }
        var queued: [Int] = []
        for _ in 0..<24 {
            try device.start()
            _ = try device.readCapture(buffer)
            // -1: a stream had met an xrun (the playback ran dry, or the capture overran).
            queued.append(device.queuedFrames() ?? -1)
            device.stop()
        }
        print("queued after the first read through pipewire, prefill \(prefillPeriods), 24 starts: \(queued) frames, "
              + "\(device.xrunCount) xruns")
        // A -1 whose capture already held a period more when it was read is not a race the
        // device absorbs but a late reader (this test's thread is not real-time); its next
        // transfer would count it. One such start in 24 is allowed on a loaded machine.
        #expect(queued.filter { $0 >= 0 }.allSatisfy { $0 >= (prefillPeriods - 1) * Self.period }, "\(queued)")
        #expect(queued.count(where: { $0 < 0 }) <= 1, "\(queued)")
        #expect(device.xrunCount == 0)
    }
}
