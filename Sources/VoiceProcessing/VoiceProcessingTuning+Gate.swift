// The tuning of what watches the linear canceller and holds back what it leaves: its health,
// the echo gate, and the gate's band-by-band near-end test.

extension VoiceProcessingTuning {
    /// The linear canceller watched from outside: its ERLE, divergence and collapse (`CancellerHealth`).
    ///
    /// Thread safety: a value type; safe from any thread.
    public struct CancellerHealth: Sendable, Equatable, Codable {
        /// Far-end mean power (full scale 1) above which a block counts as far-end activity (-50 dBFS).
        public var farActivePower = 1e-5
        /// Share of the way the reported ERLE's energy averages move per far-end block (about a second).
        public var erleAverageRate = 0.02
        /// Divergence: the output's energy over this times the input's (+3 dB) ...
        public var divergenceRatio = 2.0
        /// ... plus this mean power per sample (16-bit units squared, about -70 dBFS) ...
        public var divergenceFloor = 100.0
        /// ... in this many far-end blocks in a row resets the canceller.
        public var divergenceBlocks = 10
        /// The window collapse is judged over, ms of far-end activity.
        public var windowMilliseconds = 200
        /// ERLE at which the canceller has converged since its last reset, dB, averaged over at
        /// least this many windows, at this share of the way per far-end block.
        public var convergedERLEDB = 15.0
        public var convergedWindows = 5
        public var convergenceAverageRate = 0.02
        /// Windows in a row that must remove nothing (output as loud as input) for a collapse.
        public var collapseWindows = 2
        /// A window whose capture is over this times the echo return learned at convergence
        /// (6 dB) holds near-end speech and does not count.
        public var nearEndReturnRatio = 4.0

        /// The shipped values.
        public init() {}

        /// The values `decoder` holds; a missing key keeps its shipped value, an unknown one throws.
        public init(from decoder: any Decoder) throws {
            self.init()
            let c = try decoder.tuningContainer(CodingKeys.self)
            try c.update(&farActivePower, .farActivePower)
            try c.update(&erleAverageRate, .erleAverageRate)
            try c.update(&divergenceRatio, .divergenceRatio)
            try c.update(&divergenceFloor, .divergenceFloor)
            try c.update(&divergenceBlocks, .divergenceBlocks)
            try c.update(&windowMilliseconds, .windowMilliseconds)
            try c.update(&convergedERLEDB, .convergedERLEDB)
            try c.update(&convergedWindows, .convergedWindows)
            try c.update(&convergenceAverageRate, .convergenceAverageRate)
            try c.update(&collapseWindows, .collapseWindows)
            try c.update(&nearEndReturnRatio, .nearEndReturnRatio)
        }

        func validate() throws(VoiceProcessingError) {
            try checkTuning(farActivePower, in: 0...1, "cancellerHealth.farActivePower")
            try checkTuning(erleAverageRate, in: 0.0001...1, "cancellerHealth.erleAverageRate")
            try checkTuning(divergenceRatio, in: 1...1000, "cancellerHealth.divergenceRatio")
            try checkTuning(divergenceFloor, in: 0...1e9, "cancellerHealth.divergenceFloor")
            try checkTuning(divergenceBlocks, in: 1...10000, "cancellerHealth.divergenceBlocks")
            try checkTuning(windowMilliseconds, in: 10...10000, "cancellerHealth.windowMilliseconds")
            try checkTuning(convergedERLEDB, in: 0...80, "cancellerHealth.convergedERLEDB")
            try checkTuning(convergedWindows, in: 1...1000, "cancellerHealth.convergedWindows")
            try checkTuning(convergenceAverageRate, in: 0.0001...1, "cancellerHealth.convergenceAverageRate")
            try checkTuning(collapseWindows, in: 1...1000, "cancellerHealth.collapseWindows")
            try checkTuning(nearEndReturnRatio, in: 1...1e6, "cancellerHealth.nearEndReturnRatio")
        }
    }

    /// The echo gate (`EchoGate`): the startup hold until the canceller converges, then the
    /// residual lowered as far as it is coherent with the far end. Powers are mean squares at
    /// full scale 1; ratios of powers are plain numbers (10 is 10 dB).
    ///
    /// Thread safety: a value type; safe from any thread.
    public struct Gate: Sendable, Equatable, Codable {
        /// Linear ERLE at which the hold lets go, dB: at the start of a call, and after a reset.
        public var releaseERLEDB = 15.0
        public var rearmedReleaseERLEDB = 25.0
        /// Far-end speech after which the hold lets go however the canceller does, seconds.
        public var maximumActiveSeconds = 5.0
        /// Far-end speech after which a re-armed hold lets go if the canceller removes under
        /// ``stalledERLEDB``, seconds; and that ERLE, dB.
        public var stallSeconds = 2.5
        public var stalledERLEDB = 10.0
        /// The hold's gain while only the far end talks (about -30 dB).
        public var floorGain: Float = 0.0316
        /// The near end talks when the capture is this much over the echo it could be (4 dB).
        public var nearEndMargin = 2.5
        /// Time the held far-end envelope takes to fall 60 dB (a reverberant room's tail), seconds.
        public var envelopeDecaySeconds = 0.5
        /// Far-end power under which the far end is silent (-60 dBFS).
        public var farSilentPower = 1e-6
        /// The far end itself plays when its power is over this share of its held envelope (-10 dB).
        public var farPlaysShare = 0.1
        /// The echo return's peak tracking: rise and fall per block, dB.
        public var echoReturnRiseDB = 0.05
        public var echoReturnFallDB = 0.01
        /// In the hold, the coherence test learns echo alone from blocks the canceller takes
        /// this much out of (3 dB).
        public var holdLearnRemoval = 2.0
        /// Share of the way the hold's ERLE averages move per far-end-only block.
        public var erleAverageRate = 0.05
        /// Far-end-only speech the ERLE is averaged over before it may release the hold, seconds.
        public var minimumMeasuredSeconds = 0.3
        /// Far-end-only speech before the averages count towards the best removal, seconds.
        public var minimumRemovalSeconds = 0.5
        /// The near end talks when a block's capture over output is under this share of the best
        /// removal (-8 dB), once that is at least ``minimumBestRemoval`` (10 dB), with the capture
        /// over ``shortfallNoiseMargin`` times its noise floor (6 dB).
        public var removalShortfall = 0.158
        public var minimumBestRemoval = 10.0
        public var shortfallNoiseMargin = 4.0
        /// Seconds in a row the canceller must fall short before that counts, and how long a run
        /// keeps later short blocks counting.
        public var shortfallOnsetSeconds = 0.03
        public var shortfallHoldSeconds = 0.3
        /// Residual coherence from which the output is lowered, and at which it is at the floor.
        public var residualStart = 0.2
        public var residualFull = 0.5
        /// Estimate correlation under which the output opposes the canceller's own estimate (in
        /// the suite's double talk, with a filter that fits, its 1st percentile is -0.2 to -0.38;
        /// after a path change -0.42 to -0.85), and the span over which it is then lowered to the floor.
        public var opposedEstimate = -0.4
        public var opposedSpan = 0.3
        /// The opposition is judged only while the output is over this share of the capture (the
        /// canceller removes under 3 dB).
        public var opposedOutputShare = 0.5
        /// Once converged, the coherence test learns echo alone while the far end is this many times
        /// ``farSilentPower`` and the canceller takes this much out (10 dB each).
        public var convergedLearnFar = 10.0
        public var convergedLearnRemoval = 10.0
        /// How deep the coherence rules lower the output at most, dB.
        public var loweredDepthDB = 30.0
        /// How far ahead of the reference the gate also looks at the far end, ms.
        public var leadMilliseconds = 40.0
        /// Where the gate's own lowering above the crossover starts (`HighBandGain`), Hz.
        public var highBandCutoffHz = 4000.0
        /// How fast the capture's noise floor rises, dB per second.
        public var noiseFloorRiseDBPerSecond = 0.5

        /// The shipped values.
        public init() {}

        /// The values `decoder` holds; a missing key keeps its shipped value, an unknown one throws.
        public init(from decoder: any Decoder) throws {
            self.init()
            let c = try decoder.tuningContainer(CodingKeys.self)
            try c.update(&releaseERLEDB, .releaseERLEDB)
            try c.update(&rearmedReleaseERLEDB, .rearmedReleaseERLEDB)
            try c.update(&maximumActiveSeconds, .maximumActiveSeconds)
            try c.update(&stallSeconds, .stallSeconds)
            try c.update(&stalledERLEDB, .stalledERLEDB)
            try c.update(&floorGain, .floorGain)
            try c.update(&nearEndMargin, .nearEndMargin)
            try c.update(&envelopeDecaySeconds, .envelopeDecaySeconds)
            try c.update(&farSilentPower, .farSilentPower)
            try c.update(&farPlaysShare, .farPlaysShare)
            try c.update(&echoReturnRiseDB, .echoReturnRiseDB)
            try c.update(&echoReturnFallDB, .echoReturnFallDB)
            try c.update(&holdLearnRemoval, .holdLearnRemoval)
            try c.update(&erleAverageRate, .erleAverageRate)
            try c.update(&minimumMeasuredSeconds, .minimumMeasuredSeconds)
            try c.update(&minimumRemovalSeconds, .minimumRemovalSeconds)
            try c.update(&removalShortfall, .removalShortfall)
            try c.update(&minimumBestRemoval, .minimumBestRemoval)
            try c.update(&shortfallNoiseMargin, .shortfallNoiseMargin)
            try c.update(&shortfallOnsetSeconds, .shortfallOnsetSeconds)
            try c.update(&shortfallHoldSeconds, .shortfallHoldSeconds)
            try c.update(&residualStart, .residualStart)
            try c.update(&residualFull, .residualFull)
            try c.update(&opposedEstimate, .opposedEstimate)
            try c.update(&opposedSpan, .opposedSpan)
            try c.update(&opposedOutputShare, .opposedOutputShare)
            try c.update(&convergedLearnFar, .convergedLearnFar)
            try c.update(&convergedLearnRemoval, .convergedLearnRemoval)
            try c.update(&loweredDepthDB, .loweredDepthDB)
            try c.update(&leadMilliseconds, .leadMilliseconds)
            try c.update(&highBandCutoffHz, .highBandCutoffHz)
            try c.update(&noiseFloorRiseDBPerSecond, .noiseFloorRiseDBPerSecond)
        }

        func validate() throws(VoiceProcessingError) {
            try checkTuning(releaseERLEDB, in: 0...80, "gate.releaseERLEDB")
            try checkTuning(rearmedReleaseERLEDB, in: 0...80, "gate.rearmedReleaseERLEDB")
            try checkTuning(maximumActiveSeconds, in: 0...600, "gate.maximumActiveSeconds")
            try checkTuning(stallSeconds, in: 0...600, "gate.stallSeconds")
            try checkTuning(stalledERLEDB, in: 0...80, "gate.stalledERLEDB")
            try checkTuning(floorGain, in: 0...1, "gate.floorGain")
            try checkTuning(nearEndMargin, in: 0...1e6, "gate.nearEndMargin")
            try checkTuning(envelopeDecaySeconds, in: 0.001...60, "gate.envelopeDecaySeconds")
            try checkTuning(farSilentPower, in: 0...1, "gate.farSilentPower")
            try checkTuning(farPlaysShare, in: 0...1, "gate.farPlaysShare")
            try checkTuning(echoReturnRiseDB, in: 0...10, "gate.echoReturnRiseDB")
            try checkTuning(echoReturnFallDB, in: 0...10, "gate.echoReturnFallDB")
            try checkTuning(holdLearnRemoval, in: 0...1e6, "gate.holdLearnRemoval")
            try checkTuning(erleAverageRate, in: 0.0001...1, "gate.erleAverageRate")
            try checkTuning(minimumMeasuredSeconds, in: 0...60, "gate.minimumMeasuredSeconds")
            try checkTuning(minimumRemovalSeconds, in: 0...60, "gate.minimumRemovalSeconds")
            try checkTuning(removalShortfall, in: 0...1, "gate.removalShortfall")
            try checkTuning(minimumBestRemoval, in: 0...1e9, "gate.minimumBestRemoval")
            try checkTuning(shortfallNoiseMargin, in: 0...1e6, "gate.shortfallNoiseMargin")
            try checkTuning(shortfallOnsetSeconds, in: 0...10, "gate.shortfallOnsetSeconds")
            try checkTuning(shortfallHoldSeconds, in: 0...10, "gate.shortfallHoldSeconds")
            try checkTuning(residualStart, in: 0...0.99, "gate.residualStart")
            // Above the start, so the lowering's span is not zero.
            try checkTuning(residualFull, in: residualStart.nextUp...1, "gate.residualFull")
            try checkTuning(opposedEstimate, in: -1...0, "gate.opposedEstimate")
            try checkTuning(opposedSpan, in: 0.01...2, "gate.opposedSpan")
            try checkTuning(opposedOutputShare, in: 0...1, "gate.opposedOutputShare")
            try checkTuning(convergedLearnFar, in: 0...1e6, "gate.convergedLearnFar")
            try checkTuning(convergedLearnRemoval, in: 0...1e9, "gate.convergedLearnRemoval")
            try checkTuning(loweredDepthDB, in: 0...80, "gate.loweredDepthDB")
            try checkTuning(leadMilliseconds, in: 0...500, "gate.leadMilliseconds")
            try checkTuning(highBandCutoffHz, in: 500...24000, "gate.highBandCutoffHz")
            try checkTuning(noiseFloorRiseDBPerSecond, in: 0...60, "gate.noiseFloorRiseDBPerSecond")
        }
    }
}
