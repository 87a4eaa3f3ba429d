import DSP
import Platform
import AudioAnalysis
import Testing
@testable import VoiceProcessing

/// A whitened cross-spectrum: a random-phase response `seed`, its correlation peak at index `index`.
private func spectrum(seed: UInt64, index: Double, fftSize: Int) -> (re: [Float], im: [Float]) {
    var random = SeededRandom(seed: seed)
    let bins = fftSize / 2 + 1
    var re = [Float](repeating: 0, count: bins), im = [Float](repeating: 0, count: bins)
    for k in 0..<bins {
        // A peak at `index` is the phase -w_k * index; the room adds a random phase per bin.
        let phase = random.unit() * 2 * Double.pi - 2 * Double.pi / Double(fftSize) * Double(k) * index
        re[k] = Float(Math.cos(phase))
        im[k] = Float(Math.sin(phase))
    }
    return (re, im)
}

@Suite("Response shift tracking")
struct ResponseShiftTrackerTests {
    let fftSize = 1024, bandLow = 40, bandHigh = 460

    private func track(_ tracker: ResponseShiftTracker, seed: UInt64, index: Double, top: Int, peakLag: Double) -> Double {
        let (re, im) = spectrum(seed: seed, index: index, fftSize: fftSize)
        return tracker.track(re: re, im: im, top: top, peakLag: peakLag)
    }

    @Test("A shifted response is followed to a fraction of a sample, whatever lag its peak gives")
    func followsAShift() {
        let tracker = ResponseShiftTracker(fftSize: fftSize, bandLow: bandLow, bandHigh: bandHigh)
        // The first measurement starts the track at its peak's lag (top - index).
        #expect(track(tracker, seed: 3, index: 400, top: 600, peakLag: 200) == 200)
        // The response moves 0.1 sample later per step: its index falls by 0.1. The peak lag
        // passed in is deliberately wrong (a diffuse room's peak jumping): it must not matter.
        for step in 1...30 {
            let lag = track(tracker, seed: 3, index: 400 - 0.1 * Double(step), top: 600, peakLag: step % 2 == 0 ? 150 : 260)
            #expect(abs(lag - (200 + 0.1 * Double(step))) < 0.01, "step \(step): \(lag)")
        }
        #expect(tracker.coherence > 0.99)
    }

    @Test("A moved search range (a new top) is not a shift")
    func searchRangeMoves() {
        let tracker = ResponseShiftTracker(fftSize: fftSize, bandLow: bandLow, bandHigh: bandHigh)
        _ = track(tracker, seed: 3, index: 400, top: 600, peakLag: 200)
        // The range now starts 50 lags later: the same lag 200 sits at index 450.
        let lag = track(tracker, seed: 3, index: 450, top: 650, peakLag: 200)
        #expect(abs(lag - 200) < 0.01, "\(lag)")
    }

    @Test("A new room restarts the snapshot where the track was, without a step")
    func newRoomContinues() {
        let tracker = ResponseShiftTracker(fftSize: fftSize, bandLow: bandLow, bandHigh: bandHigh)
        _ = track(tracker, seed: 3, index: 400, top: 600, peakLag: 200)
        _ = track(tracker, seed: 3, index: 399.5, top: 600, peakLag: 200)
        // Another response altogether: nothing in common with the snapshot.
        let lag = track(tracker, seed: 9, index: 390, top: 600, peakLag: 210)
        #expect(tracker.coherence == 1, "the new response became the snapshot")
        #expect(abs(lag - 200.5) < 0.01, "\(lag)")
        // And the new snapshot is followed from there.
        let next = track(tracker, seed: 9, index: 389.8, top: 600, peakLag: 210)
        #expect(abs(next - 200.7) < 0.01, "\(next)")
    }
}
