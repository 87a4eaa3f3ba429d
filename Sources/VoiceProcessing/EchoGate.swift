import DSP

/// Holds back the echo the linear canceller does not remove: all of it while the canceller has
/// not converged (at the start of a call and after a reset), and afterwards what it leaves as a
/// linear function of the far end (a filter that no longer fits or is still converging).
///
/// Until the canceller converges its filter is near zero and SpeexDSP's residual echo
/// suppression, which estimates the residual from that filter, removes almost nothing, so the
/// far end would hear itself for the first seconds. This is the "initial state" of network and
/// acoustic echo cancellers (WebRTC AEC3 assumes a default echo path gain until its filter is
/// trusted). Then the gate is the non-linear processor of ITU-T G.168 in its simplest form, a
/// half-duplex switch: while the far end plays (its power held over the room's reverberation)
/// and the near end does not talk, the canceller's output is attenuated by 30 dB. An unconverged
/// canceller's residual swings by 10 dB from one word to the next, so no level model of it is
/// safe yet. (The numbers here are ``VoiceProcessingTuning/Gate``'s defaults.) The near end
/// talks when the capture is louder than the echo can make it: 4 dB above
/// `echoReturn x far`, where `echoReturn` is the loudest echo seen relative to the far end
/// (starting at 0 dB); when a band test (``NearEndBandDetector``) finds near-end speech in the
/// bands the far end leaves free; when the canceller, once it has shown it removes 10 dB, takes
/// 8 dB less than that out of three blocks in a row (a talker it cannot model); or, once it has
/// learned what echo alone gives, when the capture's coherence with the far end falls well under
/// that (``EchoCoherence``).
///
/// It releases that hold once the canceller's own echo return loss enhancement over far-end-only
/// blocks reaches 15 dB (25 dB after a reset), or after 5 s of far-end speech at the latest (a
/// room whose noise hides the canceller's progress). A hold re-armed by a reset lets go after
/// 2.5 s if the canceller still removes under 10 dB by then: re-converging in echo alone it is past
/// that, so one that is not is most likely under a talker the hold's tests cannot find (a reset
/// inside double talk), whom a longer hold would keep from the far end. From then on its level
/// tests never act: it lowers the output only as far as the output is coherent with the far end
/// (echo the filter does not remove; in double talk the near end fills the output and the coherence
/// falls), and never while the capture's coherence says the near end talks. One case overrides
/// that: an output that opposes the canceller's own echo estimate while it removes under 3 dB
/// (``EchoCoherence/estimateCorrelation(output:)`` under -0.4) is a filter subtracting an echo the
/// microphone no longer has, as when the loudspeaker moves. It is lowered at once, from 0 dB at
/// -0.4 to 30 dB at -0.7, since the moved loudspeaker also lowers the capture's coherence, which
/// would pass it for a talker; and it teaches the coherence test the new room's level. Above 4 kHz
/// it does the same by the output's coherence there (``HighBandGain``): a canceller that has rarely
/// heard the far end's fricatives leaves their echo whole, while its residual under 4 kHz says the
/// filter fits.
///
/// It adds no delay: gains are whole blocks, interpolated across each block from the last one.
///
/// Thread safety: not thread-safe; used by the I/O thread only. Nothing allocates.
final class EchoGate {
    let blockSize: Int
    /// The rules' numbers. Two worth their story: ``VoiceProcessingTuning/Gate/releaseERLEDB``
    /// (15 dB), the ERLE at which the canceller is trusted, and
    /// ``VoiceProcessingTuning/Gate/rearmedReleaseERLEDB`` (25 dB), the same after a reset (a
    /// realignment, a moved loudspeaker, divergence, drift beyond interpolation): the canceller
    /// re-converges from an empty filter while the far end's echo is at full level, and the
    /// residual it leaves between 15 and 25 dB is what listeners heard after a path change or a
    /// realignment. At the start of a call a 20 dB release held back talkers who speak early;
    /// after a reset it measured no such cost, as the coherence test knows the room by then
    /// (Docs/voice-processing.md, "After a reset").
    let tuning: VoiceProcessingTuning.Gate
    /// The gain while only the far end talks.
    private let floorGain: Float
    /// Far-end envelope decay per block: 60 dB over the tuning's decay time, a reverberant room's tail.
    private let envelopeDecay: Double
    /// Far-end power (mean square, full scale 1) below which the far end is silent.
    private let farFloor: Double
    /// Steps of the echo return's peak tracking, per block.
    private let riseStep: Double, fallStep: Double
    private let maximumActiveBlocks: Int, stallBlocks: Int
    /// Blocks of far-end-only speech the canceller's ERLE is averaged over before it counts.
    private let minimumMeasuredBlocks: Int

    /// Whether the startup hold is on (the canceller has not converged since its last reset).
    private(set) var isActive = true
    /// Whether this hold was put back on by a canceller reset, rather than starting a call.
    private var isRearmed = false
    /// The ERLE this hold lets go at: at the start of a call, or after a reset.
    private var releaseLevel: Double { isRearmed ? tuning.rearmedReleaseERLEDB : tuning.releaseERLEDB }
    private var farEnvelope = 0.0
    /// Capture power over the far envelope at its loudest, learned in far-end single talk (0 dB at first).
    private var echoReturn = 1.0
    /// Capture and output power averaged over far-end-only blocks: the canceller's ERLE.
    private var captureAverage = 0.0
    private var outputAverage = 0.0
    private var measuredBlocks = 0
    /// The highest ratio of those averages since the hold started: what the canceller has shown
    /// it removes.
    private var bestRemoval = 0.0
    /// Far-end-only blocks before the averages count towards ``bestRemoval`` (0.5 s by default): the
    /// highest of a young average is mostly its noise.
    private let minimumRemovalBlocks: Int
    /// Blocks in a row the canceller must fall short before that counts, and how long a run
    /// keeps later short blocks counting.
    private let shortfallOnset: Int, shortfallHold: Int
    private var shortfallRun = 0, shortfallHoldLeft = 0
    /// The capture's noise floor (mean square, full scale 1).
    private var captureFloor: NoiseFloor
    private var farBlocks = 0
    private var gain: Float = 1
    /// The gain above 4 kHz, apart from the whole block's.
    private var highBand: HighBandGain
    /// Whether the last block processed was held back (its gain ended under 1): the capture's
    /// noise went with the echo, and comfort noise should take its place.
    var isHolding: Bool { gain < 1 }
    /// The second near-end test, band by band.
    private let bands: NearEndBandDetector
    /// The third, by how much of the capture the far end explains; learned while the
    /// canceller takes something out of blocks no other test finds a talker in (3 dB in the hold, 10
    /// once converged), so the coherence rules can act from the release. Within the hold it speaks
    /// only after a reset (``isRearmed``).
    private let coherence: EchoCoherence
    /// The coherence of the far end with the canceller's output: echo it has not removed.
    private let residual: EchoCoherence

    init(blockSize: Int, sampleRate: Int, tuning: VoiceProcessingTuning.Gate = .init(),
         bands bandTuning: VoiceProcessingTuning.NearEndBands = .init(),
         coherence coherenceTuning: VoiceProcessingTuning.Coherence = .init()) {
        self.blockSize = blockSize
        self.tuning = tuning
        bands = NearEndBandDetector(blockSize: blockSize, sampleRate: sampleRate, tuning: bandTuning)
        coherence = EchoCoherence(blockSize: blockSize, sampleRate: sampleRate, tuning: coherenceTuning)
        residual = EchoCoherence(blockSize: blockSize, sampleRate: sampleRate, withHighBand: true, tuning: coherenceTuning)
        highBand = HighBandGain(sampleRate: sampleRate, cutoff: tuning.highBandCutoffHz)
        floorGain = tuning.floorGain
        farFloor = tuning.farSilentPower
        riseStep = Math.pow(10, tuning.echoReturnRiseDB / 10)
        fallStep = Math.pow(10, -tuning.echoReturnFallDB / 10)
        let blocksPerSecond = Double(sampleRate) / Double(blockSize)
        envelopeDecay = Math.pow(10, -6 / (tuning.envelopeDecaySeconds * blocksPerSecond))
        // The floor's least power (-100 dBFS) only keeps a silent capture's floor able to rise.
        captureFloor = NoiseFloor(blocksPerSecond: blocksPerSecond, minimum: 1e-10,
                                  riseDBPerSecond: tuning.noiseFloorRiseDBPerSecond)
        maximumActiveBlocks = Int(tuning.maximumActiveSeconds * blocksPerSecond)
        stallBlocks = Int(tuning.stallSeconds * blocksPerSecond)
        minimumMeasuredBlocks = Int(tuning.minimumMeasuredSeconds * blocksPerSecond)
        minimumRemovalBlocks = Int(tuning.minimumRemovalSeconds * blocksPerSecond)
        shortfallOnset = max(1, Int((tuning.shortfallOnsetSeconds * blocksPerSecond).rounded()))
        shortfallHold = Int(tuning.shortfallHoldSeconds * blocksPerSecond)
    }

    /// The canceller's ERLE over far-end-only blocks so far, dB (nil before any).
    var cancellerERLE: Double? {
        // The floor: a canceller that leaves nothing at all has converged too.
        measuredBlocks > 0 ? 10 * Math.log10(max(captureAverage, 1e-12) / max(outputAverage, 1e-12)) : nil
    }

    /// Learns from the block and scales `output` (the canceller's output) in place: by the startup
    /// hold until the canceller has converged, then by how much of it is still echo.
    /// `reference` is the aligned far end and `capture` the microphone block; `leadingReference`
    /// (full scale 1) is the far end a little ahead of the reference, so that an echo that comes
    /// early (a delay not yet estimated) is still expected.
    func process(reference: UnsafePointer<Int16>, capture: UnsafePointer<Int16>, output: UnsafeMutablePointer<Int16>,
                 leadingReference: UnsafePointer<Float>? = nil) {
        let energies = blockEnergies(capture, reference, output, count: blockSize)
        let scale = 1 / (Double(blockSize) * 32768 * 32768)
        let px = energies.reference * scale, pd = energies.capture * scale, pe = energies.output * scale
        captureFloor.update(pd)
        coherence.update(capture: capture, reference: reference)
        // Every block, the startup hold's too, so that it is current when the hold lets go.
        residual.update(capture: output, referenceOf: coherence)
        var leadingFarPower = 0.0
        if let leadingReference {
            for i in 0..<blockSize { leadingFarPower += Double(leadingReference[i] * leadingReference[i]) }
            leadingFarPower /= Double(blockSize)
        }
        farEnvelope = max(px, leadingFarPower, farEnvelope * envelopeDecay)
        let target: Float
        var highTarget: Float = 1
        if isActive {
            let nearEndInBands = bands.detect(capture: capture, reference: reference, leadingReference: leadingReference)
            target = holdUntilConverged(px: px, pd: pd, pe: pe, nearEndInBands: nearEndInBands)
        } else {
            target = holdLinearResidual(px: px, pd: pd, pe: pe)
            if mayLowerResidual {
                highTarget = lowered(by: residualShare(residual.highCoherence))
            }
        }
        highBand.apply(highTarget, to: output, count: blockSize)
        apply(target, to: output)
    }

    /// The gain while the canceller has not converged: the floor unless the near end talks.
    private func holdUntilConverged(px: Double, pd: Double, pe: Double, nearEndInBands: Bool) -> Float {
        guard farEnvelope > farFloor else { return 1 }
        farBlocks += 1
        // The far end itself plays (within 10 dB of its held envelope): in the envelope's hold
        // after it stops, the capture's level says nothing of the echo.
        let farPlays = px > tuning.farPlaysShare * farEnvelope
        // Every block, so that its runs count blocks the other tests find the talker in too.
        let overCanceller = talksOverCanceller(fallsShort: farPlays && cancellerFallsShort(pd: pd, pe: pe))
        // The coherence test only in a re-armed hold: in the first seconds of a call its level is
        // young, and a reverberant room's echo dips under it (`rt60_0.9` seed 2 passed echo 20 dB
        // up from 2.1 to 2.6 s).
        let nearEndTalks = pd > tuning.nearEndMargin * echoReturn * farEnvelope || nearEndInBands
            || (isRearmed && coherence.isNearEnd) || overCanceller
        if !nearEndTalks { bands.learn() }
        if !nearEndTalks && pd > 0 && farPlays {
            // The echo return is the loudest the echo gets: a peak that rises at most 0.05 dB a
            // block (so the near end cannot pull it up quickly) and sinks 0.01 dB a block.
            let ratio = pd / farEnvelope
            echoReturn = ratio > echoReturn ? min(ratio, echoReturn * riseStep) : max(ratio, echoReturn * fallStep)
            // Its coherence is echo's, if the canceller takes something out: with no echo path
            // (a headset) the capture is the near end and noise, and teaches the test nothing.
            if pd > tuning.holdLearnRemoval * pe { coherence.learnEchoOnly() }
            let a = measuredBlocks == 0 ? 1 : tuning.erleAverageRate
            captureAverage += a * (pd - captureAverage)
            outputAverage += a * (pe - outputAverage)
            measuredBlocks += 1
            if measuredBlocks >= minimumRemovalBlocks {
                bestRemoval = max(bestRemoval, captureAverage / max(outputAverage, 1e-12))
            }
        }
        let erle = cancellerERLE ?? 0
        let converged = measuredBlocks >= minimumMeasuredBlocks && erle >= releaseLevel
        let stalled = isRearmed && farBlocks >= stallBlocks && erle < tuning.stalledERLEDB
        if converged || stalled || farBlocks >= maximumActiveBlocks {
            isActive = false
            return 1
        }
        return nearEndTalks ? 1 : floorGain
    }

    /// Whether the canceller's shortfall says the near end talks: once it has held for
    /// ``shortfallOnset`` blocks in a row (a single short block is as often an unconverged
    /// filter's swing, or a loudspeaker's distortion, as a talker), and then in any block that
    /// falls short within ``shortfallHold`` of the last such run, across the gaps between words.
    private func talksOverCanceller(fallsShort: Bool) -> Bool {
        shortfallRun = fallsShort ? shortfallRun + 1 : 0
        if shortfallRun >= shortfallOnset {
            shortfallHoldLeft = shortfallHold
        } else if shortfallHoldLeft > 0 {
            shortfallHoldLeft -= 1
        }
        return shortfallRun >= shortfallOnset || (fallsShort && shortfallHoldLeft > 0)
    }

    /// Whether the canceller takes far less out of this block than it has shown it can: something
    /// it cannot model, a talker, is in the capture. A filter at 12 dB leaves a talker as loud as
    /// the echo standing 12 dB over its residual, where no level of the capture can see it.
    private func cancellerFallsShort(pd: Double, pe: Double) -> Bool {
        // Only well over the room's noise: the canceller cannot remove noise, so where the echo
        // is under it (a headset's weak leak) capture over output says nothing.
        // And only where what it leaves is not the far end's echo (a canceller falling behind a
        // drifting or moved echo leaves one that is coherent with the far end; a talker is not).
        bestRemoval >= tuning.minimumBestRemoval && pd > tuning.shortfallNoiseMargin * captureFloor.power
            && pd < tuning.removalShortfall * bestRemoval * pe && residual.coherence < tuning.residualStart
    }

    /// The gain once the canceller has converged: lowered as far as its output is still a linear
    /// function of the far end (echo it has not removed), unless the near end talks; lowered at
    /// once where the output opposes the canceller's own estimate.
    private func holdLinearResidual(px: Double, pd: Double, pe: Double) -> Float {
        // The output opposes the canceller's own estimate and is barely under the capture: the
        // filter subtracts an echo the microphone no longer has (the loudspeaker moved), so the
        // output is echo, whatever the capture's coherence says.
        let judged = px > farFloor && pe > tuning.opposedOutputShare * pd
        let opposition = judged ? -coherence.estimateCorrelation(output: residual) : 0
        let opposed = opposition > -tuning.opposedEstimate
        // Echo alone: that, or a converged canceller that takes 10 dB out while the far end plays.
        // A moved loudspeaker changes the coherence echo reaches, so both teach it.
        if opposed || (px > tuning.convergedLearnFar * farFloor && pd > tuning.convergedLearnRemoval * pe) {
            coherence.learnEchoOnly()
        }
        if opposed { return lowered(by: (opposition + tuning.opposedEstimate) / tuning.opposedSpan) }
        return mayLowerResidual ? lowered(by: residualShare(residual.coherence)) : 1
    }

    /// Whether the coherence rules may lower what the canceller leaves: the far end plays, and
    /// the capture's coherence test has learned the room and does not find a talker.
    private var mayLowerResidual: Bool {
        farEnvelope > farFloor && coherence.isLearned && !coherence.isNearEndOverResidual
    }

    /// How far a residual coherence lowers the output: 0 at the tuning's `residualStart`, 1 at its `residualFull`.
    private func residualShare(_ coherence: Double) -> Double {
        (coherence - tuning.residualStart) / (tuning.residualFull - tuning.residualStart)
    }

    /// The gain `share` of the way from 0 dB to the lowest, in dB (clamped to 0 ... 1).
    private func lowered(by share: Double) -> Float {
        Float(Math.pow(10, -(tuning.loweredDepthDB / 20) * min(1, max(0, share))))
    }

    /// Scales `output` by `target`, interpolated from the last block's gain so changes do not click.
    private func apply(_ target: Float, to output: UnsafeMutablePointer<Int16>) {
        let start = gain, step = (target - start) / Float(blockSize)
        if start != 1 || target != 1 {
            for i in 0..<blockSize {
                output[i] = Int16(clamping: Int((Float(output[i]) * (start + step * Float(i + 1))).rounded()))
            }
        }
        gain = target
    }

    /// Starts over: the canceller was reset, so its filter must converge again. The coherence
    /// echo alone reaches is the room's and stays.
    func rearm() { startHold(rearmed: true) }

    /// Forgets the room as well (a new device): the hold starts as at the start of a call.
    func reset() {
        startHold(rearmed: false)
        captureFloor.reset()
        coherence.reset()
        residual.reset()
    }

    /// Puts the startup hold back on, with its level tests starting from nothing.
    private func startHold(rearmed: Bool) {
        isActive = true
        isRearmed = rearmed
        farEnvelope = 0
        echoReturn = 1
        captureAverage = 0
        outputAverage = 0
        measuredBlocks = 0
        bestRemoval = 0
        shortfallRun = 0
        shortfallHoldLeft = 0
        farBlocks = 0
        gain = 1
        highBand.reset()
        bands.reset()
    }
}
