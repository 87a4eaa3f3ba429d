import DSP
import AudioAnalysis
import Testing
@testable import VoiceProcessing

@Suite("FIFO, reference ring and FFT")
struct BufferTests {
    @Test("The FIFO keeps order across wrap positions", arguments: [1, 7, 16])
    func fifoSweep(chunk: Int) {
        let fifo = SampleFIFO<Int16>(capacity: 16)
        var written: Int16 = 0, read: Int16 = 0
        var input = [Int16](repeating: 0, count: chunk), output = [Int16](repeating: 0, count: chunk)
        var discard = [Int16](repeating: 0, count: 16)
        // Move the head by 0, 1, ... 15 slots between rounds, so reads and writes wrap everywhere.
        for offset in 0..<16 {
            fifo.pushZeros(offset)
            fifo.pop(into: &discard, offset)
            for _ in 0..<40 {
                for i in 0..<chunk { input[i] = written; written &+= 1 }
                fifo.push(input, chunk)
                fifo.pop(into: &output, chunk)
                for i in 0..<chunk {
                    #expect(output[i] == read)
                    read &+= 1
                }
            }
            #expect(fifo.count == 0 && fifo.space == 16)
        }
    }

    @Test("The ring returns whole-sample delays exactly and zeros outside its history")
    func ringExact() {
        let ring = ReferenceRing(span: 100)
        let x = (0..<1000).map { Float($0) }
        ring.write(x, 1000)
        var out = [Float](repeating: -1, count: 10)
        ring.read(from: 990, step: 1, count: 10, into: &out)
        #expect(out == (990..<1000).map(Float.init))
        ring.read(from: 995, step: 1, count: 10, into: &out)
        #expect(Array(out[5...]) == [0, 0, 0, 0, 0], "samples not yet written read as zero")
        ring.read(from: 5, step: 1, count: 1, into: &out)
        #expect(out[0] == 0, "samples older than the history read as zero")
    }

    @Test("Fractional reads of a band-limited signal are accurate to -80 dB")
    func ringFractional() {
        let ring = ReferenceRing(span: 4000)
        let fs = 16000.0, f = 1234.5
        let x = (0..<4000).map { Float(Math.sin(2 * Double.pi * f * Double($0) / fs)) }
        ring.write(x, x.count)
        var out = [Float](repeating: 0, count: 500)
        let start = 1000.3, step = 1 - 100e-6
        ring.read(from: start, step: step, count: 500, into: &out)
        var worst: Float = 0
        for i in 0..<500 {
            let t = start + Double(i) * step
            worst = max(worst, abs(out[i] - Float(Math.sin(2 * Double.pi * f * t / fs))))
        }
        #expect(worst < 1e-4, "largest error \(worst)")
    }

    @Test("The real FFT inverts exactly", arguments: [64, 512, 4096])
    func fftRoundTrip(size: Int) {
        let fft = RealFFT(size: size)
        let x = Tone.noise(count: size, rms: 1, seed: 3)
        var re = [Float](repeating: 0, count: size / 2 + 1), im = re, back = [Float](repeating: 0, count: size)
        fft.forward(x, real: &re, imaginary: &im)
        fft.inverse(real: re, imaginary: im, &back)
        for i in 0..<size { #expect(abs(back[i] - x[i]) < 1e-5) }
        // Parseval: sum x^2 = (|X0|^2 + 2 sum |Xk|^2 + |XN/2|^2) / N
        var spectral = Double(re[0] * re[0] + re[size / 2] * re[size / 2])
        for k in 1..<(size / 2) { spectral += 2 * Double(re[k] * re[k] + im[k] * im[k]) }
        #expect(abs(spectral / Double(size) - Levels.energy(x)) < 1e-3 * Levels.energy(x))
    }
}
