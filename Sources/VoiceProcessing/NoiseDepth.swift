import DSP

/// How deep the preprocessor suppresses noise: deep enough to bring the capture's noise floor
/// 45 dB under the loudest sound the microphone hears, from 6 to 20 dB (the numbers here are
/// ``VoiceProcessingTuning/NoiseDepth``'s defaults).
///
/// Why not always the full depth: a floor already far under the talkers gains nothing from
/// being suppressed further, and a floor suppressed that far leaves the canceller's residual echo
/// standing alone, where a listener hears it (AECMOS's echo score, `aecbench suite`,
/// `nonlinear`: 3.92 at 20 dB, 4.39 at 6 dB). A noisy room still gets all 20 dB.
///
/// The noise floor is a ``NoiseFloor`` (any quieter block at once, rising 0.5 dB a second); the loudest
/// sound holds and falls 3 dB a second, so it spans a talker's pauses. The depth changes in
/// steps of 2 dB or more, after 2 s of capture.
///
/// Thread safety: a value type; used by the I/O thread only. Nothing allocates.
struct NoiseDepth {
    /// The rules' numbers.
    let tuning: VoiceProcessingTuning.NoiseDepth
    private let fall: Double
    private let settleBlocks: Int
    private var noise: NoiseFloor
    private var loudest = 0.0
    private var blocks = 0
    /// The depth now, in dB (positive).
    private(set) var depthDB: Int

    init(blocksPerSecond: Double, tuning: VoiceProcessingTuning.NoiseDepth = .init()) {
        self.tuning = tuning
        depthDB = tuning.maximumDB
        noise = NoiseFloor(blocksPerSecond: blocksPerSecond, minimum: 1, riseDBPerSecond: tuning.noiseFloorRiseDBPerSecond)
        fall = Math.pow(10, -(tuning.loudestFallDBPerSecond / 10) / blocksPerSecond)
        settleBlocks = Int(tuning.settleSeconds * blocksPerSecond)
    }

    /// Takes one block's capture energy (16-bit units squared, summed); returns the new depth
    /// when it moved.
    mutating func update(energy: Double) -> Int? {
        let e = max(energy, 1)
        noise.update(energy)
        loudest = max(e, loudest * fall)
        blocks += 1
        guard blocks >= settleBlocks else { return nil }
        let ratioDB = 10 * Math.log10(loudest / noise.power)
        let wanted = Int(min(Double(tuning.maximumDB), max(Double(tuning.minimumDB), tuning.targetDB - ratioDB)).rounded())
        guard abs(wanted - depthDB) >= tuning.stepDB else { return nil }
        depthDB = wanted
        return wanted
    }

    /// Starts over (the streams restarted), at the full depth.
    mutating func reset() {
        noise.reset()
        (loudest, blocks, depthDB) = (0, 0, tuning.maximumDB)
    }
}
