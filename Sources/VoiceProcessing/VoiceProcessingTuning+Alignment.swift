// The tuning of the echo reference's alignment: where it is read, the delay estimator, the
// drift estimator, and the echo-path detector that listens to the delay estimator.

extension VoiceProcessingTuning {
    /// Where the canceller's reference is read from the loudspeaker history (`EchoAlignment`).
    ///
    /// Thread safety: a value type; safe from any thread.
    public struct Alignment: Sendable, Equatable, Codable {
        /// Where the echo's direct path is placed after the reference, ms; a move back to where
        /// the reference can be read between samples needs the echo half this after the floor.
        public var marginMilliseconds = 4.0
        /// How far before the echo's earliest arrival (a diffuse room's onset) the reference goes
        /// when that comes before the margin, ms.
        public var onsetMarginMilliseconds = 2.0
        /// The band after the reference the direct path may wander in before the reference is
        /// re-placed (and the canceller reset), ms: its start and its end.
        public var minimumResidualMilliseconds = 0.5
        public var maximumResidualMilliseconds = 32.0
        /// How close two delay measurements must be to confirm each other, ms.
        public var agreementMilliseconds = 1.0
        /// A re-placement that moves the reference by more than this resets the canceller, ms.
        public var resetMoveMilliseconds = 1.0
        /// A reported device delay this far from the smoothed one is a step, ms.
        public var deviceStepMilliseconds = 2.0
        /// Periods in a row a device-delay step must persist before it is followed.
        public var deviceStepPeriods = 5
        /// Share of the way the smoothed device delay moves towards each report (jitter), per period.
        public var deviceSmoothing = 0.02
        /// The least delay the reference is placed at when drift is followed, in half-lengths of
        /// the sinc kernel (16 samples): 1 is the look-ahead a read between samples needs, the
        /// rest headroom for a negative drift.
        public var interpolationFloorHalfKernels = 2.0
        /// How far under the device delay the delay estimator starts its search, ms.
        public var searchBeforeDeviceMilliseconds = 50
        /// How far the search's start must be from where it is before it moves, ms (every move
        /// forgets the delay estimator's average).
        public var searchMoveMilliseconds = 10

        /// The shipped values.
        public init() {}

        /// The values `decoder` holds; a missing key keeps its shipped value, an unknown one throws.
        public init(from decoder: any Decoder) throws {
            self.init()
            let c = try decoder.tuningContainer(CodingKeys.self)
            try c.update(&marginMilliseconds, .marginMilliseconds)
            try c.update(&onsetMarginMilliseconds, .onsetMarginMilliseconds)
            try c.update(&minimumResidualMilliseconds, .minimumResidualMilliseconds)
            try c.update(&maximumResidualMilliseconds, .maximumResidualMilliseconds)
            try c.update(&agreementMilliseconds, .agreementMilliseconds)
            try c.update(&resetMoveMilliseconds, .resetMoveMilliseconds)
            try c.update(&deviceStepMilliseconds, .deviceStepMilliseconds)
            try c.update(&deviceStepPeriods, .deviceStepPeriods)
            try c.update(&deviceSmoothing, .deviceSmoothing)
            try c.update(&interpolationFloorHalfKernels, .interpolationFloorHalfKernels)
            try c.update(&searchBeforeDeviceMilliseconds, .searchBeforeDeviceMilliseconds)
            try c.update(&searchMoveMilliseconds, .searchMoveMilliseconds)
        }

        func validate() throws(VoiceProcessingError) {
            try checkTuning(marginMilliseconds, in: 0...50, "alignment.marginMilliseconds")
            try checkTuning(onsetMarginMilliseconds, in: 0...50, "alignment.onsetMarginMilliseconds")
            try checkTuning(minimumResidualMilliseconds, in: 0...50, "alignment.minimumResidualMilliseconds")
            try checkTuning(maximumResidualMilliseconds, in: minimumResidualMilliseconds...1000,
                            "alignment.maximumResidualMilliseconds")
            try checkTuning(agreementMilliseconds, in: 0...50, "alignment.agreementMilliseconds")
            try checkTuning(resetMoveMilliseconds, in: 0...50, "alignment.resetMoveMilliseconds")
            try checkTuning(deviceStepMilliseconds, in: 0...100, "alignment.deviceStepMilliseconds")
            try checkTuning(deviceStepPeriods, in: 1...1000, "alignment.deviceStepPeriods")
            try checkTuning(deviceSmoothing, in: 0...1, "alignment.deviceSmoothing")
            try checkTuning(interpolationFloorHalfKernels, in: 1...64, "alignment.interpolationFloorHalfKernels")
            try checkTuning(searchBeforeDeviceMilliseconds, in: 0...500, "alignment.searchBeforeDeviceMilliseconds")
            try checkTuning(searchMoveMilliseconds, in: 0...searchBeforeDeviceMilliseconds, "alignment.searchMoveMilliseconds")
        }
    }

    /// The delay estimator: GCC-PHAT of the far end and the microphone, decimated to 4 kHz
    /// (`DelayEstimator`), and the tracker of the whole response's shift the drift is fitted to
    /// (`ResponseShiftTracker`). The decimation (4 kHz, its 1.6 kHz Kaiser-windowed lowpass)
    /// is fixed by the algorithm and stays in code.
    ///
    /// Thread safety: a value type; safe from any thread.
    public struct DelayEstimator: Sendable, Equatable, Codable {
        /// The microphone signal cross-correlated per measurement, ms.
        public var windowMilliseconds = 256
        /// Time between measurements, ms.
        public var hopMilliseconds = 128
        /// Share of the averaged cross-spectrum kept per hop (about a second at 0.82).
        public var crossSpectrumSmoothing: Float = 0.82
        /// Share of the way the running levels a hop is weighted against move per hop.
        public var levelRate: Float = 0.05
        /// Hops averaged before the first measurement.
        public var minimumAveragedHops = 2
        /// The band the correlation is whitened over, Hz.
        public var bandLowHz = 150.0
        public var bandHighHz = 1800.0
        /// The whitening's floor, as a share of the band's mean magnitude.
        public var whiteningFloor: Float = 1e-3
        /// Mean power (full scale 1) under which a hop is skipped: the far end's (-70 dBFS) and
        /// the microphone's (-100 dBFS).
        public var farSilentPower: Float = 1e-7
        public var captureSilentPower: Float = 1e-10
        /// The z-score above which a peak is real: what the alignment, the shift tracker (so the
        /// drift) and the echo-path detector act on.
        public var confidentZScore = 7.0
        /// How far before the peak the earliest arrival is searched, ms; the share of the
        /// peak's height over the mean it must reach there, and the z-score.
        public var onsetSearchMilliseconds = 40
        public var onsetShare: Float = 0.4
        public var onsetZScore: Float = 6
        /// The share of the response the current spectrum must still share with the shift
        /// tracker's snapshot (under it, the room changed and a new snapshot starts).
        public var shiftMinimumCoherence = 0.2
        /// Decimated lags searched on each side of the last shift before refining.
        public var shiftSearchRadius = 3

        /// The shipped values.
        public init() {}

        /// The values `decoder` holds; a missing key keeps its shipped value, an unknown one throws.
        public init(from decoder: any Decoder) throws {
            self.init()
            let c = try decoder.tuningContainer(CodingKeys.self)
            try c.update(&windowMilliseconds, .windowMilliseconds)
            try c.update(&hopMilliseconds, .hopMilliseconds)
            try c.update(&crossSpectrumSmoothing, .crossSpectrumSmoothing)
            try c.update(&levelRate, .levelRate)
            try c.update(&minimumAveragedHops, .minimumAveragedHops)
            try c.update(&bandLowHz, .bandLowHz)
            try c.update(&bandHighHz, .bandHighHz)
            try c.update(&whiteningFloor, .whiteningFloor)
            try c.update(&farSilentPower, .farSilentPower)
            try c.update(&captureSilentPower, .captureSilentPower)
            try c.update(&confidentZScore, .confidentZScore)
            try c.update(&onsetSearchMilliseconds, .onsetSearchMilliseconds)
            try c.update(&onsetShare, .onsetShare)
            try c.update(&onsetZScore, .onsetZScore)
            try c.update(&shiftMinimumCoherence, .shiftMinimumCoherence)
            try c.update(&shiftSearchRadius, .shiftSearchRadius)
        }

        func validate() throws(VoiceProcessingError) {
            try checkTuning(windowMilliseconds, in: 64...1024, "delayEstimator.windowMilliseconds")
            try checkTuning(hopMilliseconds, in: 16...windowMilliseconds, "delayEstimator.hopMilliseconds")
            try checkTuning(crossSpectrumSmoothing, in: 0...0.999, "delayEstimator.crossSpectrumSmoothing")
            try checkTuning(levelRate, in: 0.001...1, "delayEstimator.levelRate")
            try checkTuning(minimumAveragedHops, in: 1...100, "delayEstimator.minimumAveragedHops")
            // Under 2 kHz, the decimated rate's Nyquist frequency, and several bins wide.
            try checkTuning(bandLowHz, in: 50...1800, "delayEstimator.bandLowHz")
            try checkTuning(bandHighHz, in: (bandLowHz + 100)...1950, "delayEstimator.bandHighHz")
            try checkTuning(whiteningFloor, in: 0...1, "delayEstimator.whiteningFloor")
            try checkTuning(farSilentPower, in: 0...1, "delayEstimator.farSilentPower")
            try checkTuning(captureSilentPower, in: 0...1, "delayEstimator.captureSilentPower")
            try checkTuning(confidentZScore, in: 1...100, "delayEstimator.confidentZScore")
            try checkTuning(onsetSearchMilliseconds, in: 0...200, "delayEstimator.onsetSearchMilliseconds")
            try checkTuning(onsetShare, in: 0...1, "delayEstimator.onsetShare")
            try checkTuning(onsetZScore, in: 0...100, "delayEstimator.onsetZScore")
            try checkTuning(shiftMinimumCoherence, in: 0...1, "delayEstimator.shiftMinimumCoherence")
            try checkTuning(shiftSearchRadius, in: 1...64, "delayEstimator.shiftSearchRadius")
        }
    }

    /// The clock drift: a least-squares line through the recent delay measurements (`DriftEstimator`).
    ///
    /// Thread safety: a value type; safe from any thread.
    public struct Drift: Sendable, Equatable, Codable {
        /// Delay measurements the line is fitted to, at most.
        public var capacity = 160
        /// Seconds the measurements must span before a slope is reported.
        public var minimumSpanSeconds = 2.0
        /// Measurements in the fit before a stray one is left out.
        public var outlierTestAfter = 4
        /// A measurement this far off the current line is stray, ms.
        public var outlierMilliseconds = 0.25
        /// Stray measurements in a row after which the delay has moved and the fit starts over.
        public var outliersToRestart = 8
        /// The slope's standard error must be under this (ppm), or the slope over the error above
        /// ``minimumSlopeOverError``, for the slope to be reported.
        public var maximumErrorPPM = 4.0
        public var minimumSlopeOverError = 10.0
        /// The two halves' slopes must each be within this of the whole's (ppm), or this many of
        /// their standard errors, for the drift to count (a step gives two flat halves).
        public var halvesTolerancePPM = 5.0
        public var halvesToleranceErrors = 3.0
        /// The least drift compensated, ppm; it must also be this many standard errors from zero
        /// and have moved the echo by this many samples over the fit.
        public var minimumPPM = 1.0
        public var significanceErrors = 3.0
        public var minimumMoveSamples = 1.0

        /// The shipped values.
        public init() {}

        /// The values `decoder` holds; a missing key keeps its shipped value, an unknown one throws.
        public init(from decoder: any Decoder) throws {
            self.init()
            let c = try decoder.tuningContainer(CodingKeys.self)
            try c.update(&capacity, .capacity)
            try c.update(&minimumSpanSeconds, .minimumSpanSeconds)
            try c.update(&outlierTestAfter, .outlierTestAfter)
            try c.update(&outlierMilliseconds, .outlierMilliseconds)
            try c.update(&outliersToRestart, .outliersToRestart)
            try c.update(&maximumErrorPPM, .maximumErrorPPM)
            try c.update(&minimumSlopeOverError, .minimumSlopeOverError)
            try c.update(&halvesTolerancePPM, .halvesTolerancePPM)
            try c.update(&halvesToleranceErrors, .halvesToleranceErrors)
            try c.update(&minimumPPM, .minimumPPM)
            try c.update(&significanceErrors, .significanceErrors)
            try c.update(&minimumMoveSamples, .minimumMoveSamples)
        }

        func validate() throws(VoiceProcessingError) {
            // Each half of the fit needs three measurements.
            try checkTuning(capacity, in: 8...4096, "drift.capacity")
            try checkTuning(minimumSpanSeconds, in: 0...60, "drift.minimumSpanSeconds")
            try checkTuning(outlierTestAfter, in: 3...capacity, "drift.outlierTestAfter")
            try checkTuning(outlierMilliseconds, in: 0...100, "drift.outlierMilliseconds")
            try checkTuning(outliersToRestart, in: 1...1000, "drift.outliersToRestart")
            try checkTuning(maximumErrorPPM, in: 0...1000, "drift.maximumErrorPPM")
            try checkTuning(minimumSlopeOverError, in: 0.1...1000, "drift.minimumSlopeOverError")
            try checkTuning(halvesTolerancePPM, in: 0...1000, "drift.halvesTolerancePPM")
            try checkTuning(halvesToleranceErrors, in: 0...100, "drift.halvesToleranceErrors")
            try checkTuning(minimumPPM, in: 0...1000, "drift.minimumPPM")
            try checkTuning(significanceErrors, in: 0...100, "drift.significanceErrors")
            try checkTuning(minimumMoveSamples, in: 0...100, "drift.minimumMoveSamples")
        }
    }

    /// Whether the microphone hears the far end at all (`EchoPathDetector`), from the delay
    /// estimator's peaks and the canceller's ERLE.
    ///
    /// Thread safety: a value type; safe from any thread.
    public struct EchoPath: Sendable, Equatable, Codable {
        /// A peak z-score only an echo reaches: present.
        public var presentZScore = 10.0
        /// Linear ERLE over which the canceller clearly removes an echo (present), dB.
        public var presentERLEDB = 10.0
        /// Estimator hops in a row without a confident peak for absent.
        public var absentHops = 3
        /// Far-end activity those hops must span, seconds.
        public var absentFarSeconds = 0.25
        /// The same once an echo has been seen since the last reset, seconds (hops: as many as fit).
        public var absentFarSecondsAfterEcho = 10.0
        /// Linear ERLE under which the canceller removes nothing (absent allowed), dB.
        public var absentERLEDB = 3.0
        /// Whether a peak alone counts as an echo seen (after which absent needs
        /// ``absentFarSecondsAfterEcho``). False: only the canceller removing ``presentERLEDB``
        /// does, since two talkers' voices can peak by chance; a peak still makes it present.
        public var peakConfirmsEcho = false

        /// The shipped values.
        public init() {}

        /// The values `decoder` holds; a missing key keeps its shipped value, an unknown one throws.
        public init(from decoder: any Decoder) throws {
            self.init()
            let c = try decoder.tuningContainer(CodingKeys.self)
            try c.update(&presentZScore, .presentZScore)
            try c.update(&presentERLEDB, .presentERLEDB)
            try c.update(&absentHops, .absentHops)
            try c.update(&absentFarSeconds, .absentFarSeconds)
            try c.update(&absentFarSecondsAfterEcho, .absentFarSecondsAfterEcho)
            try c.update(&absentERLEDB, .absentERLEDB)
            try c.update(&peakConfirmsEcho, .peakConfirmsEcho)
        }

        func validate() throws(VoiceProcessingError) {
            try checkTuning(presentZScore, in: 1...100, "echoPath.presentZScore")
            try checkTuning(presentERLEDB, in: 0...60, "echoPath.presentERLEDB")
            try checkTuning(absentHops, in: 1...1000, "echoPath.absentHops")
            try checkTuning(absentFarSeconds, in: 0...600, "echoPath.absentFarSeconds")
            try checkTuning(absentFarSecondsAfterEcho, in: 0...600, "echoPath.absentFarSecondsAfterEcho")
            try checkTuning(absentERLEDB, in: 0...60, "echoPath.absentERLEDB")
        }
    }

    /// The jump detector (`EchoShiftDetector`): finds how far the echo moved from the echo the
    /// canceller predicts, so the reference follows it without the canceller starting over.
    ///
    /// Thread safety: a value type; safe from any thread.
    public struct EchoShift: Sendable, Equatable, Codable {
        /// Whether the detector runs at all.
        public var enabled = true
        /// The largest move searched, either way, ms.
        public var maximumShiftMilliseconds = 80.0
        /// The least move acted on, ms (smaller ones the canceller follows by itself).
        public var minimumShiftMilliseconds = 1.0
        /// The time constant of the running correlation, ms.
        public var averagingMilliseconds = 50.0
        /// The normalized correlation the moved echo must reach with the prediction, 0 ... 1.
        public var minimumCorrelation = 0.4
        /// How many times the correlation where the echo was the moved peak must exceed.
        public var peakOverCurrent = 1.5
        /// Blocks in a row the same move must be seen in before the reference follows it.
        public var confirmBlocks = 2
        /// How much less the capture must leave once the prediction is moved, over the refining
        /// window, for the move to be followed, dB: a true move with the filter intact leaves
        /// far less; a peak the near end made (double talk) leaves about as much.
        public var minimumGainDB = 6.0
        /// A move that leaves less than that is still followed once ``sustainedTests`` tests in a
        /// row, at the same move, each leave this much less, dB: a talker over the echo bounds the
        /// gain of a true move, and pitch makes peaks off lag 0 that do not hold one lag. At
        /// ``minimumGainDB`` the rule is off.
        public var sustainedGainDB = 1.5
        /// How many tests in a row that takes (each one to two blocks of far-end activity).
        public var sustainedTests = 8
        /// Tests in a row, as for ``sustainedTests``, that make a move when the delay estimator
        /// finds the echo moved by as much (within ``agreementMilliseconds``) and re-places the
        /// reference: the two tell of the move apart, and the reference then follows the
        /// detector's move where the canceller would otherwise start over. Above
        /// ``sustainedTests`` the rule is off.
        public var corroboratedTests = 3
        /// How close the delay estimator's move of the echo must be to such a move for the two to
        /// agree, ms: the reference then follows the detector's, and the canceller goes on.
        public var agreementMilliseconds = 3.0
        /// The full-rate window the move is refined to a sample over, ms.
        public var refineMilliseconds = 128.0
        /// The linear stage's ERLE from which its prediction is an echo worth following, dB.
        public var learningERLEDB = 6.0
        /// Far-end activity over which a step of the device's reported delay, once the delay
        /// estimator has locked, is tested against the echo before it is dropped as the report's
        /// own wander, ms (with the detector off, steps are followed at once).
        public var deviceStepTestMilliseconds = 500.0

        /// The shipped values.
        public init() {}

        /// The values `decoder` holds; a missing key keeps its shipped value, an unknown one throws.
        public init(from decoder: any Decoder) throws {
            self.init()
            let c = try decoder.tuningContainer(CodingKeys.self)
            try c.update(&enabled, .enabled)
            try c.update(&maximumShiftMilliseconds, .maximumShiftMilliseconds)
            try c.update(&minimumShiftMilliseconds, .minimumShiftMilliseconds)
            try c.update(&averagingMilliseconds, .averagingMilliseconds)
            try c.update(&minimumCorrelation, .minimumCorrelation)
            try c.update(&peakOverCurrent, .peakOverCurrent)
            try c.update(&confirmBlocks, .confirmBlocks)
            try c.update(&refineMilliseconds, .refineMilliseconds)
            try c.update(&minimumGainDB, .minimumGainDB)
            try c.update(&sustainedGainDB, .sustainedGainDB)
            try c.update(&sustainedTests, .sustainedTests)
            try c.update(&corroboratedTests, .corroboratedTests)
            try c.update(&agreementMilliseconds, .agreementMilliseconds)
            try c.update(&learningERLEDB, .learningERLEDB)
            try c.update(&deviceStepTestMilliseconds, .deviceStepTestMilliseconds)
        }

        func validate() throws(VoiceProcessingError) {
            try checkTuning(maximumShiftMilliseconds, in: 1...500, "echoShift.maximumShiftMilliseconds")
            try checkTuning(minimumShiftMilliseconds, in: 0...maximumShiftMilliseconds, "echoShift.minimumShiftMilliseconds")
            try checkTuning(averagingMilliseconds, in: 10...10000, "echoShift.averagingMilliseconds")
            try checkTuning(minimumCorrelation, in: 0...1, "echoShift.minimumCorrelation")
            try checkTuning(peakOverCurrent, in: 1...100, "echoShift.peakOverCurrent")
            try checkTuning(confirmBlocks, in: 1...1000, "echoShift.confirmBlocks")
            try checkTuning(refineMilliseconds, in: 16...1000, "echoShift.refineMilliseconds")
            try checkTuning(minimumGainDB, in: 0...60, "echoShift.minimumGainDB")
            try checkTuning(sustainedGainDB, in: 0...minimumGainDB, "echoShift.sustainedGainDB")
            try checkTuning(sustainedTests, in: 1...1000, "echoShift.sustainedTests")
            try checkTuning(corroboratedTests, in: 1...1000, "echoShift.corroboratedTests")
            try checkTuning(agreementMilliseconds, in: 0...maximumShiftMilliseconds, "echoShift.agreementMilliseconds")
            try checkTuning(learningERLEDB, in: 0...60, "echoShift.learningERLEDB")
            try checkTuning(deviceStepTestMilliseconds, in: 0...10000, "echoShift.deviceStepTestMilliseconds")
        }
    }
}
