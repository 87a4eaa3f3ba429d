import Foundation
import Testing
import TestSupport
@testable import VoiceProcessing

@Suite("The tuning: JSON both ways, partial files, ranges, and what it reaches")
struct VoiceProcessingTuningTests {
    static func decode(_ json: String) throws -> VoiceProcessingTuning {
        try JSONDecoder().decode(VoiceProcessingTuning.self, from: Data(json.utf8))
    }

    static func encode(_ tuning: VoiceProcessingTuning) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        return try encoder.encode(tuning)
    }

    @Test("The defaults and a changed tuning come back from JSON unchanged, floats included")
    func roundTrip() throws {
        let shipped = VoiceProcessingTuning()
        #expect(try JSONDecoder().decode(VoiceProcessingTuning.self, from: Self.encode(shipped)) == shipped)
        var changed = shipped
        changed.gate.floorGain = 0.05
        changed.delayEstimator.crossSpectrumSmoothing = 0.8
        changed.drift.capacity = 100
        changed.comfortNoise.bandEdgesHz = [100, 1000, 4000]
        changed.activity.conversationHoldSeconds = 1.5
        #expect(try JSONDecoder().decode(VoiceProcessingTuning.self, from: Self.encode(changed)) == changed)
    }

    @Test("Every part is in the JSON, by its name")
    func partsByName() throws {
        let object = try #require(try JSONSerialization.jsonObject(with: Self.encode(VoiceProcessingTuning())) as? [String: Any])
        #expect(Set(object.keys) == ["alignment", "delayEstimator", "echoShift", "drift", "echoPath", "cancellerHealth", "gate", "nearEndBands",
                                    "coherence", "distortionSuppressor", "noiseDepth", "comfortNoise", "postFilter", "activity"])
        let gate = try #require(object["gate"] as? [String: Any])
        #expect(gate["releaseERLEDB"] as? Double == 15)
    }

    @Test("A partial file changes what it holds; every missing key keeps its default")
    func partialDecode() throws {
        #expect(try Self.decode("{}") == VoiceProcessingTuning())
        #expect(try Self.decode(#"{"drift": {}, "gate": {}}"#) == VoiceProcessingTuning())
        var expected = VoiceProcessingTuning()
        expected.gate.releaseERLEDB = 20
        expected.noiseDepth.maximumDB = 16
        #expect(try Self.decode(#"{"gate": {"releaseERLEDB": 20}, "noiseDepth": {"maximumDB": 16}}"#) == expected)
    }

    @Test("A key that is not a tuning constant, or a value of the wrong type, is an error")
    func strictKeys() {
        #expect(throws: DecodingError.self) { try Self.decode(#"{"gates": {}}"#) }
        #expect(throws: DecodingError.self) { try Self.decode(#"{"gate": {"releaseERLE": 20}}"#) }
        #expect(throws: DecodingError.self) { try Self.decode(#"{"gate": {"releaseERLEDB": "20"}}"#) }
        #expect(throws: DecodingError.self) { try Self.decode(#"{"drift": {"capacity": 1.5}}"#) }
    }

    /// One value out of its range, and the name the error must give.
    struct Case: Sendable, CustomTestStringConvertible {
        let name: String
        let change: @Sendable (inout VoiceProcessingTuning) -> Void
        var testDescription: String { name }
    }

    static let outOfRange: [Case] = [
        Case(name: "alignment.maximumResidualMilliseconds") { $0.alignment.maximumResidualMilliseconds = 0.1 },
        Case(name: "delayEstimator.hopMilliseconds") { $0.delayEstimator.hopMilliseconds = 512 },
        Case(name: "delayEstimator.bandHighHz") { $0.delayEstimator.bandHighHz = 2500 },
        Case(name: "drift.capacity") { $0.drift.capacity = 4 },
        Case(name: "echoPath.absentHops") { $0.echoPath.absentHops = 0 },
        Case(name: "cancellerHealth.divergenceRatio") { $0.cancellerHealth.divergenceRatio = -1 },
        Case(name: "gate.releaseERLEDB") { $0.gate.releaseERLEDB = .nan },
        Case(name: "gate.residualFull") { $0.gate.residualFull = $0.gate.residualStart },
        Case(name: "gate.residualStart") { $0.gate.residualStart = 1 },
        Case(name: "gate.floorGain") { $0.gate.floorGain = 2 },
        Case(name: "nearEndBands.bandEdgesHz") { $0.nearEndBands.bandEdgesHz = [300, 200, 400] },
        Case(name: "coherence.bandHighHz") { $0.coherence.bandHighHz = 350 },
        Case(name: "distortionSuppressor.minimumGain") { $0.distortionSuppressor.minimumGain = 1.5 },
        Case(name: "noiseDepth.maximumDB") { $0.noiseDepth.maximumDB = 4 },
        Case(name: "comfortNoise.bandEdgesHz") { $0.comfortNoise.bandEdgesHz = [100] },
        Case(name: "postFilter.agcMaximumGainDB") { $0.postFilter.agcMaximumGainDB = 90 },
        Case(name: "activity.mutedSpeechOnsetSeconds") { $0.activity.mutedSpeechOnsetSeconds = -1 },
    ]

    @Test("A value out of its range is rejected by name, and no unit is made with it", arguments: outOfRange)
    func rejectsOutOfRange(_ c: Case) throws {
        try VoiceProcessingTuning().validate()
        var tuning = VoiceProcessingTuning()
        c.change(&tuning)
        let error = #expect(throws: VoiceProcessingError.self) { try tuning.validate() }
        #expect(error?.message.contains(c.name) == true, "\(error?.message ?? "")")
        #expect(throws: VoiceProcessingError.self) {
            try VoiceProcessingUnit(configuration: VoiceProcessingConfiguration(tuning: tuning))
        }
    }

    /// Two seconds of echo through a unit with `tuning`; the output.
    static func process(_ tuning: VoiceProcessingTuning) throws -> [Int16] {
        let far = VPSignals.pcm(try VPSignals.speech(Fixtures.englishFemale, seconds: 2))
        var mic = far.enumerated().map { i, _ in i >= 80 ? Int16(Double(far[i - 80]) * 0.5) : 0 }
        let unit = try VoiceProcessingUnit(configuration: VoiceProcessingConfiguration(maximumFramesPerPeriod: 160,
                                                                                       agcEnabled: false, tuning: tuning))
        far.withUnsafeBufferPointer { f in
            mic.withUnsafeMutableBufferPointer { m in
                for start in stride(from: 0, to: far.count, by: 160) {
                    unit.process(capture: UnsafeMutableBufferPointer(rebasing: m[start..<(start + 160)]),
                                 render: UnsafeBufferPointer(rebasing: f[start..<(start + 160)]), timing: .zero)
                }
            }
        }
        return mic
    }

    @Test("The defaults through JSON give the shipped output bit for bit; a changed value reaches the chain")
    func reachesTheChain() throws {
        let shipped = try Self.process(VoiceProcessingTuning())
        let decoded = try JSONDecoder().decode(VoiceProcessingTuning.self, from: Self.encode(VoiceProcessingTuning()))
        #expect(try Self.process(decoded) == shipped)
        var gentler = VoiceProcessingTuning()
        gentler.gate.floorGain = 0.3
        #expect(try Self.process(gentler) != shipped)
    }

    @Test("A stage takes its part: the divergence rule's block count")
    func stageTakesItsPart() {
        var rules = VoiceProcessingTuning.CancellerHealth()
        rules.divergenceBlocks = 4
        let health = CancellerHealth(blockSize: 160, sampleRate: 16000, tuning: rules)
        let reference = [Int16](repeating: 3000, count: 160), capture = [Int16](repeating: 1000, count: 160)
        let louder = [Int16](repeating: 2000, count: 160)
        let verdicts = (0..<4).map { _ in health.update(capture: capture, reference: reference, output: louder) }
        #expect(verdicts == [.normal, .normal, .normal, .diverged])
    }
}
