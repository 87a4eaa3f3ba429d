import AudioAnalysis
import Foundation
import SpeexDSP
import VoiceProcessing
import WAV

/// What an engine made of one far/mic pair.
struct EngineResult {
    var output: [Float]
    /// The linear canceller's output, when the engine exposes it.
    var linear: [Float]?
    var seconds: Double
    var estimatedDelayMs: Double?
    var estimatedDriftPPM: Double?
    var cancellerResets: Int?
    var echoMoves: Int?
}

/// The echo cancellers the bench compares.
enum Engine: String, CaseIterable, Codable {
    /// CallAudio's VoiceProcessingUnit (aligned SpeexDSP MDF + preprocessor).
    case callaudio
    /// Plain SpeexDSP as most applications use it: MDF (256 ms tail, 10 ms frames) + preprocessor
    /// with residual echo suppression, reference fed as is.
    case speex
    /// WebRTC AEC3 through the `aec-audio-processing` Python wheel (Tools/scoring/aec3.py).
    case aec3
    /// Nothing removed (the microphone as is).
    case passthrough

    var title: String {
        switch self {
        case .callaudio: "CallAudio"
        case .speex: "SpeexDSP"
        case .aec3: "WebRTC AEC3"
        case .passthrough: "passthrough"
        }
    }
}

/// Options shared by `process` and `suite`.
struct ProcessingOptions {
    var tailMs = 256
    var frameMs = 10
    /// nil: automatic (device delay + estimator); else a fixed delay in ms.
    var delayMs: Double?
    var drift = true
    var suppression = true
    /// The CallAudio chain's numbers (`--tuning`); the other engines ignore them.
    var tuning = VoiceProcessingTuning()
}

enum Engines {
    static func run(_ engine: Engine, far: [Float], mic: [Float], sampleRate: Int, options: ProcessingOptions,
                    workDirectory: String) throws -> EngineResult {
        switch engine {
        case .callaudio: try runCallAudio(far: far, mic: mic, sampleRate: sampleRate, options: options)
        case .speex: try runSpeex(far: far, mic: mic, sampleRate: sampleRate, options: options)
        case .passthrough: EngineResult(output: mic, linear: mic, seconds: 0)
        case .aec3: try AEC3.run(far: far, mic: mic, sampleRate: sampleRate, workDirectory: workDirectory)
        }
    }

    /// The CallAudio unit, fed period by period as the I/O thread would (no device delay known).
    static func runCallAudio(far: [Float], mic: [Float], sampleRate: Int, options: ProcessingOptions) throws -> EngineResult {
        let period = sampleRate * options.frameMs / 1000
        var config = VoiceProcessingConfiguration(deviceSampleRate: sampleRate, processingSampleRate: sampleRate,
                                                  maximumFramesPerPeriod: period,
                                                  blockMilliseconds: options.frameMs,
                                                  echoCanceller: .speex(tailSeconds: Double(options.tailMs) / 1000),
                                                  compensatesDrift: options.drift,
                                                  suppressesResidualEcho: options.suppression,
                                                  agcEnabled: false, tuning: options.tuning)
        if let d = options.delayMs { config.delay = .fixed(seconds: d / 1000) }
        let unit = try VoiceProcessingUnit(configuration: config)
        let count = min(far.count, mic.count) / period * period
        let farPCM = far.prefix(count).map(WAVAudio.int16)
        var micPCM = mic.prefix(count).map(WAVAudio.int16)
        var linear = [Int16](repeating: 0, count: count)
        let clock = ContinuousClock()
        let elapsed = clock.measure {
            farPCM.withUnsafeBufferPointer { farAll in
                micPCM.withUnsafeMutableBufferPointer { micAll in
                    linear.withUnsafeMutableBufferPointer { linearAll in
                        for start in stride(from: 0, to: count, by: period) {
                            unit.process(capture: UnsafeMutableBufferPointer(rebasing: micAll[start..<(start + period)]),
                                         render: UnsafeBufferPointer(rebasing: farAll[start..<(start + period)]),
                                         timing: .zero,
                                         linearOutput: UnsafeMutableBufferPointer(rebasing: linearAll[start..<(start + period)]))
                        }
                    }
                }
            }
        }
        let stats = unit.statistics
        return EngineResult(output: micPCM.map { Float($0) / 32768 }, linear: linear.map { Float($0) / 32768 },
                            seconds: elapsed.seconds, estimatedDelayMs: stats.estimatedDelayMs,
                            estimatedDriftPPM: stats.driftPPM, cancellerResets: stats.cancellerResets,
                            echoMoves: stats.echoMoves)
    }

    /// SpeexDSP used directly: the reference is the far end as played, frame by frame.
    static func runSpeex(far: [Float], mic: [Float], sampleRate: Int, options: ProcessingOptions) throws -> EngineResult {
        let frame = sampleRate * options.frameMs / 1000
        let canceller = try SpeexEchoCanceller(frameSize: frame, filterLength: sampleRate * options.tailMs / 1000,
                                               sampleRate: sampleRate)
        var preprocessor = try SpeexPreprocessor(frameSize: frame, sampleRate: sampleRate)
        if options.suppression { preprocessor.attach(canceller) }
        try preprocessor.setDenoise(true)
        let count = min(far.count, mic.count) / frame * frame
        var farPCM = far.prefix(count).map(WAVAudio.int16)
        if let d = options.delayMs {
            let shift = Int(d / 1000 * Double(sampleRate))
            farPCM = [Int16](repeating: 0, count: shift) + farPCM.prefix(count - shift)
        }
        let micPCM = mic.prefix(count).map(WAVAudio.int16)
        var linear = [Int16](repeating: 0, count: count)
        var output = [Int16](repeating: 0, count: count)
        let clock = ContinuousClock()
        let elapsed = clock.measure {
            farPCM.withUnsafeBufferPointer { f in
                micPCM.withUnsafeBufferPointer { m in
                    linear.withUnsafeMutableBufferPointer { l in
                        output.withUnsafeMutableBufferPointer { o in
                            for start in stride(from: 0, to: count, by: frame) {
                                let r = start..<(start + frame)
                                canceller.cancel(capture: UnsafeBufferPointer(rebasing: m[r]), reference: UnsafeBufferPointer(rebasing: f[r]),
                                                 output: UnsafeMutableBufferPointer(rebasing: l[r]))
                                _ = UnsafeMutableBufferPointer(rebasing: o[r]).update(fromContentsOf: UnsafeMutableBufferPointer(rebasing: l[r]))
                                preprocessor.process(UnsafeMutableBufferPointer(rebasing: o[r]))
                            }
                        }
                    }
                }
            }
        }
        return EngineResult(output: output.map { Float($0) / 32768 }, linear: linear.map { Float($0) / 32768 },
                            seconds: elapsed.seconds)
    }
}

extension Duration {
    var seconds: Double { Double(components.seconds) + Double(components.attoseconds) * 1e-18 }
}
