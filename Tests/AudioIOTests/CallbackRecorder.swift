import AudioIO
import Glibc
import Synchronization
import TestSupport

/// What a test's processing callback saw, recorded into preallocated memory so the
/// callback itself never allocates.
final class CallbackRecorder: @unchecked Sendable {
    // @unchecked: written only by the I/O thread while the engine runs, read by the test after stop().
    let capacity: Int
    let captured: UnsafeMutableBufferPointer<Int16>
    let played: UnsafeMutableBufferPointer<Int16>
    let timings: UnsafeMutableBufferPointer<IOTiming>
    private(set) var frames = 0
    private(set) var periods = 0
    /// Allocations on the I/O thread between the end of warm-up and the last period.
    private(set) var allocationsAfterWarmUp: UInt64 = 0
    private var allocationBaseline: UInt64 = 0
    /// Allocations made inside the callback itself after warm-up (the first periods may fill
    /// the Swift runtime's metadata caches).
    private(set) var allocationsInCallback: UInt64 = 0
    let warmUpPeriods: Int
    /// Makes the playback period from the capture period and the running frame index.
    let render: @Sendable (UnsafeBufferPointer<Int16>, UnsafeMutableBufferPointer<Int16>, Int) -> Void

    init(seconds: Double, sampleRate: Int, periodFrames: Int, warmUpPeriods: Int = 10,
         render: @escaping @Sendable (UnsafeBufferPointer<Int16>, UnsafeMutableBufferPointer<Int16>, Int) -> Void) {
        capacity = Int(seconds * Double(sampleRate)) + periodFrames * 4
        captured = .allocate(capacity: capacity)
        captured.initialize(repeating: 0)
        played = .allocate(capacity: capacity)
        played.initialize(repeating: 0)
        timings = .allocate(capacity: capacity / periodFrames + 1)
        timings.initialize(repeating: IOTiming())
        self.warmUpPeriods = warmUpPeriods
        self.render = render
    }

    deinit {
        captured.deallocate()
        played.deallocate()
        timings.deallocate()
    }

    /// The engine callback: records capture, renders playback, counts allocations.
    func process(_ cycle: IOCycle) {
        let n = cycle.capture.count
        let entry = AllocationCounter.thisThread
        if periods == warmUpPeriods { allocationBaseline = entry }
        defer { if periods > warmUpPeriods { allocationsInCallback &+= AllocationCounter.thisThread &- entry } }
        render(UnsafeBufferPointer(cycle.capture), cycle.playback, frames)
        if frames + n <= capacity {
            _ = UnsafeMutableBufferPointer(rebasing: captured[frames..<(frames + n)]).update(fromContentsOf: cycle.capture)
            _ = UnsafeMutableBufferPointer(rebasing: played[frames..<(frames + n)]).update(fromContentsOf: cycle.playback)
            timings[periods] = cycle.timing
            frames += n
        }
        periods += 1
        if periods > warmUpPeriods { allocationsAfterWarmUp = AllocationCounter.thisThread &- allocationBaseline }
    }

    /// Waits until `count` periods have reached the callback, the engine has stopped, or `timeout` has passed.
    func wait(forPeriods count: Int, of engine: AudioIOEngine, timeout: Duration = .seconds(30)) async throws {
        let deadline = ContinuousClock.now + timeout
        while periods < count, engine.isRunning, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(1))
        }
    }

    /// The same wait for a synchronous test. Such a test holds its thread of the cooperative pool
    /// throughout, so it reacts at once even when the parallel test group keeps every pool thread
    /// busy (an async test suspended in `wait` may then not be resumed for minutes).
    func waitBlocking(forPeriods count: Int, of engine: AudioIOEngine, timeout: Duration = .seconds(30)) {
        let deadline = ContinuousClock.now + timeout
        while periods < count, engine.isRunning, ContinuousClock.now < deadline { usleep(1000) }
    }

    /// Starts `engine`, waits for `count` periods, and stops it.
    func run(_ engine: AudioIOEngine, periods count: Int) async throws {
        try engine.start()
        try await wait(forPeriods: count, of: engine)
        engine.stop()
    }

    var capturedArray: [Int16] { Array(captured[0..<frames]) }
    var playedArray: [Int16] { Array(played[0..<frames]) }
}
