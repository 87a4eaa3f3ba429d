// The tuning of what follows the echo stage: SpeexDSP's preprocessor and the noise depth it is
// set to, the comfort noise and the distortion suppressor after it, and the activity the unit
// reports.

extension VoiceProcessingTuning {
    /// The suppression, band by band below 3 kHz, of the residual SpeexDSP's estimate misses: a
    /// loudspeaker's distortion (`DistortionSuppressor`). Rates are per 10 ms block (a 20 ms block
    /// takes two steps at once). Its band split (edges 400 to 4500 Hz, five bands acted on) is
    /// fixed by the code and stays there.
    ///
    /// Thread safety: a value type; safe from any thread.
    public struct DistortionSuppressor: Sendable, Equatable, Codable {
        /// Share of each band's echo estimate held per 10 ms (over the room's decay).
        public var echoHoldDecay = 0.7
        /// Share of the leak's covariance and variance kept per 10 ms (about 0.5 s), and of the means.
        public var covarianceSmoothing = 0.98
        public var meanSmoothing = 0.95
        /// Echo-alone speech learned from before any gain moves, seconds.
        public var warmUpSeconds = 1.0
        /// Share of the gain's distance kept per sample, at 16 kHz.
        public var gainSmoothing = 0.97
        /// Where the near end dominates, a band's leak counts only its excess over this times the broadband leak ...
        public var margin = 1.5
        /// ... overestimated this many times in the gain `1 - overestimate x residual / output` ...
        public var overestimate = 3.0
        /// ... which goes no lower than this (-30 dB).
        public var minimumGain = 0.03
        /// The margin while the near end does not dominate (AEC3's two suppressor tunings, normal
        /// and near end); under 1, a band's residual under the broadband leak is lowered too.
        public var echoAloneMargin = 0.7
        /// The near end dominates a block whose linear output is this many times the residual the
        /// broadband leak expects (a power ratio, about 8 dB) ...
        public var nearEndRatio = 6.0
        /// ... and for this long after it, seconds.
        public var nearEndHoldSeconds = 0.25
        /// A block is echo alone when its capture is this many times the canceller's output (10 dB) ...
        public var echoAloneRatio = 10.0
        /// ... and its echo estimate's mean power (full scale 1) is over this (-70 dBFS).
        public var activePower = 1e-7
        /// The noise fill's floor: each band's least power over this much output, seconds.
        public var floorSeconds = 1.0

        /// The shipped values.
        public init() {}

        /// The values `decoder` holds; a missing key keeps its shipped value, an unknown one throws.
        public init(from decoder: any Decoder) throws {
            self.init()
            let c = try decoder.tuningContainer(CodingKeys.self)
            try c.update(&echoHoldDecay, .echoHoldDecay)
            try c.update(&covarianceSmoothing, .covarianceSmoothing)
            try c.update(&meanSmoothing, .meanSmoothing)
            try c.update(&warmUpSeconds, .warmUpSeconds)
            try c.update(&gainSmoothing, .gainSmoothing)
            try c.update(&margin, .margin)
            try c.update(&overestimate, .overestimate)
            try c.update(&minimumGain, .minimumGain)
            try c.update(&echoAloneMargin, .echoAloneMargin)
            try c.update(&nearEndRatio, .nearEndRatio)
            try c.update(&nearEndHoldSeconds, .nearEndHoldSeconds)
            try c.update(&echoAloneRatio, .echoAloneRatio)
            try c.update(&activePower, .activePower)
            try c.update(&floorSeconds, .floorSeconds)
        }

        func validate() throws(VoiceProcessingError) {
            try checkTuning(echoHoldDecay, in: 0...0.999, "distortionSuppressor.echoHoldDecay")
            try checkTuning(covarianceSmoothing, in: 0...0.9999, "distortionSuppressor.covarianceSmoothing")
            try checkTuning(meanSmoothing, in: 0...0.9999, "distortionSuppressor.meanSmoothing")
            try checkTuning(warmUpSeconds, in: 0...600, "distortionSuppressor.warmUpSeconds")
            try checkTuning(gainSmoothing, in: 0...0.9999, "distortionSuppressor.gainSmoothing")
            try checkTuning(margin, in: 0...100, "distortionSuppressor.margin")
            try checkTuning(overestimate, in: 0...100, "distortionSuppressor.overestimate")
            try checkTuning(minimumGain, in: 0...1, "distortionSuppressor.minimumGain")
            try checkTuning(echoAloneMargin, in: 0...100, "distortionSuppressor.echoAloneMargin")
            try checkTuning(nearEndRatio, in: 0...1e6, "distortionSuppressor.nearEndRatio")
            try checkTuning(nearEndHoldSeconds, in: 0...60, "distortionSuppressor.nearEndHoldSeconds")
            try checkTuning(echoAloneRatio, in: 0...1e6, "distortionSuppressor.echoAloneRatio")
            try checkTuning(activePower, in: 0...1, "distortionSuppressor.activePower")
            try checkTuning(floorSeconds, in: 0.01...60, "distortionSuppressor.floorSeconds")
        }
    }

    /// How deep the preprocessor suppresses noise, from the capture's noise floor (`NoiseDepth`).
    ///
    /// Thread safety: a value type; safe from any thread.
    public struct NoiseDepth: Sendable, Equatable, Codable {
        /// Where the noise floor is brought, under the loudest sound, dB.
        public var targetDB = 45.0
        /// The depth's range, dB; it starts (and restarts) at the maximum.
        public var minimumDB = 6
        public var maximumDB = 20
        /// The depth moves only by this much or more, dB.
        public var stepDB = 2
        /// How fast the held loudest sound falls, dB per second.
        public var loudestFallDBPerSecond = 3.0
        /// Capture before the depth first moves, seconds.
        public var settleSeconds = 2.0
        /// How fast the noise floor rises, dB per second.
        public var noiseFloorRiseDBPerSecond = 0.5

        /// The shipped values.
        public init() {}

        /// The values `decoder` holds; a missing key keeps its shipped value, an unknown one throws.
        public init(from decoder: any Decoder) throws {
            self.init()
            let c = try decoder.tuningContainer(CodingKeys.self)
            try c.update(&targetDB, .targetDB)
            try c.update(&minimumDB, .minimumDB)
            try c.update(&maximumDB, .maximumDB)
            try c.update(&stepDB, .stepDB)
            try c.update(&loudestFallDBPerSecond, .loudestFallDBPerSecond)
            try c.update(&settleSeconds, .settleSeconds)
            try c.update(&noiseFloorRiseDBPerSecond, .noiseFloorRiseDBPerSecond)
        }

        func validate() throws(VoiceProcessingError) {
            try checkTuning(targetDB, in: 0...120, "noiseDepth.targetDB")
            try checkTuning(minimumDB, in: 0...60, "noiseDepth.minimumDB")
            try checkTuning(maximumDB, in: minimumDB...60, "noiseDepth.maximumDB")
            try checkTuning(stepDB, in: 1...60, "noiseDepth.stepDB")
            try checkTuning(loudestFallDBPerSecond, in: 0...60, "noiseDepth.loudestFallDBPerSecond")
            try checkTuning(settleSeconds, in: 0...60, "noiseDepth.settleSeconds")
            try checkTuning(noiseFloorRiseDBPerSecond, in: 0...60, "noiseDepth.noiseFloorRiseDBPerSecond")
        }
    }

    /// The noise put back where residual echo suppression took it (`ComfortNoise`).
    ///
    /// Thread safety: a value type; safe from any thread.
    public struct ComfortNoise: Sendable, Equatable, Codable {
        /// The fill's level against the suppressed noise floor, dB.
        public var levelDB = -10.0
        /// Share of the way each band's capture power moves per block (about 100 ms at 0.1).
        public var captureSmoothing = 0.1
        /// How fast each band's noise floor rises, dB per second.
        public var noiseFloorRiseDBPerSecond = 0.5
        /// Band edges, Hz, rising (bands narrower than a bin merge into their neighbours).
        public var bandEdgesHz = VoiceProcessingTuning.barkEdgesHz

        /// The shipped values.
        public init() {}

        /// The values `decoder` holds; a missing key keeps its shipped value, an unknown one throws.
        public init(from decoder: any Decoder) throws {
            self.init()
            let c = try decoder.tuningContainer(CodingKeys.self)
            try c.update(&levelDB, .levelDB)
            try c.update(&captureSmoothing, .captureSmoothing)
            try c.update(&noiseFloorRiseDBPerSecond, .noiseFloorRiseDBPerSecond)
            try c.update(&bandEdgesHz, .bandEdgesHz)
        }

        func validate() throws(VoiceProcessingError) {
            try checkTuning(levelDB, in: -60...20, "comfortNoise.levelDB")
            try checkTuning(captureSmoothing, in: 0.0001...1, "comfortNoise.captureSmoothing")
            try checkTuning(noiseFloorRiseDBPerSecond, in: 0...60, "comfortNoise.noiseFloorRiseDBPerSecond")
            try checkTuning(edges: bandEdgesHz, in: 1...24000, "comfortNoise.bandEdgesHz")
        }
    }

    /// SpeexDSP's preprocessor as the unit sets it up. Its speech thresholds (35 % to start, 20 %
    /// to continue) are SpeexDSP's own, read from it.
    ///
    /// Thread safety: a value type; safe from any thread.
    public struct PostFilter: Sendable, Equatable, Codable {
        /// The most gain the AGC may apply, dB.
        public var agcMaximumGainDB = 20

        /// The shipped values.
        public init() {}

        /// The values `decoder` holds; a missing key keeps its shipped value, an unknown one throws.
        public init(from decoder: any Decoder) throws {
            self.init()
            let c = try decoder.tuningContainer(CodingKeys.self)
            try c.update(&agcMaximumGainDB, .agcMaximumGainDB)
        }

        func validate() throws(VoiceProcessingError) {
            try checkTuning(agcMaximumGainDB, in: 0...60, "postFilter.agcMaximumGainDB")
        }
    }

    /// Who is talking, as the unit reports it (`ActivityTracker`): the far end for advanced
    /// ducking, and speech while muted.
    ///
    /// Thread safety: a value type; safe from any thread.
    public struct Activity: Sendable, Equatable, Codable {
        /// Render mean power (full scale 1) over which the far end talks in a period (-50 dBFS).
        public var farActivePower: Float = 1e-5
        /// Speech while muted: counted after this much speech, ended after this much without, seconds.
        public var mutedSpeechOnsetSeconds = 0.15
        public var mutedSpeechEndSeconds = 0.5
        /// Advanced ducking holds while either side talked within this, seconds.
        public var conversationHoldSeconds = 0.5

        /// The shipped values.
        public init() {}

        /// The values `decoder` holds; a missing key keeps its shipped value, an unknown one throws.
        public init(from decoder: any Decoder) throws {
            self.init()
            let c = try decoder.tuningContainer(CodingKeys.self)
            try c.update(&farActivePower, .farActivePower)
            try c.update(&mutedSpeechOnsetSeconds, .mutedSpeechOnsetSeconds)
            try c.update(&mutedSpeechEndSeconds, .mutedSpeechEndSeconds)
            try c.update(&conversationHoldSeconds, .conversationHoldSeconds)
        }

        func validate() throws(VoiceProcessingError) {
            try checkTuning(farActivePower, in: 0...1, "activity.farActivePower")
            try checkTuning(mutedSpeechOnsetSeconds, in: 0...60, "activity.mutedSpeechOnsetSeconds")
            try checkTuning(mutedSpeechEndSeconds, in: 0...60, "activity.mutedSpeechEndSeconds")
            try checkTuning(conversationHoldSeconds, in: 0...60, "activity.conversationHoldSeconds")
        }
    }
}
