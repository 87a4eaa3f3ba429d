import DSP

/// Power in critical-band-like bands of one block: a Hann-windowed real FFT, bins summed into
/// bands, by default of about a Bark from 100 Hz to 8 kHz (or the Nyquist frequency, if lower).
/// The transform is the block rounded up to a power of two (fixed by the algorithm).
///
/// Thread safety: not thread-safe (scratch buffers); one instance per thread. Nothing allocates
/// after `init`.
final class BandPowers {
    /// The first bin of each band in a transform of `transformSize` real points, and one past
    /// the last band's last bin, for bands between `edgesHz`. Bands narrower than a bin (low
    /// rates) merge into their neighbours.
    static func firstBins(transformSize size: Int, sampleRate: Int,
                          edgesHz: [Double] = VoiceProcessingTuning.barkEdgesHz) -> [Int] {
        let binHz = Double(sampleRate) / Double(size)
        var bins: [Int] = []
        for hz in edgesHz {
            let bin = min(size / 2, Int((hz / binHz).rounded()))
            if bins.last.map({ bin > $0 }) ?? true { bins.append(bin) }
        }
        return bins
    }
    let blockSize: Int
    /// Number of bands.
    let count: Int
    private let fft: RealFFT
    private let window: UnsafeMutablePointer<Float>
    private let input: UnsafeMutablePointer<Float>
    private let re: UnsafeMutablePointer<Float>
    private let im: UnsafeMutablePointer<Float>
    /// First bin of each band, and one past the last band's last bin.
    private let firstBin: UnsafeMutablePointer<Int>

    init(blockSize: Int, sampleRate: Int, edgesHz: [Double] = VoiceProcessingTuning.barkEdgesHz) {
        self.blockSize = blockSize
        var size = 4
        while size < blockSize { size <<= 1 }
        fft = RealFFT(size: size)
        let bins = Self.firstBins(transformSize: size, sampleRate: sampleRate, edgesHz: edgesHz)
        count = bins.count - 1
        firstBin = .allocate(capacity: bins.count)
        for (i, b) in bins.enumerated() { firstBin[i] = b }
        window = .hann(blockSize)
        input = .allocate(capacity: size)
        input.initialize(repeating: 0, count: size)
        re = .allocate(capacity: size / 2 + 1)
        im = .allocate(capacity: size / 2 + 1)
    }

    deinit {
        window.deallocate(); input.deallocate(); re.deallocate(); im.deallocate(); firstBin.deallocate()
    }

    /// Band powers of `block` (16-bit samples), in 16-bit units squared, into `bands`.
    func analyze(_ block: UnsafePointer<Int16>, into bands: UnsafeMutablePointer<Double>) {
        for i in 0..<blockSize { input[i] = Float(block[i]) * window[i] }
        transform(into: bands)
    }

    /// Band powers of `block` (full scale 1), in 16-bit units squared, into `bands`.
    func analyze(_ block: UnsafePointer<Float>, into bands: UnsafeMutablePointer<Double>) {
        for i in 0..<blockSize { input[i] = block[i] * 32768 * window[i] }
        transform(into: bands)
    }

    private func transform(into bands: UnsafeMutablePointer<Double>) {
        fft.forward(input, real: re, imaginary: im)
        for b in 0..<count {
            var sum = 0.0
            for k in firstBin[b]..<firstBin[b + 1] { sum += Double(re[k] * re[k] + im[k] * im[k]) }
            bands[b] = sum
        }
    }
}
