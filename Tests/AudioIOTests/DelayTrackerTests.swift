@testable import AudioIO
import Foundation
import Testing

@Suite("Device round-trip tracker")
struct DelayTrackerTests {
    /// Feeds `readings` and returns what the tracker reported for each.
    static func track(_ readings: [Int], capacity: Int = 50) -> (reported: [Int], jitter: Int) {
        var tracker = DelayTracker(capacity: capacity, minimumBand: 48)
        let reported = readings.map { tracker.add($0) }
        return (reported, tracker.jitter)
    }

    @Test("A steady device is reported exactly, with no jitter")
    func steady() {
        let (reported, jitter) = Self.track(Array(repeating: 3392, count: 200))
        #expect(reported.allSatisfy { $0 == 3392 })
        #expect(jitter == 0)
    }

    /// The shape the `pulse` plugin reports on pipewire-pulse: a sawtooth of +-230 frames whose
    /// centre drifts by +-300 frames over seconds, around a round trip that does not change.
    @Test("A wandering sawtooth is held: the report moves rarely and says how much the readings scatter")
    func wanderingSawtooth() {
        let readings = (0..<1000).map { (k: Int) -> Int in
            let tooth = (k % 7) * 66 - 200
            let drift = Int(300 * sin(Double(k) / 80))
            return 4400 + tooth + drift
        }
        let (reported, jitter) = Self.track(readings)
        let moves = (51..<reported.count).count { reported[$0] != reported[$0 - 1] }
        #expect(moves <= 10, "moved \(moves) times")
        #expect(jitter >= 200)
    }

    @Test("A real step (a server that restarts its stream 30 ms later) is followed within a window")
    func step() {
        let readings = Array(repeating: 3000, count: 100) + Array(repeating: 4440, count: 100)
        let (reported, _) = Self.track(readings)
        #expect(reported[99] == 3000)
        #expect(reported[150] == 4440)
        #expect(reported[100..<125].allSatisfy { $0 == 3000 })  // half a window of new readings first
    }

    @Test("The first second follows the median, so an outlier at the start is not held")
    func outlierAtStart() {
        let readings = [9000] + Array(repeating: 3000, count: 99)
        let (reported, _) = Self.track(readings)
        #expect(reported.last == 3000)
    }

    @Test("After a reset (an xrun) the tracker starts over")
    func resetStartsOver() {
        var tracker = DelayTracker(capacity: 10, minimumBand: 48)
        for _ in 0..<20 { _ = tracker.add(1000) }
        tracker.reset()
        #expect(tracker.add(2000) == 2000)
    }
}
