import DSP
import AudioAnalysis
import Testing
@testable import VoiceProcessing

@Suite("Band powers of a frame")
struct BandPowersTests {
    @Test("A 1 kHz tone's power lands in the band around 1 kHz, at 16 and 48 kHz", arguments: [16000, 48000])
    func toneLandsInItsBand(rate: Int) {
        let frame = rate / 100
        let analyzer = BandPowers(blockSize: frame, sampleRate: rate)
        #expect(analyzer.count == 20)
        let tone = (0..<frame).map { Int16(8000 * Math.sin(2 * Double.pi * 1000 * Double($0) / Double(rate))) }
        var bands = [Double](repeating: 0, count: analyzer.count)
        tone.withUnsafeBufferPointer { x in
            bands.withUnsafeMutableBufferPointer { analyzer.analyze(x.baseAddress!, into: $0.baseAddress!) }
        }
        let total = bands.reduce(0, +)
        // Band 7 is 920 to 1080 Hz; a 10 ms Hann window spreads the tone 200 Hz each way.
        #expect(bands.firstIndex(of: bands.max()!) == 7)
        #expect(bands[6...8].reduce(0, +) > 0.95 * total)
        // The same samples as floats (full scale 1) give the same powers.
        let floats = tone.map { Float($0) / 32768 }
        var again = [Double](repeating: 0, count: analyzer.count)
        floats.withUnsafeBufferPointer { x in
            again.withUnsafeMutableBufferPointer { analyzer.analyze(x.baseAddress!, into: $0.baseAddress!) }
        }
        for (a, b) in zip(bands, again) { #expect(abs(a - b) <= 1e-4 * total) }
    }
}
