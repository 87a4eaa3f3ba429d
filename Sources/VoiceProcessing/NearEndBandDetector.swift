import DSP

/// Tells near-end speech from echo band by band while the canceller cannot yet: the second
/// near-end test of ``EchoGate``'s startup hold.
///
/// Two talkers rarely fill the same bands at the same moment, so a near-end talker as loud as
/// the echo, which a broadband level test cannot see, still stands out in the bands where the
/// far end is quiet. For that the detector needs the echo each band should hold, with no
/// converged canceller to ask. It models it in the power domain: the far end's band power
/// (read a little ahead of the reference, as the gate does) summed with a room-like decay of
/// 60 dB in 0.6 s, times a gain per band learned in blocks without near-end speech. It also
/// learns how far the capture strays from that model (the spread of the log ratio), since the
/// model is crude: a reverberant room, a distorting loudspeaker or a reference not yet aligned
/// make it stray more, and the test then asks for more; a band that strays more than 7 dB rms
/// takes no part. The decay trades one way against the other: 0.4 s found more near-end speech
/// but took the tail of a 0.9 s room for it, 0.8 s missed most of the talkers it is for.
///
/// With ``VoiceProcessingTuning/NearEndBands``'s defaults, near-end speech starts when at least
/// 4 bands are 3 standard deviations (and at least 9 dB) above the modelled echo plus noise,
/// continues while 3 bands are 1.5 deviations (and 6 dB) above it, and is held 150 ms after.
/// A band takes part only after 25 blocks of learning, so at the very
/// start (or after a reset) only the gate's broadband test speaks. The model is not trusted
/// further than that: the gate still holds the echo back whenever the detector is quiet.
///
/// Thread safety: not thread-safe; the I/O thread only. Nothing allocates after `init`.
final class NearEndBandDetector {
    /// The rules' numbers. A band whose echo strays more than `maximumSpread` from the model
    /// says nothing: the reference is not aligned yet, or the model learned from near-end speech.
    private let tuning: VoiceProcessingTuning.NearEndBands
    private let analyzer: BandPowers
    private let bands: Int
    /// How far over the modelled echo a band must be at least to start and to continue, as power ratios.
    private let startFloor: Double, continueFloor: Double
    /// How far above its floor the noise counts, as a power ratio.
    private let noiseMargin: Double
    /// The room model's decay per block.
    private let roomDecay: Double
    /// The far end's held envelope per band, per block (as the gate's broadband envelope).
    private let envelopeDecay: Double
    /// The noise floor's rise per block; it follows any lower block at once.
    private let noiseRise: Double
    private let holdBlocks: Int

    // Per band: this block's powers, and the model's state.
    private let capture, reference, lead, envelope, noise, roomPower, logGain, logSpread: UnsafeMutablePointer<Double>
    private let learned: UnsafeMutablePointer<Int>
    private var holdLeft = 0
    private var noiseStarted = false

    init(blockSize: Int, sampleRate: Int, tuning: VoiceProcessingTuning.NearEndBands = .init()) {
        self.tuning = tuning
        analyzer = BandPowers(blockSize: blockSize, sampleRate: sampleRate, edgesHz: tuning.bandEdgesHz)
        bands = analyzer.count
        startFloor = Math.pow(10, tuning.startFloorDB / 10)
        continueFloor = Math.pow(10, tuning.continueFloorDB / 10)
        noiseMargin = Math.pow(10, tuning.noiseMarginDB / 10)
        noiseRise = Math.pow(10, tuning.noiseRiseDBPerBlock / 10)
        let blocksPerSecond = Double(sampleRate) / Double(blockSize)
        roomDecay = Math.pow(10, -6 / (tuning.roomDecaySeconds * blocksPerSecond))
        envelopeDecay = Math.pow(10, -6 / (tuning.envelopeDecaySeconds * blocksPerSecond))
        holdBlocks = Int((tuning.holdSeconds * blocksPerSecond).rounded())
        capture = Self.zeroed(bands); reference = Self.zeroed(bands); lead = Self.zeroed(bands)
        envelope = Self.zeroed(bands); noise = Self.zeroed(bands); roomPower = Self.zeroed(bands)
        logGain = Self.zeroed(bands); logSpread = Self.zeroed(bands)
        learned = .allocate(capacity: bands)
        learned.initialize(repeating: 0, count: bands)
    }

    deinit {
        capture.deallocate(); reference.deallocate(); lead.deallocate(); envelope.deallocate()
        noise.deallocate(); roomPower.deallocate(); logGain.deallocate(); logSpread.deallocate()
        learned.deallocate()
    }

    private static func zeroed(_ count: Int) -> UnsafeMutablePointer<Double> { .zeroed(count) }

    /// Analyses one block and says whether the near end talks in it (or did within 150 ms).
    /// `reference` is the aligned far end, `leadingReference` the far end a little ahead of it
    /// (full scale 1; nil: the aligned reference), `capture` the microphone.
    func detect(capture block: UnsafePointer<Int16>, reference aligned: UnsafePointer<Int16>,
                leadingReference: UnsafePointer<Float>?) -> Bool {
        analyzer.analyze(block, into: capture)
        analyzer.analyze(aligned, into: reference)
        if let leadingReference { analyzer.analyze(leadingReference, into: lead) } else { lead.update(from: reference, count: bands) }
        if !noiseStarted {
            noiseStarted = true
            noise.update(from: capture, count: bands)
        }
        var strong = 0, above = 0
        for k in 0..<bands {
            envelope[k] = max(reference[k], lead[k], envelope[k] * envelopeDecay)
            noise[k] = capture[k] < noise[k] ? capture[k] : noise[k] * noiseRise
            roomPower[k] = lead[k] + roomDecay * roomPower[k]
            let spread = logSpread[k].squareRoot()
            guard learned[k] >= tuning.minimumLearnedBlocks, spread <= tuning.maximumSpread else { continue }
            let echo = Math.exp(logGain[k]) * roomPower[k]
            let startFactor = max(startFloor, Math.exp(tuning.startSpread * spread))
            let continueFactor = max(continueFloor, Math.exp(tuning.continueSpread * spread))
            if capture[k] > startFactor * echo + startFloor * noiseMargin * noise[k] { strong += 1 }
            if capture[k] > continueFactor * echo + continueFloor * noiseMargin * noise[k] { above += 1 }
        }
        let talks = holdLeft > 0 ? above >= tuning.continueBands : strong >= tuning.startBands
        if talks { holdLeft = holdBlocks } else if holdLeft > 0 { holdLeft -= 1 }
        return holdLeft > 0
    }

    /// Learns the echo model from the block last given to ``detect(capture:reference:leadingReference:)``;
    /// call it only for blocks without near-end speech. Bands where the far end is quiet, or the
    /// capture is near the noise floor, teach nothing.
    func learn() {
        for k in 0..<bands where roomPower[k] > 0 && reference[k] > tuning.learnFarShare * envelope[k]
            && capture[k] > tuning.learnNoiseMargin * noise[k] {
            let logRatio = Math.log(capture[k] / roomPower[k])
            learned[k] += 1
            // A running mean and variance over the first blocks (Welford's), then exponential.
            let n = Double(learned[k])
            let deviation = logRatio - logGain[k]
            let running = learned[k] <= tuning.runningMeanBlocks
            logGain[k] += (running ? 1 / n : tuning.learningRate) * deviation
            if learned[k] > 1 {
                let square = deviation * (logRatio - logGain[k])
                logSpread[k] += (running ? 1 / (n - 1) : tuning.learningRate) * (square - logSpread[k])
            }
        }
    }

    /// Forgets the echo model (the echo path or its alignment changed); the noise floor stays.
    func reset() {
        // One call per buffer: an array of them would allocate on the I/O thread.
        envelope.update(repeating: 0, count: bands)
        roomPower.update(repeating: 0, count: bands)
        logGain.update(repeating: 0, count: bands)
        logSpread.update(repeating: 0, count: bands)
        learned.update(repeating: 0, count: bands)
        holdLeft = 0
    }
}
