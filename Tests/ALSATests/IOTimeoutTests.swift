@testable import ALSA
import Testing

/// The non-blocking wait's deadline: one timeout after the stream last moved a whole transfer,
/// so a stall in which one direction still trickles is caught once, not once per call.
@Suite("I/O timeout deadline")
struct IOTimeoutTests {
    @Test("A fresh stream waits one whole timeout")
    func freshStream() {
        #expect(PCM.deadline(now: 1000, lastCompleted: nil, timeout: 300) == 1300)
    }

    @Test("A call that starts late in a stall gets only what is left since the last transfer")
    func runsFromTheLastTransfer() {
        // The last whole read ended at 1000; a write crept through until 1200.
        #expect(PCM.deadline(now: 1200, lastCompleted: 1000, timeout: 300) == 1300)
    }

    @Test("A caller that was itself late still waits a quarter of the timeout")
    func lateCallerKeepsAFloor() {
        #expect(PCM.deadline(now: 1290, lastCompleted: 1000, timeout: 300) == 1365)
        #expect(PCM.deadline(now: 5000, lastCompleted: 1000, timeout: 300) == 5075)
    }
}
