package import SpeexDSP

extension VoiceProcessingConfiguration {
    /// The SpeexDSP preprocessor that runs after the canceller, set up as this configuration
    /// says: noise suppression down to the tuning's deepest, -20 dB (the unit then sets the depth
    /// from the capture's noise floor, `NoiseDepth`), AGC up to 20 dB of gain
    /// (``VoiceProcessingTuning/PostFilter/agcMaximumGainDB``). SpeexDSP's VAD flag stays
    /// off (it only changes `process`'s return value, and prints a warning when set); the unit
    /// decides speech from the preprocessor's speech probability (``SpeechDetector``), which the
    /// AGC uses either way. Residual echo suppression needs the canceller: attach it when
    /// ``suppressesResidualEcho`` is on and the canceller is SpeexDSP's.
    ///
    /// One place for these settings, so that what measures the unit's cost against bare
    /// SpeexDSP calls (`voicecall cost`) runs exactly what the unit runs.
    ///
    /// Thread safety: safe from any thread; the preprocessor returned has one owner.
    package func makePreprocessor(blockSize: Int, sampleRate: Int) throws(SpeexError) -> SpeexPreprocessor {
        let preprocessor = try SpeexPreprocessor(frameSize: blockSize, sampleRate: sampleRate)
        try preprocessor.setDenoise(suppressesNoise)
        try preprocessor.setNoiseSuppress(dB: -tuning.noiseDepth.maximumDB)
        try preprocessor.setAGC(agcEnabled)
        try preprocessor.setAGCMaxGain(dB: tuning.postFilter.agcMaximumGainDB)
        return preprocessor
    }
}
