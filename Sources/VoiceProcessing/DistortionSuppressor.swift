import DSP
import Platform

/// Suppresses, band by band below 3 kHz, the residual echo that SpeexDSP's residual echo
/// suppression underestimates: a loudspeaker's distortion.
///
/// SpeexDSP estimates the residual as the canceller's echo estimate times one leak for every
/// frequency, learned where the echo is loudest. A linear room leaves a residual that is flat
/// over the estimate (about -30 dB in every band, `aecbench suite` `base`); a distorting
/// loudspeaker leaves its harmonics 10 dB above that from 0.5 to 8 kHz (`nonlinear`), where the
/// suppression misses them. Here each band learns its own leak the way SpeexDSP learns the
/// broadband one (the covariance of the linear output's and the echo estimate's band powers
/// over the estimate's variance, about 0.5 s), and only the excess over the broadband leak, by
/// more than 1.5 times, is suppressed: `1 - 3 x excess x estimate / output`, down to -30 dB,
/// with noise filled back to each band's floor of the last second (the numbers are
/// ``VoiceProcessingTuning/DistortionSuppressor``'s defaults).
///
/// Two margins, as AEC3's suppressor has a normal and a near-end tuning: where the near end
/// dominates (the output stands 8 dB over the residual the broadband leak expects, and 0.25 s
/// after) the margin above; elsewhere ``VoiceProcessingTuning/DistortionSuppressor/echoAloneMargin``,
/// which may take a band's residual under the broadband leak too.
///
/// It learns only in echo alone: blocks whose capture is 10 dB over the canceller's output. A
/// leak learned through double talk takes the near end for residual (a prototype that learned
/// always cost held-out double talk in 21 runs of 24); learned in echo alone, a band that holds
/// a talker has an output far above its estimated residual and keeps its gain. Above 3 kHz the
/// echo gate already lowers what follows the far end.
///
/// It adds no delay: the bands are a split with no latency (``BandSplit``), the gains come from
/// the block the preprocessor takes in and apply to the block it gives out one block later, the
/// same audio.
///
/// Thread safety: not thread-safe; the I/O thread only. Nothing allocates after `init`.
final class DistortionSuppressor {
    /// The bands suppressed: those below 3 kHz. Not tuning: the code's fixed-size arrays hold
    /// five bands of ``BandSplit``'s seven.
    static let bands = 5
    private let blockSize: Int
    private var echoSplit, linearSplit, outputSplit, noiseSplit: BandSplit
    /// A block as doubles, and two blocks' bands (``BandSplit``'s rows).
    private let signal, bandsA, bandsB: UnsafeMutablePointer<Double>
    /// Per band (all seven, for the broadband leak): the means, covariance and variance the leak
    /// comes from, and the echo estimate held over the room's decay.
    private var linearMean = InlineArray<7, Double>(repeating: 0), echoMean = InlineArray<7, Double>(repeating: 0)
    private var covariance = InlineArray<7, Double>(repeating: 0), variance = InlineArray<7, Double>(repeating: 1e-30)
    private var echoHeld = InlineArray<7, Double>(repeating: 0)
    /// Echo-alone blocks learned from so far.
    private var learned = 0
    /// The gains for the block being given out, those for the next one, and the gains as they
    /// move sample by sample.
    private var gains = InlineArray<5, Double>(repeating: 1), nextGains = InlineArray<5, Double>(repeating: 1)
    private var smoothed = InlineArray<5, Double>(repeating: 1)
    /// The output's band powers over the last second (a ring), for the fill's floor. Not a
    /// ``NoiseFloor``: its slow rise left the floor under the noise a second later, and the fill
    /// then masked nothing (a numpy prototype: `nonlinear` seed 1 echo MOS 4.55 with this floor, 4.49
    /// with that one or with no fill).
    private let history: UnsafeMutablePointer<Double>
    private let historyBlocks: Int
    private var historyIndex = 0, historyCount = 0
    /// Each noise band's RMS for unit-range uniform noise, to scale the fill.
    private var noiseRMS = InlineArray<5, Double>(repeating: 1)
    private var random = SeededRandom(seed: 0xD1B5_4A32_D192_ED03)
    private let heldDecay, covarianceRate, meanRate, smoothing: Double
    private let warmBlocks: Int
    /// The gain's rule (``suppression(output:broadband:margin:)``), as the tuning gives it.
    private let margin, echoAloneMargin, overestimate, minimumGain: Double
    /// Near-end dominance: output over expected residual, the hold, and what is left of it.
    private let nearEndRatio: Double
    private let nearEndHoldBlocks: Int
    private var nearEndLeft = 0
    /// Capture over the canceller's output for a block to count as echo alone.
    private let echoAloneRatio: Double
    /// The least echo estimate (power, full scale 32768) a block learns from.
    private let activePower: Double

    init(blockSize: Int, sampleRate: Int, tuning t: VoiceProcessingTuning.DistortionSuppressor = .init()) {
        self.blockSize = blockSize
        // The rates were set for 10 ms blocks; a 20 ms block takes two steps at once.
        let per10 = Double(blockSize) / (Double(sampleRate) / 100)
        heldDecay = Math.pow(t.echoHoldDecay, per10)
        covarianceRate = 1 - Math.pow(t.covarianceSmoothing, per10)
        meanRate = 1 - Math.pow(t.meanSmoothing, per10)
        warmBlocks = Int((t.warmUpSeconds * 100 / per10).rounded())
        smoothing = 1 - Math.pow(t.gainSmoothing, 16000 / Double(sampleRate))
        (margin, echoAloneMargin, overestimate, minimumGain) = (t.margin, t.echoAloneMargin, t.overestimate, t.minimumGain)
        nearEndRatio = t.nearEndRatio
        nearEndHoldBlocks = Int((t.nearEndHoldSeconds * 100 / per10).rounded())
        echoAloneRatio = t.echoAloneRatio
        activePower = t.activePower * 32768 * 32768
        let split = BandSplit(sampleRate: sampleRate)
        (echoSplit, linearSplit, outputSplit, noiseSplit) = (split, split, split, split)
        signal = .allocate(capacity: blockSize)
        bandsA = .allocate(capacity: BandSplit.count * blockSize)
        bandsB = .allocate(capacity: BandSplit.count * blockSize)
        historyBlocks = max(1, Int((t.floorSeconds * Double(sampleRate) / Double(blockSize)).rounded()))
        history = .allocate(capacity: historyBlocks * Self.bands)
        noiseRMS = calibratedNoise(seconds: 2, sampleRate: sampleRate)
    }

    deinit {
        signal.deallocate()
        bandsA.deallocate()
        bandsB.deallocate()
        history.deallocate()
    }

    /// The RMS of each band of the fill's noise, measured over `seconds` of it (from a copy of
    /// the noise source and the split, so the fill itself starts fresh). A calibration, not tuning.
    private func calibratedNoise(seconds: Int, sampleRate: Int) -> InlineArray<5, Double> {
        var split = noiseSplit, source = random
        var power = InlineArray<5, Double>(repeating: 0)
        let blocks = seconds * sampleRate / blockSize
        for k in 0..<(blocks + 10) {
            for i in 0..<blockSize { signal[i] = 2 * source.unit() - 1 }
            split.split(signal, count: blockSize, into: bandsB)
            guard k >= 10 else { continue }  // the filters' start
            for b in 0..<Self.bands { power[b] += Self.energy(bandsB + b * blockSize, blockSize) }
        }
        return InlineArray { (power[$0] / Double(blocks * blockSize)).squareRoot() }
    }

    private static func energy(_ x: UnsafePointer<Double>, _ count: Int) -> Double {
        var sum = 0.0
        for i in 0..<count { sum += x[i] * x[i] }
        return sum
    }

    /// Takes the block the canceller just processed (`capture` as the microphone gave it, `linear`
    /// the canceller's output) and sets the gains for its audio, which the preprocessor gives
    /// out one block later: the ``apply(_:acting:)`` after the next one uses them.
    func analyse(capture: UnsafePointer<Int16>, linear: UnsafePointer<Int16>) {
        var capturePower = 0.0, linearPower = 0.0
        for i in 0..<blockSize {
            let c = Double(capture[i])
            signal[i] = Double(linear[i])
            capturePower += c * c
            linearPower += signal[i] * signal[i]
        }
        linearSplit.split(signal, count: blockSize, into: bandsA)
        for i in 0..<blockSize { signal[i] = Double(capture[i]) - signal[i] }
        echoSplit.split(signal, count: blockSize, into: bandsB)
        let n = Double(blockSize)
        var output = InlineArray<7, Double>(repeating: 0), echo = output
        var echoPower = 0.0, outputPower = 0.0, heldPower = 0.0
        for b in 0..<BandSplit.count {
            output[b] = Self.energy(bandsA + b * blockSize, blockSize) / n
            echo[b] = Self.energy(bandsB + b * blockSize, blockSize) / n
            echoPower += echo[b]
            outputPower += output[b]
            echoHeld[b] = max(echo[b], heldDecay * echoHeld[b])
            heldPower += echoHeld[b]
        }
        if echoPower > activePower && capturePower > echoAloneRatio * linearPower {
            learn(output: output, echo: echo)
        }
        let broadband = broadbandLeak()
        // The near end dominates where the output stands well over the residual the broadband
        // leak expects: there the gentler margin keeps the talker whole.
        if outputPower > nearEndRatio * broadband * heldPower {
            nearEndLeft = nearEndHoldBlocks
        } else if nearEndLeft > 0 {
            nearEndLeft -= 1
        }
        gains = nextGains
        nextGains = learned < warmBlocks
            ? InlineArray(repeating: 1)
            : suppression(output: output, broadband: broadband, margin: nearEndLeft > 0 ? margin : echoAloneMargin)
    }

    /// One echo-alone block into each band's leak (SpeexDSP's rule for its broadband one).
    private func learn(output: InlineArray<7, Double>, echo: InlineArray<7, Double>) {
        for b in 0..<BandSplit.count {
            let dOutput = output[b] - linearMean[b], dEcho = echo[b] - echoMean[b]
            covariance[b] += covarianceRate * (dOutput * dEcho - covariance[b])
            variance[b] += covarianceRate * (dEcho * dEcho - variance[b])
            linearMean[b] += meanRate * dOutput
            echoMean[b] += meanRate * dEcho
        }
        learned += 1
    }

    /// The leak over all seven bands, as SpeexDSP's broadband one.
    private func broadbandLeak() -> Double {
        var covarianceSum = 0.0, varianceSum = 0.0
        for b in 0..<BandSplit.count {
            covarianceSum += covariance[b]
            varianceSum += variance[b]
        }
        return min(max(covarianceSum / max(varianceSum, 1e-30), 0), 1)
    }

    /// The gains for a block whose linear output has these band powers: each band's leak in
    /// excess of `margin` times the broadband one.
    private func suppression(output: InlineArray<7, Double>, broadband: Double, margin: Double) -> InlineArray<5, Double> {
        InlineArray { b in
            let leak = min(max(self.covariance[b] / max(self.variance[b], 1e-30), 0), 1)
            let residual = max(0, leak - margin * broadband) * self.echoHeld[b]
            return min(max(1 - self.overestimate * residual / max(output[b], 1e-30), self.minimumGain), 1)
        }
    }

    /// Applies the gains to an output block in place, with noise back to each band's floor where
    /// they take it (`acting` false: the block passes untouched, the filters still run).
    func apply(_ samples: UnsafeMutablePointer<Int16>, acting: Bool) {
        for i in 0..<blockSize { signal[i] = Double(samples[i]) }
        outputSplit.split(signal, count: blockSize, into: bandsA)
        let floors = bandFloors()
        var power = InlineArray<5, Double>(repeating: 0)
        for b in 0..<Self.bands { power[b] = Self.energy(bandsA + b * blockSize, blockSize) / Double(blockSize) }
        remember(power)
        var moving = false
        for b in 0..<Self.bands where gains[b] != 1 || smoothed[b] != 1 { moving = true }
        guard acting && moving else {
            if !acting { smoothed = InlineArray(repeating: 1) }
            return
        }
        // The fill's noise, split as the output is.
        for i in 0..<blockSize { signal[i] = 2 * random.unit() - 1 }
        noiseSplit.split(signal, count: blockSize, into: bandsB)
        for i in 0..<blockSize { signal[i] = Double(samples[i]) }
        for b in 0..<Self.bands where gains[b] != 1 || smoothed[b] != 1 {
            let band = bandsA + b * blockSize, fillNoise = bandsB + b * blockSize
            let fill = floors[b].squareRoot() / noiseRMS[b], target = gains[b]
            var g = smoothed[b]
            for i in 0..<blockSize {
                g += smoothing * (target - g)
                signal[i] += (g - 1) * band[i] + fill * max(0, 1 - g * g).squareRoot() * fillNoise[i]
            }
            smoothed[b] = abs(g - target) < 1e-6 ? target : g
        }
        for i in 0..<blockSize { samples[i] = Int16(clamping: Int(signal[i].rounded())) }
    }

    /// Each band's floor: its least power over the last second of output.
    private func bandFloors() -> InlineArray<5, Double> {
        var floors = InlineArray<5, Double>(repeating: historyCount == 0 ? 0 : .infinity)
        for k in 0..<historyCount {
            for b in 0..<Self.bands { floors[b] = min(floors[b], history[k * Self.bands + b]) }
        }
        return floors
    }

    /// One output block's band powers into the last second's ring.
    private func remember(_ power: InlineArray<5, Double>) {
        for b in 0..<Self.bands { history[historyIndex * Self.bands + b] = power[b] }
        historyIndex = (historyIndex + 1) % historyBlocks
        historyCount = min(historyCount + 1, historyBlocks)
    }

    /// Forgets the signal and what was learned (the streams restarted).
    func reset() {
        echoSplit.reset()
        linearSplit.reset()
        outputSplit.reset()
        noiseSplit.reset()
        let zeros = InlineArray<7, Double>(repeating: 0), ones = InlineArray<5, Double>(repeating: 1)
        (linearMean, echoMean, covariance, echoHeld) = (zeros, zeros, zeros, zeros)
        variance = InlineArray(repeating: 1e-30)
        (gains, nextGains, smoothed) = (ones, ones, ones)
        learned = 0
        nearEndLeft = 0
        historyIndex = 0
        historyCount = 0
    }
}
