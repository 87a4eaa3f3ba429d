public import ArgumentParser
import Simulation

extension Engine: ExpressibleByArgument {}
extension LoudspeakerNonlinearity: ExpressibleByArgument {}

extension Metrics {
    /// Adds what the engine itself reported, and its speed: processing time over audio time.
    mutating func record(_ result: EngineResult, sampleRate: Int) {
        estimatedDelayMs = result.estimatedDelayMs
        estimatedDriftPPM = result.estimatedDriftPPM
        cancellerResets = result.cancellerResets
        echoMoves = result.echoMoves
        realtimeFactor = result.seconds / (Double(result.output.count) / Double(sampleRate))
    }

    /// Scores the double talk's near end in the output with PESQ and STOI (Tools/score), when
    /// the scenario has double talk and the scorer runs.
    mutating func scoreDoubleTalk(_ truth: GroundTruth, output: [Float], workDirectory: String) {
        guard let dt = truth.doubleTalk,
              let q = SpeechQuality.score(reference: Array(truth.near[dt]), degraded: Array(output[dt]),
                                          sampleRate: truth.sampleRate, workDirectory: workDirectory) else { return }
        pesq = q.pesq
        stoi = q.stoi
    }
}

/// `aecbench process --drift`.
enum DriftMode: String, ExpressibleByArgument { case auto, off }

/// `aecbench suite --room`: the image-method room, or exponentially decaying noise.
enum RoomModel: String, ExpressibleByArgument {
    case shoebox
    case decayingNoise = "decaying-noise"
}
