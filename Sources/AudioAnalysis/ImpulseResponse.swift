import Platform
import DSP

/// Synthetic room impulse responses.
///
/// Thread safety: stateless; safe from any thread.
public enum ImpulseResponse {
    /// Exponentially decaying Gaussian noise: a simple statistical model of a
    /// room's late reverberation, preceded by a bulk delay.
    ///
    /// - Parameters:
    ///   - sampleRate: in Hz.
    ///   - rt60: seconds for the energy to fall by 60 dB.
    ///   - delay: seconds of silence before the direct sound (loudspeaker-to-mic path, converters).
    ///   - length: seconds of response after the delay (defaults to `rt60`).
    ///   - gain: peak-normalised gain of the first tap.
    ///   - seed: noise seed, so responses are reproducible.
    public static func decayingNoise(sampleRate: Int, rt60: Double, delay: Double, length: Double? = nil,
                                     gain: Float = 1, seed: UInt64) -> [Float] {
        var rng = SeededRandom(seed: seed)
        let delaySamples = Int((delay * Double(sampleRate)).rounded())
        let tail = max(1, Int((length ?? rt60) * Double(sampleRate)))
        // Amplitude falls 60 dB (factor 1000) over rt60: a(t) = exp(-t * ln(1000) / rt60).
        let decayPerSample = Math.log(1000) / (max(rt60, 1e-4) * Double(sampleRate))
        var ir = [Float](repeating: 0, count: delaySamples + tail)
        ir[delaySamples] = gain  // the direct path
        for n in 1..<tail {
            ir[delaySamples + n] = gain * Float(0.5 * rng.gaussian() * Math.exp(-Double(n) * decayPerSample))
        }
        return ir
    }
}
