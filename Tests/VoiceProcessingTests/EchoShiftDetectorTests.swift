import DSP
import Platform
import Testing
import TestSupport
@testable import VoiceProcessing

@Suite("The echo shift detector: a jump of the echo found from the canceller's prediction")
struct EchoShiftDetectorTests {
    static let rate = 16000, block = 160

    /// Far-end noise through a short room, and the capture: the echo, `move` samples later from
    /// `at` on, with near-end noise `nearDB` under it (none when nil). `echo[n + lead]` is the
    /// echo at capture sample `n` before the move.
    static let lead = 1000
    static func signals(seconds: Double, move: Int, at: Int, nearDB: Double?, nearFrom: Int = 0, seed: UInt64) -> (capture: [Int16], echo: [Double]) {
        var random = SeededRandom(seed: seed)
        let count = Int(seconds * Double(rate)), pad = 2000
        var far = [Double](repeating: 0, count: count + pad)
        // A lowpassed far end: nearer speech than white noise, and harder on the decimation.
        var last = 0.0
        for i in far.indices { last = 0.6 * last + random.gaussian() * 2000; far[i] = last }
        let room = (0..<48).map { k in (k == 0 ? 1.0 : 0.0) + random.gaussian() * 0.3 * Math.exp(-Double(k) / 12) }
        let echo = (0..<(count + pad)).map { n in room.indices.reduce(0.0) { $0 + (n >= $1 ? room[$1] * far[n - $1] : 0) } }
        let near = nearDB.map { 2000 * Math.pow(10, $0 / 20) } ?? 0
        let capture = (0..<count).map { n in
            Int16(clamping: Int(echo[n + lead - (n >= at ? move : 0)] + random.gaussian() * (n >= nearFrom ? near : 0)))
        }
        return (capture, echo)
    }

    /// Feeds the detector block by block with a canceller that predicts the echo as it was, until
    /// a reported move moves its prediction too (as the stage's reference does); the moves, with
    /// the block they came in. `afterBlock` is called with each block's index once it is pushed;
    /// it returns whether to stop.
    static func run(_ detector: EchoShiftDetector, _ s: (capture: [Int16], echo: [Double]), farActive: Bool = true, cancellerERLE: Double = 20,
                    afterBlock: (Int) -> Bool = { _ in false }) -> [(block: Int, move: Int)] {
        var moves: [(Int, Int)] = []
        var output = [Int16](repeating: 0, count: block)
        var followed = 0
        for b in 0..<(s.capture.count / block) {
            let o = b * block
            for i in 0..<block {
                let predicted = Int16(clamping: Int(s.echo[o + i + lead - followed]))
                output[i] = Int16(clamping: Int(s.capture[o + i]) - Int(predicted))
            }
            let move = s.capture.withUnsafeBufferPointer { c in
                detector.push(capture: c.baseAddress! + o, output: output, farActive: farActive, cancellerERLE: cancellerERLE)
            }
            if let move {
                moves.append((b, move))
                followed += move
            }
            if afterBlock(b) { break }
        }
        return moves
    }

    static func detector() -> EchoShiftDetector {
        EchoShiftDetector(blockSize: block, sampleRate: rate, tuning: .init())
    }

    @Test("A jump later or earlier is found to the sample within 0.5 s, once", arguments: [173, -90, 800])
    func jump(move: Int) {
        let moves = Self.run(Self.detector(), Self.signals(seconds: 4, move: move, at: 2 * Self.rate, nearDB: -20, seed: 3))
        #expect(moves.count == 1)
        #expect(moves.first?.move == move)
        if let b = moves.first?.block { #expect(b >= 200 && b <= 250, "found \(b - 200) blocks after the jump") }
    }

    @Test("Under double talk 6 dB under the echo the jump is found at once; as loud as the echo (moved, the prediction leaves under 6 dB less) only once the same move has held over 8 tests")
    func doubleTalk() {
        let quiet = Self.run(Self.detector(), Self.signals(seconds: 4, move: 240, at: 2 * Self.rate, nearDB: -6, seed: 5))
        #expect(quiet.map(\.move) == [240])
        let loud = Self.signals(seconds: 4, move: 240, at: 2 * Self.rate, nearDB: 0, seed: 5)
        let found = Self.run(Self.detector(), loud)
        #expect(found.map(\.move) == [240])
        if let b = found.first?.block, let q = quiet.first?.block { #expect(b > q, "found \(b - 200) blocks after the jump") }
        var single = VoiceProcessingTuning.EchoShift()
        single.sustainedGainDB = single.minimumGainDB
        #expect(Self.run(EchoShiftDetector(blockSize: Self.block, sampleRate: Self.rate, tuning: single), loud).isEmpty)
    }

    @Test("Under double talk as loud as the echo, a move the delay estimator also finds (within 3 ms) is taken after 3 tests, before the 8 of the sustained rule; one it does not find is not")
    func corroborated() {
        let loud = Self.signals(seconds: 4, move: -240, at: 2 * Self.rate, nearDB: 0, seed: 5)
        let alone = Self.run(Self.detector(), loud).first
        #expect(alone?.move == -240)
        // The same blocks, asking after each whether the estimator's move agrees.
        for (other, agrees) in [(-230.0, true), (-300.0, false)] {
            let detector = Self.detector()
            var taken: (block: Int, move: Int)?
            _ = Self.run(detector, loud) { b in
                if let move = detector.takeCorroboratedMove(near: other) { taken = (b, move) }
                return taken != nil
            }
            if agrees {
                #expect(taken?.move == -240)
                if let b = taken?.block, let a = alone?.block { #expect(b >= 200 && b < a, "taken \(b - 200) blocks after the jump, alone \(a - 200)") }
            } else {
                #expect(taken == nil)
            }
        }
    }

    @Test("An echo that stays where the canceller has it, or moves less than a millisecond, is no move")
    func noMove() {
        #expect(Self.run(Self.detector(), Self.signals(seconds: 6, move: 0, at: 0, nearDB: -10, seed: 7)).isEmpty)
        #expect(Self.run(Self.detector(), Self.signals(seconds: 4, move: 8, at: Self.rate, nearDB: -20, seed: 7)).isEmpty)
    }

    @Test("Nothing is learned while the canceller's prediction is not an echo (far end silent, canceller removing little)")
    func notLearning() {
        let s = Self.signals(seconds: 4, move: 300, at: Self.rate, nearDB: -20, seed: 9)
        #expect(Self.run(Self.detector(), s, farActive: false).isEmpty)
        #expect(Self.run(Self.detector(), s, cancellerERLE: 5).isEmpty)
    }

    @Test("Pushing blocks allocates nothing, a reported move included")
    func allocatesNothing() {
        let s = Self.signals(seconds: 3, move: 173, at: 2 * Self.rate, nearDB: -20, seed: 3)
        // Buffers of their own, the output as a canceller that never follows the move leaves it.
        let capture = UnsafeMutablePointer<Int16>.allocate(capacity: s.capture.count)
        let output = UnsafeMutablePointer<Int16>.allocate(capacity: s.capture.count)
        defer { capture.deallocate(); output.deallocate() }
        for n in s.capture.indices {
            capture[n] = s.capture[n]
            output[n] = Int16(clamping: Int(s.capture[n]) - Int(Int16(clamping: Int(s.echo[n + Self.lead]))))
        }
        func run(_ detector: EchoShiftDetector) {
            for b in 0..<(s.capture.count / Self.block) {
                _ = detector.push(capture: capture + b * Self.block, output: output + b * Self.block, farActive: true, cancellerERLE: 20)
            }
        }
        let counted = AllocationCounter.counted(Self.detector, run)
        #expect(AllocationCounter.isActive)
        #expect(counted.allocations == 0)
        #expect(counted.subject.moves >= 1)
    }

    @Test("A move beyond the search is not reported")
    func beyondSearch() {
        // 100 ms, past the 80 ms searched.
        #expect(Self.run(Self.detector(), Self.signals(seconds: 4, move: 1600, at: Self.rate, nearDB: -20, seed: 11)).isEmpty)
    }
}

@Suite("The echo stage follows a jump of the echo without starting the canceller over")
struct EchoStageMoveTests {
    static let block = EchoShiftDetectorTests.block, rate = EchoShiftDetectorTests.rate

    /// Runs an echo stage over `s`, whose far end is the prediction 50 ms ahead of the capture
    /// and whose echo moves by `move` at `at`; the stage, its resets before `at`, and the linear
    /// ERLE over the second from `at` + 0.5 s (the echo's energy over that of the output less the
    /// near end).
    static func run(_ s: (capture: [Int16], echo: [Double]), move: Int, at: Int, tuning: VoiceProcessingTuning = .init()) throws
        -> (stage: EchoStage, resetsBefore: Int, erle: Double) {
        let render = (0..<s.capture.count).map { Int16(clamping: Int(s.echo[$0 + EchoShiftDetectorTests.lead + 800])) }
        let canceller = try SpeexMDFEchoCanceller(blockSize: block, tailLength: rate / 4, sampleRate: rate)
        let scratch = ProcessingScratch(capacity: 2 * block, block: block)
        let stage = EchoStage(configuration: VoiceProcessingConfiguration(maximumFramesPerPeriod: block, tuning: tuning),
                              block: block, canceller: canceller, gated: false, scratch: scratch)
        var floats = [Float](repeating: 0, count: block)
        var energy = (capture: 0.0, output: 0.0), resetsBefore = 0
        for b in 0..<(s.capture.count / block) {
            let o = b * block
            for i in 0..<block { floats[i] = Float(render[o + i]) * (1 / 32768) }
            floats.withUnsafeBufferPointer { stage.pushRender($0.baseAddress!, block) }
            for i in 0..<block { scratch.blockIn[i] = s.capture[o + i] }
            stage.cancel()
            if o == at { resetsBefore = stage.resets }
            if o >= at + rate / 2 && o < at + rate + rate / 2 {
                for i in 0..<block {
                    let echo = s.echo[o + i + EchoShiftDetectorTests.lead - move]
                    let left = Double(scratch.blockOut[i]) - (Double(scratch.blockIn[i]) - echo)
                    energy.capture += echo * echo
                    energy.output += left * left
                }
            }
            stage.protectNearEnd()
        }
        return (stage, resetsBefore, 10 * Math.log10(energy.capture / max(energy.output, 1)))
    }

    @Test("An echo that jumps 30 ms later at 4 s: one move, no reset after it, the echo removed again within half a second")
    func followsJump() throws {
        let s = EchoShiftDetectorTests.signals(seconds: 8, move: 480, at: 4 * Self.rate, nearDB: nil, seed: 13)
        let r = try Self.run(s, move: 480, at: 4 * Self.rate)
        #expect(r.stage.echoMoves == 1)
        #expect(r.stage.resets == r.resetsBefore)
        #expect(r.erle > 20, "linear ERLE over the second from 0.5 s after the jump: \(r.erle) dB")
        print("linear ERLE over the second from 0.5 s after the jump: \(r.erle) dB")
    }

    @Test("An echo that jumps 15 ms earlier under a near end as loud as it, with the detector left only the estimator's agreement: the delay estimator re-places the reference at the detector's move, and the canceller goes on (without it, a reset)")
    func corroboratedJump() throws {
        let at = 4 * Self.rate
        let s = EchoShiftDetectorTests.signals(seconds: 8, move: -240, at: at, nearDB: 0, nearFrom: at, seed: 13)
        // No gain is enough for a move of the detector's own, and the health never resets the
        // canceller: only the estimator's re-placement is left to act on the move.
        var only = VoiceProcessingTuning()
        only.echoShift.minimumGainDB = 60
        only.echoShift.sustainedTests = 1000
        only.cancellerHealth.collapseWindows = 1000
        only.cancellerHealth.divergenceBlocks = 10000
        let r = try Self.run(s, move: -240, at: at, tuning: only)
        #expect(r.stage.echoMoves == 1)
        #expect(r.stage.resets == r.resetsBefore)
        var off = only
        off.echoShift.corroboratedTests = 1000
        let alone = try Self.run(s, move: -240, at: at, tuning: off)
        #expect(alone.stage.echoMoves == 0)
        #expect(alone.stage.resets == alone.resetsBefore + 1)
        print("linear ERLE from 0.5 s after the jump: \(r.erle) dB, without the rule \(alone.erle) dB")
    }
}
