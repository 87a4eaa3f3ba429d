import DSP
import Platform
import AudioAnalysis
@testable import Simulation
import Testing
import TestSupport

@Suite("Real FFT and partitioned convolution")
struct ConvolutionTests {
    @Test("The real FFT matches a direct DFT and inverts exactly", arguments: [4, 8, 16, 32, 64, 512, 2048])
    func fftMatchesDFT(size: Int) {
        let x = Tone.noise(count: size, rms: 1, seed: UInt64(size))
        let fft = RealFFT(size: size)
        var re = [Float](repeating: 0, count: size / 2 + 1), im = re
        fft.forward(x, real: &re, imaginary: &im)
        for k in 0...(size / 2) {
            var sr = 0.0, si = 0.0
            for n in 0..<size {
                let angle = -2 * Double.pi * Double(k * n) / Double(size)
                sr += Double(x[n]) * Math.cos(angle)
                si += Double(x[n]) * Math.sin(angle)
            }
            #expect(abs(Double(re[k]) - sr) < 1e-3 * Double(size).squareRoot())
            #expect(abs(Double(im[k]) - si) < 1e-3 * Double(size).squareRoot())
        }
        var back = [Float](repeating: 0, count: size)
        fft.inverse(real: re, imaginary: im, &back)
        for n in 0..<size { #expect(abs(back[n] - x[n]) < 1e-5) }
    }

    @Test("Partitioned convolution equals direct convolution", arguments: [1, 100, 129, 1500])
    func matchesDirectConvolution(taps: Int) {
        let ir = Tone.noise(count: taps, rms: 0.1, seed: 3)
        let x = Tone.noise(count: 3000, rms: 0.3, seed: 4)
        let expected = Convolution.filter(x, with: ir)
        let convolver = PartitionedConvolver(impulseResponse: ir, blockSize: 64)
        var y = [Float](repeating: 0, count: x.count)
        convolver.process(x, &y, count: x.count)
        let error = zip(expected, y).map { abs($0 - $1) }.max()!
        #expect(error < 1e-5, "largest difference \(error)")
    }

    @Test("Any split of the input gives bit-identical output")
    func chunkingInvariance() {
        let ir = Tone.noise(count: 700, rms: 0.1, seed: 5)
        let x = Tone.noise(count: 4000, rms: 0.3, seed: 6)
        let whole = PartitionedConvolver(impulseResponse: ir, blockSize: 128)
        var reference = [Float](repeating: 0, count: x.count)
        whole.process(x, &reference, count: x.count)
        var rng = SeededRandom(seed: 7)
        let pieces = PartitionedConvolver(impulseResponse: ir, blockSize: 128)
        var y = [Float](repeating: 0, count: x.count)
        var start = 0
        x.withUnsafeBufferPointer { xb in
            y.withUnsafeMutableBufferPointer { yb in
                while start < x.count {
                    let n = min(x.count - start, 1 + Int(rng.next() % 300))
                    pieces.process(xb.baseAddress! + start, yb.baseAddress! + start, count: n)
                    start += n
                }
            }
        }
        #expect(y == reference)
    }
}
