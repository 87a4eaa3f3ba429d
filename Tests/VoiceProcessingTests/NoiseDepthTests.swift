import Foundation
import Testing
@testable import VoiceProcessing

/// The noise suppression's depth follows how far the capture's noise floor lies under its
/// loudest sound.
@Suite("Noise suppression depth")
struct NoiseDepthTests {
    static let blocksPerSecond = 100.0

    /// Feeds `seconds` of blocks, 0.3 s of talk at `talkDB` then 0.3 s of noise at `noiseDB` (block
    /// energies in dB), to `depth`, and returns it.
    static func run(_ depth: NoiseDepth = NoiseDepth(blocksPerSecond: blocksPerSecond), talkDB: Double, noiseDB: Double,
                    seconds: Double = 5) -> NoiseDepth {
        var depth = depth
        for block in 0..<Int(seconds * blocksPerSecond) {
            _ = depth.update(energy: pow(10, ((block / 30) % 2 == 0 ? talkDB : noiseDB) / 10))
        }
        return depth
    }

    @Test("A quiet room (noise 40 dB under the talkers) is suppressed 6 dB, a noisy one (15 dB under) the full 20")
    func depthFollowsTheNoise() {
        #expect(Self.run(talkDB: 90, noiseDB: 50).depthDB == VoiceProcessingTuning.NoiseDepth().minimumDB)
        #expect(Self.run(talkDB: 90, noiseDB: 75).depthDB == VoiceProcessingTuning.NoiseDepth().maximumDB)
        // In between: 45 dB minus the distance; 30 dB under gives 15 dB.
        #expect(abs(Self.run(talkDB: 90, noiseDB: 60).depthDB - 15) <= 1)
    }

    @Test("Nothing moves in the first 2 s; a room that gets noisy gets the full depth back")
    func settlesThenFollows() {
        var depth = NoiseDepth(blocksPerSecond: Self.blocksPerSecond)
        var moved = false
        for _ in 0..<199 { moved = moved || depth.update(energy: 1e9) != nil }
        #expect(!moved && depth.depthDB == VoiceProcessingTuning.NoiseDepth().maximumDB)
        let quiet = Self.run(depth, talkDB: 90, noiseDB: 50)
        #expect(quiet.depthDB == VoiceProcessingTuning.NoiseDepth().minimumDB)
        // The noise comes up to 15 dB under the talkers; the floor follows at 0.5 dB a second.
        #expect(Self.run(quiet, talkDB: 90, noiseDB: 75, seconds: 80).depthDB == VoiceProcessingTuning.NoiseDepth().maximumDB)
    }
}
