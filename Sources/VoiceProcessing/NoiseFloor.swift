import DSP

/// A noise floor: the quietest block power seen, rising 0.5 dB a second (by default). It follows the noise
/// down at once and up slowly, so speech barely lifts it; for steady noise it sits 1 to 2 dB
/// under the noise's mean.
///
/// One rule for the unit's floors: the noise suppression's depth (``NoiseDepth``), the echo
/// gate's capture floor, and the comfort noise's, band by band.
///
/// Thread safety: a value; used by the I/O thread only. Nothing allocates.
struct NoiseFloor {
    private let rise: Double
    /// The least power a block counts with, so a floor of digital silence can still rise.
    private let minimum: Double
    /// The floor, in the caller's power units (+infinity before the first block).
    private(set) var power = Double.infinity

    /// - Parameter riseDBPerSecond: how fast the floor rises, dB per second.
    init(blocksPerSecond: Double, minimum: Double, riseDBPerSecond: Double = 0.5) {
        rise = Math.pow(10, riseDBPerSecond / 10 / blocksPerSecond)
        self.minimum = minimum
    }

    /// Takes one block's power.
    mutating func update(_ blockPower: Double) {
        power = min(max(blockPower, minimum), power * rise)
    }

    /// Forgets the floor: the next block sets it.
    mutating func reset() { power = .infinity }
}
