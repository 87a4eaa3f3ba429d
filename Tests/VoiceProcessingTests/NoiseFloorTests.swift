import Foundation
import Testing
@testable import VoiceProcessing

@Suite("Noise floor: down at once, up 0.5 dB a second")
struct NoiseFloorTests {
    static let blocksPerSecond = 100.0

    static func db(_ power: Double) -> Double { 10 * log10(power) }

    @Test("The first block sets it; a quieter block lowers it at once; speech lifts it 0.5 dB a second")
    func followsDownAndRisesSlowly() {
        var floor = NoiseFloor(blocksPerSecond: Self.blocksPerSecond, minimum: 1)
        #expect(floor.power == .infinity)
        floor.update(1000)
        #expect(floor.power == 1000)
        floor.update(10)
        #expect(floor.power == 10)
        // Two seconds of blocks 40 dB louder: 1 dB up, not 40.
        for _ in 0..<200 { floor.update(1e5) }
        #expect(abs(Self.db(floor.power / 10) - 1) < 0.01)
    }

    @Test("A floor of digital silence rises from its minimum; with a minimum of 0 it would stay at 0")
    func silenceRisesFromTheMinimum() {
        var floor = NoiseFloor(blocksPerSecond: Self.blocksPerSecond, minimum: 1)
        var stuck = NoiseFloor(blocksPerSecond: Self.blocksPerSecond, minimum: 0)
        floor.update(0)
        stuck.update(0)
        for _ in 0..<100 {
            floor.update(50)
            stuck.update(50)
        }
        #expect(abs(Self.db(floor.power) - 0.5) < 0.01)
        #expect(stuck.power == 0)
        floor.reset()
        #expect(floor.power == .infinity)
    }
}
