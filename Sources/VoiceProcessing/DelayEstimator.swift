import DSP

/// Finds how long the loudspeaker signal takes to come back in the microphone, by generalized
/// cross-correlation with phase transform (GCC-PHAT) of the decimated signals.
///
/// Both streams are low-passed and decimated to 4 kHz. Every hop (128 ms) the last 256 ms of
/// microphone signal is cross-correlated, through one FFT each, with the loudspeaker signal over
/// every lag of the search range; the cross-spectra are averaged over time (about 1 s), whitened
/// (the phase transform: each bin keeps its phase, loses its magnitude) and transformed back. The
/// whitening turns the room's smeared response into a sharp peak at the direct path and keeps
/// the pitch of voiced speech from making false peaks. The peak is refined to a fraction of a
/// sample by Newton's method on the band-limited correlation itself (no parabola bias), which
/// is what lets the drift estimator fit a slope to successive delays.
///
/// Near-end speech only adds uncorrelated terms that the averaging washes out; hops where the
/// far end is silent are skipped.
///
/// Thread safety: not thread-safe; used by the I/O thread only. Nothing allocates after `init`.
final class DelayEstimator {
    /// One measurement.
    struct Estimate {
        /// Delay from loudspeaker sample to its echo in the microphone, in samples at the processing rate.
        var delay: Double
        /// Peak height over the spread of the other lags (a z-score); above ~7 the peak is real.
        var confidence: Double
        /// The earliest arrival: the smallest lag, at most 40 ms before the peak, where the
        /// correlation still reaches 40 % of the peak's height (and a z-score of 6), in samples at
        /// the processing rate. In an image-method room the direct path is the peak and this is
        /// the peak or a lobe of it; in a diffuse room the peak can come 10 ms after the echo
        /// starts (a random tap of a decaying-noise response is as strong as the first one for tens
        /// of milliseconds), and the reference must be placed before the start, not the peak.
        var onset: Double = 0
        /// The delay followed by the shift of the whole response since the first confident
        /// measurement (``ResponseShiftTracker``), in samples at the processing rate: what the
        /// drift is fitted to. Unlike ``delay`` it does not jump between equally strong lags of a
        /// diffuse room. Nil when the measurement is not confident enough to follow.
        var trackedDelay: Double?
        /// The capture sample (processing rate) the measurement stands for: the energy-weighted
        /// mean time of the hops in the average. Quiet stretches barely move the average, so its
        /// end time would make a moving delay look late by a varying amount.
        var time: Int
    }

    let processingRate: Int
    /// Processing samples per decimated sample.
    let factor: Int
    /// The rate the correlation runs at, Hz. Fixed by the algorithm, not tuning: the decimation
    /// filter below is designed for it and the processing rates are multiples of it.
    static let decimatedRate = 4000
    /// Decimated samples per window, per hop, and of lag range.
    let window: Int
    let hop: Int
    let lagCount: Int
    let fftSize: Int
    /// Smallest lag searched (decimated samples).
    private(set) var lagMinimum = 0
    /// The search start last asked for (processing samples), and how far a new one must be from
    /// it before the search moves: every move forgets the average.
    private var requestedSearchStart: Int?
    private let searchMove: Int
    /// Averaging factor of the cross-spectrum per hop.
    private let smoothing: Float
    /// Share of the way the running levels move per hop.
    private let levelRate: Float
    /// Hops averaged before the first measurement.
    private let minimumAveragedHops: Int
    /// The whitening's floor, as a share of the band's mean magnitude.
    private let whiteningFloor: Float
    /// Mean powers (full scale 1) under which a hop is skipped: the far end's and the microphone's.
    private let farSilentPower: Float, captureSilentPower: Float
    /// The onset's search span (decimated samples), and its height: a share of the peak over
    /// the mean, and a z-score.
    private let onsetSearch: Int
    private let onsetShare: Float, onsetZScore: Float

    private let lowpass: UnsafeMutablePointer<Float>
    private let lowpassTaps: Int
    /// Full-rate histories for the decimation filters.
    private let renderTail: UnsafeMutablePointer<Float>
    private let captureTail: UnsafeMutablePointer<Float>
    private var renderPhase = 0
    private var capturePhase = 0
    /// Decimated streams, indexed by absolute decimated sample.
    private let renderRing: UnsafeMutablePointer<Float>
    private let captureRing: UnsafeMutablePointer<Float>
    private let ringMask: Int
    private var renderCount = 0
    private var captureCount = 0
    private var nextHop: Int

    private let fft: RealFFT
    private let bufferA: UnsafeMutablePointer<Float>
    private let bufferB: UnsafeMutablePointer<Float>
    private let aRe: UnsafeMutablePointer<Float>, aIm: UnsafeMutablePointer<Float>
    private let bRe: UnsafeMutablePointer<Float>, bIm: UnsafeMutablePointer<Float>
    private let gRe: UnsafeMutablePointer<Float>, gIm: UnsafeMutablePointer<Float>
    private let pRe: UnsafeMutablePointer<Float>, pIm: UnsafeMutablePointer<Float>
    private let correlation: UnsafeMutablePointer<Float>
    private let bandLow: Int, bandHigh: Int
    private var averagedHops = 0
    /// Slow averages of the hops' powers, so the cross-spectrum's weighting does not depend on level.
    private var renderLevel: Float = 0
    private var captureLevel: Float = 0
    /// The average's total weight and weighted sum of hop times (decimated samples).
    private var weightSum: Double = 0
    private var timeSum: Double = 0
    private let shiftTracker: ResponseShiftTracker
    /// The confidence (z-score) above which a peak is real: what the alignment and the shift
    /// tracker (hence the drift) act on.
    let confident: Double

    /// - Parameters:
    ///   - processingRate: a multiple of 4 kHz.
    ///   - maximumLag: the longest delay searched above ``lagMinimum``, in seconds.
    ///   - searchMove: how far, in processing samples, a new search start must be from the last
    ///     one asked for before the search moves.
    init(processingRate: Int, maximumLag: Double, searchMove: Int = 0,
         tuning t: VoiceProcessingTuning.DelayEstimator = .init()) {
        precondition(processingRate % Self.decimatedRate == 0, "processing rate must be a multiple of 4 kHz")
        self.processingRate = processingRate
        self.searchMove = searchMove
        factor = processingRate / Self.decimatedRate
        window = t.windowMilliseconds * Self.decimatedRate / 1000
        hop = t.hopMilliseconds * Self.decimatedRate / 1000
        (smoothing, levelRate, minimumAveragedHops) = (t.crossSpectrumSmoothing, t.levelRate, t.minimumAveragedHops)
        (whiteningFloor, farSilentPower, captureSilentPower) = (t.whiteningFloor, t.farSilentPower, t.captureSilentPower)
        onsetSearch = t.onsetSearchMilliseconds * Self.decimatedRate / 1000
        (onsetShare, onsetZScore, confident) = (t.onsetShare, t.onsetZScore, t.confidentZScore)
        // At least 16 ms of lags, so the z-score has a spread to stand out of (not tuning).
        lagCount = max(64, Int(maximumLag * Double(Self.decimatedRate)))
        var size = 256
        while size < window + lagCount { size <<= 1 }
        fftSize = size
        nextHop = window

        // Low-pass at 1.6 kHz (decimated Nyquist 2 kHz), Kaiser-windowed sinc: part of the
        // decimation, fixed with it.
        lowpassTaps = 8 * factor + 1
        lowpass = .allocate(capacity: lowpassTaps)
        let cutoff = 1600.0 / Double(processingRate)
        let center = Double(lowpassTaps - 1) / 2
        var sum = 0.0
        for k in 0..<lowpassTaps {
            let t = Double(k) - center
            let sinc = t == 0 ? 2 * cutoff : Math.sin(2 * Double.pi * cutoff * t) / (Double.pi * t)
            let r = t / (center + 1)
            let w = Math.besselI0(6 * (1 - r * r).squareRoot()) / Math.besselI0(6)
            lowpass[k] = Float(sinc * w)
            sum += sinc * w
        }
        for k in 0..<lowpassTaps { lowpass[k] = Float(Double(lowpass[k]) / sum) }
        renderTail = .allocate(capacity: 2 * lowpassTaps)
        captureTail = .allocate(capacity: 2 * lowpassTaps)
        renderTail.initialize(repeating: 0, count: 2 * lowpassTaps)
        captureTail.initialize(repeating: 0, count: 2 * lowpassTaps)

        var ring = 1024
        while ring < 4 * (window + lagCount) + 4 * Self.decimatedRate { ring <<= 1 }
        ringMask = ring - 1
        renderRing = .allocate(capacity: ring)
        captureRing = .allocate(capacity: ring)
        renderRing.initialize(repeating: 0, count: ring)
        captureRing.initialize(repeating: 0, count: ring)

        fft = RealFFT(size: fftSize)
        let bins = fftSize / 2 + 1
        bufferA = .allocate(capacity: fftSize); bufferB = .allocate(capacity: fftSize)
        aRe = .allocate(capacity: bins); aIm = .allocate(capacity: bins)
        bRe = .allocate(capacity: bins); bIm = .allocate(capacity: bins)
        gRe = .allocate(capacity: bins); gIm = .allocate(capacity: bins)
        pRe = .allocate(capacity: bins); pIm = .allocate(capacity: bins)
        gRe.initialize(repeating: 0, count: bins); gIm.initialize(repeating: 0, count: bins)
        correlation = .allocate(capacity: fftSize)
        bandLow = max(1, Int(t.bandLowHz / Double(Self.decimatedRate) * Double(fftSize)))
        bandHigh = min(bins - 2, Int(t.bandHighHz / Double(Self.decimatedRate) * Double(fftSize)))
        shiftTracker = ResponseShiftTracker(fftSize: fftSize, bandLow: bandLow, bandHigh: bandHigh,
                                            minimumCoherence: t.shiftMinimumCoherence, searchRadius: t.shiftSearchRadius)
    }

    deinit {
        lowpass.deallocate(); renderTail.deallocate(); captureTail.deallocate()
        renderRing.deallocate(); captureRing.deallocate()
        bufferA.deallocate(); bufferB.deallocate()
        aRe.deallocate(); aIm.deallocate(); bRe.deallocate(); bIm.deallocate()
        gRe.deallocate(); gIm.deallocate(); pRe.deallocate(); pIm.deallocate()
        correlation.deallocate()
    }

    /// The longest delay the decimated rings can serve, in processing samples.
    var maximumMinimumLag: Int { ((ringMask + 1) / 2 - window - lagCount) * factor }

    /// Moves the search range to start at `delay` processing samples (rounded down to the
    /// decimated grid), and forgets the averaged cross-spectrum if it moved. A start within
    /// `searchMove` of the last one asked for leaves the search where it is: a report that creeps
    /// or wanders would otherwise keep the average from ever filling.
    func setSearchStart(_ delay: Int) {
        if let requestedSearchStart, abs(delay - requestedSearchStart) <= searchMove { return }
        requestedSearchStart = delay
        let lag = max(0, min(delay, maximumMinimumLag)) / factor
        guard lag != lagMinimum else { return }
        lagMinimum = lag
        forgetAverage()
    }

    /// Forgets the averaged cross-spectrum (keeps the signal history).
    func forgetAverage() {
        let bins = fftSize / 2 + 1
        gRe.update(repeating: 0, count: bins)
        gIm.update(repeating: 0, count: bins)
        averagedHops = 0
        weightSum = 0
        timeSum = 0
    }

    /// Appends loudspeaker samples (processing rate, full scale 1.0).
    func pushRender(_ samples: UnsafePointer<Float>, _ n: Int) {
        // Locals in the loop: a stored property passed inout costs a dynamic exclusivity check per sample.
        var phase = renderPhase, count = renderCount
        for i in 0..<n {
            if let y = decimate(samples[i], tail: renderTail, phase: &phase) {
                renderRing[count & ringMask] = y
                count += 1
            }
        }
        renderPhase = phase
        renderCount = count
    }

    /// Appends microphone samples; returns a new estimate when a hop completes and the far end
    /// was active.
    func pushCapture(_ samples: UnsafePointer<Float>, _ n: Int) -> Estimate? {
        var result: Estimate?
        var phase = capturePhase
        for i in 0..<n {
            if let y = decimate(samples[i], tail: captureTail, phase: &phase) {
                captureRing[captureCount & ringMask] = y
                captureCount += 1
                if captureCount >= nextHop {
                    nextHop += hop
                    if let e = measure() { result = e }
                }
            }
        }
        capturePhase = phase
        return result
    }

    /// Low-pass FIR evaluated at every `factor`-th input.
    @inline(__always)
    private func decimate(_ x: Float, tail: UnsafeMutablePointer<Float>, phase: inout Int) -> Float? {
        // A doubled history: the newest `lowpassTaps` samples are always contiguous.
        let slot = phase % lowpassTaps
        tail[slot] = x
        tail[slot + lowpassTaps] = x
        phase += 1
        guard phase % factor == 0 else { return nil }
        let start = (slot + 1) % lowpassTaps
        return dot(lowpass, tail + start, lowpassTaps)
    }

    /// One GCC-PHAT update at the current end of the capture stream.
    private func measure() -> Estimate? {
        let end = captureCount
        let start = end - window
        // Loudspeaker span: lags lagMinimum ..< lagMinimum + lagCount behind the window.
        let bStart = start - lagMinimum - lagCount + 1
        let bCount = window + lagCount - 1
        guard bStart >= 0, end - 1 - lagMinimum < renderCount else { return nil }
        let (capturePower, renderPower) = loadWindows(captureFrom: start, renderFrom: bStart, renderCount: bCount)
        // Far end silent (below -70 dBFS by default): nothing to learn.
        guard renderPower > farSilentPower, capturePower > captureSilentPower else { return nil }
        accumulateCrossSpectrum(renderPower: renderPower, capturePower: capturePower, end: end)
        averagedHops += 1
        guard averagedHops >= minimumAveragedHops, phaseTransform() else { return nil }
        fft.inverse(real: pRe, imaginary: pIm, correlation)
        return estimate(end: end)
    }

    /// Copies the capture window and the loudspeaker span, zero-padded, into the FFT inputs;
    /// returns their mean powers.
    private func loadWindows(captureFrom start: Int, renderFrom bStart: Int, renderCount bCount: Int) -> (capture: Float, render: Float) {
        var renderPower: Float = 0, capturePower: Float = 0
        for i in 0..<window {
            let v = captureRing[(start + i) & ringMask]
            bufferA[i] = v
            capturePower += v * v
        }
        for i in window..<fftSize { bufferA[i] = 0 }
        for j in 0..<bCount {
            let v = renderRing[(bStart + j) & ringMask]
            bufferB[j] = v
            renderPower += v * v
        }
        for j in bCount..<fftSize { bufferB[j] = 0 }
        return (capturePower / Float(window), renderPower / Float(bCount))
    }

    /// Adds this hop's cross spectrum to the smoothed one.
    private func accumulateCrossSpectrum(renderPower: Float, capturePower: Float, end: Int) {
        fft.forward(bufferA, real: aRe, imaginary: aIm)
        fft.forward(bufferB, real: bRe, imaginary: bIm)
        let bins = fftSize / 2 + 1
        // Weight each hop by its energy relative to the running level: loud stretches count more
        // than the fading ends of words, whatever the overall level.
        let keep = 1 - levelRate
        renderLevel = renderLevel == 0 ? renderPower : keep * renderLevel + levelRate * renderPower
        captureLevel = captureLevel == 0 ? capturePower : keep * captureLevel + levelRate * capturePower
        let scale = 1 / (renderLevel * captureLevel).squareRoot()
        let weight = Double((renderPower * capturePower).squareRoot() * scale)
        weightSum = Double(smoothing) * weightSum + weight
        timeSum = Double(smoothing) * timeSum + weight * Double(end - window / 2)
        for k in 0..<bins {
            let cr = aRe[k] * bRe[k] + aIm[k] * bIm[k]
            let ci = aRe[k] * bIm[k] - aIm[k] * bRe[k]
            gRe[k] = smoothing * gRe[k] + cr * scale
            gIm[k] = smoothing * gIm[k] + ci * scale
        }
    }

    /// The phase transform of the smoothed cross spectrum within the speech band, into `pRe`/`pIm`;
    /// false when the band holds nothing.
    private func phaseTransform() -> Bool {
        let bins = fftSize / 2 + 1
        var meanMagnitude: Float = 0
        for k in bandLow...bandHigh { meanMagnitude += (gRe[k] * gRe[k] + gIm[k] * gIm[k]).squareRoot() }
        meanMagnitude /= Float(bandHigh - bandLow + 1)
        guard meanMagnitude > 0 else { return false }
        let floor = whiteningFloor * meanMagnitude
        for k in 0..<bins {
            if k < bandLow || k > bandHigh {
                pRe[k] = 0
                pIm[k] = 0
            } else {
                let m = (gRe[k] * gRe[k] + gIm[k] * gIm[k]).squareRoot() + floor
                pRe[k] = gRe[k] / m
                pIm[k] = gIm[k] / m
            }
        }
        return true
    }

    /// The delay, its confidence and onset, read from the correlation's peak.
    private func estimate(end: Int) -> Estimate {
        var peak = 0
        var sum: Float = 0, sumSquares: Float = 0
        for k in 0..<lagCount {
            let v = correlation[k]
            if v > correlation[peak] { peak = k }
            sum += v
            sumSquares += v * v
        }
        let mean = sum / Float(lagCount)
        let spread = max(1e-12, (sumSquares / Float(lagCount) - mean * mean).squareRoot())
        let confidence = Double((correlation[peak] - mean) / spread)
        let refined = refine(peak)
        // correlation[k] pairs the window with the loudspeaker k samples after bStart: a larger
        // k is a shorter lag, an earlier arrival.
        let top = Double(lagMinimum + lagCount - 1)
        let lag = top - refined
        let threshold = mean + max(onsetShare * (correlation[peak] - mean), onsetZScore * spread)
        var earliest = peak
        for k in (peak + 1)..<min(lagCount, peak + 1 + onsetSearch) where correlation[k] >= threshold { earliest = k }
        let time = weightSum > 0 ? timeSum / weightSum : Double(end)
        let tracked = confidence >= confident
            ? shiftTracker.track(re: pRe, im: pIm, top: lagMinimum + lagCount - 1, peakLag: lag) : nil
        return Estimate(delay: lag * Double(factor), confidence: confidence,
                        onset: min(lag, top - Double(earliest)) * Double(factor),
                        trackedDelay: tracked.map { $0 * Double(factor) }, time: Int(time * Double(factor)))
    }

    /// The peak of the band-limited correlation near integer `peak`, to a fraction of a sample.
    private func refine(_ peak: Int) -> Double {
        BandCorrelation.refinePeak(peak, re: pRe, im: pIm, bandLow: bandLow, bandHigh: bandHigh, fftSize: fftSize)
    }

    /// Forgets everything.
    func reset() {
        renderTail.update(repeating: 0, count: 2 * lowpassTaps)
        captureTail.update(repeating: 0, count: 2 * lowpassTaps)
        renderPhase = 0
        capturePhase = 0
        renderRing.update(repeating: 0, count: ringMask + 1)
        captureRing.update(repeating: 0, count: ringMask + 1)
        renderCount = 0
        captureCount = 0
        nextHop = window
        renderLevel = 0
        captureLevel = 0
        forgetAverage()
        shiftTracker.reset()
        requestedSearchStart = nil
    }
}
