import DSP
import SpeexDSP

/// The voice-processing unit's post-filter: SpeexDSP's preprocessor after the echo stage, for
/// residual echo suppression (from the linear canceller's state, and only where there is an
/// echo path), noise suppression, AGC, and the speech decision from its probability; then
/// comfort noise where the residual echo suppression took the room's noise away, and the
/// suppression of what that residual estimate misses (a loudspeaker's distortion).
///
/// Thread safety: I/O thread only (the unit's `process`); it does not allocate after `init`.
final class PostFilter {
    private var preprocessor: SpeexPreprocessor
    /// The canceller whose state the preprocessor reads for residual echo suppression (nil: none),
    /// and whether it is attached now (it is detached while the echo path is absent).
    private let suppressionSource: SpeexMDFEchoCanceller?
    private var isSuppressionAttached = false
    private var speechDetector: SpeechDetector
    private var appliedAGC: Bool
    private let block: Int
    /// The noise suppression's depth, from the capture's noise floor (nil: suppression off).
    private var noiseDepth: NoiseDepth?
    /// Fills the noise back in while residual echo suppression is attached (nil: it never is).
    private let comfortNoise: ComfortNoise?
    /// Suppresses the residual SpeexDSP's estimate misses, band by band, while residual echo
    /// suppression is attached (nil: it never is).
    private let distortion: DistortionSuppressor?

    init(configuration c: VoiceProcessingConfiguration, block: Int, canceller: any EchoCanceller) throws(VoiceProcessingError) {
        do {
            preprocessor = try c.makePreprocessor(blockSize: block, sampleRate: c.processingSampleRate)
        } catch { throw VoiceProcessingError("SpeexDSP: \(error)") }
        suppressionSource = c.suppressesResidualEcho ? canceller as? SpeexMDFEchoCanceller : nil
        if let suppressionSource {
            preprocessor.attach(suppressionSource.canceller)
            isSuppressionAttached = true
        }
        speechDetector = SpeechDetector(start: preprocessor.speechProbabilityStart,
                                        continuing: preprocessor.speechProbabilityContinue)
        appliedAGC = c.agcEnabled
        self.block = block
        let t = c.tuning, rate = c.processingSampleRate
        noiseDepth = c.suppressesNoise ? NoiseDepth(blocksPerSecond: Double(rate) / Double(block), tuning: t.noiseDepth) : nil
        comfortNoise = suppressionSource.map { _ in ComfortNoise(blockSize: block, sampleRate: rate, tuning: t.comfortNoise) }
        distortion = suppressionSource.map { _ in
            DistortionSuppressor(blockSize: block, sampleRate: rate, tuning: t.distortionSuppressor)
        }
    }

    /// Residual echo suppression only where there is an echo: SpeexDSP's follows the far end's
    /// activity through the canceller's state even when the microphone holds none of it, and
    /// then eats into the near end. Detached, the preprocessor's echo estimate is zero at once
    /// (noise suppression and AGC go on as before); attached again, it restarts from the
    /// canceller's current residual.
    func follow(echoPath: Bool) {
        guard let suppressionSource, echoPath != isSuppressionAttached else { return }
        if echoPath { preprocessor.attach(suppressionSource.canceller) } else { preprocessor.detachEchoCanceller() }
        isSuppressionAttached = echoPath
    }

    /// Takes the block the canceller just processed: the capture and the canceller's output
    /// (before the echo gate), for the residual SpeexDSP's estimate misses.
    func analyse(capture: UnsafePointer<Int16>, linear: UnsafePointer<Int16>) {
        distortion?.analyse(capture: capture, linear: linear)
    }

    /// Filters one block in place; returns whether it holds speech. `capture` is the block as
    /// the microphone gave it and `captureEnergy` its energy (``CancellerHealth`` sums it
    /// already), for the noise suppression's depth and the comfort noise's floor; `held` says
    /// the echo gate held the block back, noise and all.
    func process(_ samples: UnsafeMutablePointer<Int16>, capture: UnsafePointer<Int16>, captureEnergy: Double,
                 held: Bool) -> Bool {
        // A ctl call; it cannot fail for a depth in range (only a failure would build an error).
        if let depth = noiseDepth?.update(energy: captureEnergy) { try? preprocessor.setNoiseSuppress(dB: -depth) }
        _ = preprocessor.process(UnsafeMutableBufferPointer(start: samples, count: block))
        let speech = speechDetector.update(probability: preprocessor.speechProbability)
        comfortNoise?.process(samples, capture: capture, floorGain: isSuppressionAttached ? noiseFloorGain : 0, emptied: held)
        distortion?.apply(samples, acting: isSuppressionAttached)
        return speech
    }

    /// The power gain the room's noise comes out of the preprocessor with: its suppression
    /// depth and the AGC's gain.
    private var noiseFloorGain: Double {
        let depth = noiseDepth.map { Double($0.depthDB) } ?? 0
        let agc = appliedAGC ? Double(preprocessor.agcGainDB) : 0
        return Math.pow(10, (agc - depth) / 10)
    }

    /// Switches AGC when another thread asked for it.
    func applyAGC(_ enabled: Bool) {
        guard enabled != appliedAGC else { return }
        // A ctl call; it cannot fail for a valid state (only a failure would build an error).
        try? preprocessor.setAGC(enabled)
        appliedAGC = enabled
    }

    /// Starts the speech decision over (the streams restarted).
    func restart() {
        speechDetector.reset()
        comfortNoise?.reset()
        distortion?.reset()
        if let depth = noiseDepth {
            noiseDepth?.reset()
            try? preprocessor.setNoiseSuppress(dB: -depth.tuning.maximumDB)
        }
    }
}
