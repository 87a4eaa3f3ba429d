import Testing
@testable import VoiceProcessing

@Suite("Speech decision from the speech probability")
struct SpeechDetectorTests {
    @Test("Speech starts above the start probability and holds down to the continue probability")
    func hysteresis() {
        var detector = SpeechDetector(start: 35, continuing: 20)
        let probabilities = [10, 30, 36, 25, 21, 20, 30, 40, 15]
        let expected = [false, false, true, true, true, false, false, true, false]
        var decisions: [Bool] = []
        for p in probabilities { decisions.append(detector.update(probability: p)) }
        #expect(decisions == expected)
        detector.reset()
        let afterReset = detector.update(probability: 30)
        #expect(!afterReset)
    }
}
