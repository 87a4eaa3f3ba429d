// The tuning of the echo gate's two tests of whether the near end talks: band by band against
// a model of the echo, and by the far end's coherence with the capture.

extension VoiceProcessingTuning {
    /// The echo gate's band-by-band near-end test during the startup hold (`NearEndBandDetector`):
    /// a power-domain model of the echo per band, against which a talker stands out. Ratios of
    /// powers in dB; spreads are standard deviations of the log power ratio.
    ///
    /// Thread safety: a value type; safe from any thread.
    public struct NearEndBands: Sendable, Equatable, Codable {
        /// Band edges, Hz, rising (bands narrower than a bin merge into their neighbours).
        public var bandEdgesHz = VoiceProcessingTuning.barkEdgesHz
        /// Bands over the model that start near-end speech, and that continue it.
        public var startBands = 4
        public var continueBands = 3
        /// How many of a band's spreads over the model a start and a continuation need.
        public var startSpread = 3.0
        public var continueSpread = 1.5
        /// And at least this far over it, dB.
        public var startFloorDB = 9.0
        public var continueFloorDB = 6.0
        /// The noise counts this far over its floor, dB.
        public var noiseMarginDB = 6.0
        /// Blocks a band learns from before it takes part.
        public var minimumLearnedBlocks = 25
        /// A band whose echo strays more than this from the model says nothing (nepers of power, 7 dB rms).
        public var maximumSpread = 1.6
        /// The room model's decay, seconds for 60 dB.
        public var roomDecaySeconds = 0.6
        /// The far end's held envelope per band, seconds for 60 dB.
        public var envelopeDecaySeconds = 0.5
        /// How fast each band's noise floor rises, dB per block.
        public var noiseRiseDBPerBlock = 0.02
        /// Blocks learned as a running mean, and the learning rate after them.
        public var runningMeanBlocks = 20
        public var learningRate = 0.02
        /// A band learns only while its far end is over this share of its envelope (-10 dB) and
        /// its capture this many times its noise floor (6 dB).
        public var learnFarShare = 0.1
        public var learnNoiseMargin = 4.0
        /// How long near-end speech is held after the test last found it, seconds.
        public var holdSeconds = 0.15

        /// The shipped values.
        public init() {}

        /// The values `decoder` holds; a missing key keeps its shipped value, an unknown one throws.
        public init(from decoder: any Decoder) throws {
            self.init()
            let c = try decoder.tuningContainer(CodingKeys.self)
            try c.update(&bandEdgesHz, .bandEdgesHz)
            try c.update(&startBands, .startBands)
            try c.update(&continueBands, .continueBands)
            try c.update(&startSpread, .startSpread)
            try c.update(&continueSpread, .continueSpread)
            try c.update(&startFloorDB, .startFloorDB)
            try c.update(&continueFloorDB, .continueFloorDB)
            try c.update(&noiseMarginDB, .noiseMarginDB)
            try c.update(&minimumLearnedBlocks, .minimumLearnedBlocks)
            try c.update(&maximumSpread, .maximumSpread)
            try c.update(&roomDecaySeconds, .roomDecaySeconds)
            try c.update(&envelopeDecaySeconds, .envelopeDecaySeconds)
            try c.update(&noiseRiseDBPerBlock, .noiseRiseDBPerBlock)
            try c.update(&runningMeanBlocks, .runningMeanBlocks)
            try c.update(&learningRate, .learningRate)
            try c.update(&learnFarShare, .learnFarShare)
            try c.update(&learnNoiseMargin, .learnNoiseMargin)
            try c.update(&holdSeconds, .holdSeconds)
        }

        func validate() throws(VoiceProcessingError) {
            try checkTuning(edges: bandEdgesHz, in: 1...24000, "nearEndBands.bandEdgesHz")
            try checkTuning(startBands, in: 1...100, "nearEndBands.startBands")
            try checkTuning(continueBands, in: 1...100, "nearEndBands.continueBands")
            try checkTuning(startSpread, in: 0...20, "nearEndBands.startSpread")
            try checkTuning(continueSpread, in: 0...20, "nearEndBands.continueSpread")
            try checkTuning(startFloorDB, in: 0...60, "nearEndBands.startFloorDB")
            try checkTuning(continueFloorDB, in: 0...60, "nearEndBands.continueFloorDB")
            try checkTuning(noiseMarginDB, in: 0...60, "nearEndBands.noiseMarginDB")
            try checkTuning(minimumLearnedBlocks, in: 1...100_000, "nearEndBands.minimumLearnedBlocks")
            try checkTuning(maximumSpread, in: 0...20, "nearEndBands.maximumSpread")
            try checkTuning(roomDecaySeconds, in: 0.001...60, "nearEndBands.roomDecaySeconds")
            try checkTuning(envelopeDecaySeconds, in: 0.001...60, "nearEndBands.envelopeDecaySeconds")
            try checkTuning(noiseRiseDBPerBlock, in: 0...10, "nearEndBands.noiseRiseDBPerBlock")
            try checkTuning(runningMeanBlocks, in: 1...100_000, "nearEndBands.runningMeanBlocks")
            try checkTuning(learningRate, in: 0.0001...1, "nearEndBands.learningRate")
            try checkTuning(learnFarShare, in: 0...1, "nearEndBands.learnFarShare")
            try checkTuning(learnNoiseMargin, in: 0...1e6, "nearEndBands.learnNoiseMargin")
            try checkTuning(holdSeconds, in: 0...10, "nearEndBands.holdSeconds")
        }
    }

    /// The magnitude-squared coherence of the far end with the capture (near-end test) and with
    /// the canceller's output (the residual the gate lowers) (`EchoCoherence`).
    ///
    /// Thread safety: a value type; safe from any thread.
    public struct Coherence: Sendable, Equatable, Codable {
        /// The near end talks when the coherence is under this share of the level echo alone
        /// reaches: in a re-armed hold, which holds back whatever it does not find ...
        public var nearEndRatio = 0.6
        /// ... and after the release, where a talker it does not find only faces the residual's
        /// coherence ramp: an echo that moved from its reference lowers the coherence too, and
        /// what it leaves is then passed as a talker's.
        public var residualNearEndRatio = 0.4
        /// Echo-alone blocks the level must be learned from before the test speaks.
        public var minimumLearnedBlocks = 50
        /// Blocks the echo-alone level is learned as a running mean, and the learning rate after them.
        public var runningMeanBlocks = 20
        public var learningRate = 0.02
        /// Share of the cross-spectra kept per block (about 100 ms at 0.9 and 10 ms blocks).
        public var smoothing = 0.9
        /// The band the coherence is averaged over, Hz, and the top of the band above it (the
        /// gate's own lowering of fricatives' echo).
        public var bandLowHz = 300
        public var bandHighHz = 4000
        public var highBandTopHz = 8000

        /// The shipped values.
        public init() {}

        /// The values `decoder` holds; a missing key keeps its shipped value, an unknown one throws.
        public init(from decoder: any Decoder) throws {
            self.init()
            let c = try decoder.tuningContainer(CodingKeys.self)
            try c.update(&nearEndRatio, .nearEndRatio)
            try c.update(&residualNearEndRatio, .residualNearEndRatio)
            try c.update(&minimumLearnedBlocks, .minimumLearnedBlocks)
            try c.update(&runningMeanBlocks, .runningMeanBlocks)
            try c.update(&learningRate, .learningRate)
            try c.update(&smoothing, .smoothing)
            try c.update(&bandLowHz, .bandLowHz)
            try c.update(&bandHighHz, .bandHighHz)
            try c.update(&highBandTopHz, .highBandTopHz)
        }

        func validate() throws(VoiceProcessingError) {
            try checkTuning(nearEndRatio, in: 0...1, "coherence.nearEndRatio")
            try checkTuning(residualNearEndRatio, in: 0...1, "coherence.residualNearEndRatio")
            try checkTuning(minimumLearnedBlocks, in: 1...100_000, "coherence.minimumLearnedBlocks")
            try checkTuning(runningMeanBlocks, in: 1...100_000, "coherence.runningMeanBlocks")
            try checkTuning(learningRate, in: 0.0001...1, "coherence.learningRate")
            try checkTuning(smoothing, in: 0...0.999, "coherence.smoothing")
            // Wide enough to hold bins at every block size and rate (10 ms at 16 kHz: 31 Hz a bin).
            try checkTuning(bandLowHz, in: 50...4000, "coherence.bandLowHz")
            try checkTuning(bandHighHz, in: (bandLowHz + 200)...8000, "coherence.bandHighHz")
            try checkTuning(highBandTopHz, in: bandHighHz...24000, "coherence.highBandTopHz")
        }
    }
}
