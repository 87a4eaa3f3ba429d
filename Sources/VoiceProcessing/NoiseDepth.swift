import DSP

/// How deep the preprocessor suppresses noise: deep enough to bring the capture's noise floor
/// ``targetDB`` under the loudest sound the microphone hears, from ``minimumDB`` to
/// ``maximumDB``.
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
    static let targetDB = 45.0
    static let minimumDB = 6
    static let maximumDB = 20

    private let fall: Double
    private let settleBlocks: Int
    private var noise: NoiseFloor
    private var loudest = 0.0
    private var blocks = 0
    /// The depth now, in dB (positive).
    private(set) var depthDB = NoiseDepth.maximumDB

    init(blocksPerSecond: Double) {
        noise = NoiseFloor(blocksPerSecond: blocksPerSecond, minimum: 1)
        fall = Math.pow(10, -0.3 / blocksPerSecond)
        settleBlocks = Int(2 * blocksPerSecond)
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
        let wanted = Int(min(Double(Self.maximumDB), max(Double(Self.minimumDB), Self.targetDB - ratioDB)).rounded())
        guard abs(wanted - depthDB) >= 2 else { return nil }
        depthDB = wanted
        return wanted
    }

    /// Starts over (the streams restarted), at the full depth.
    mutating func reset() {
        noise.reset()
        (loudest, blocks, depthDB) = (0, 0, Self.maximumDB)
    }
}
