import SpeexDSP

// What a configuration builds for a VoiceProcessingUnit: checked first, then made.
extension VoiceProcessingConfiguration {
    /// Throws when a value is out of range; the unit is then not made.
    func validate() throws(VoiceProcessingError) {
        guard [16000, 48000].contains(processingSampleRate) else {
            throw VoiceProcessingError("processing rate \(processingSampleRate) Hz must be 16000 or 48000")
        }
        guard (8000...192_000).contains(deviceSampleRate) else { throw VoiceProcessingError("device rate \(deviceSampleRate) Hz") }
        guard blockMilliseconds == 10 || blockMilliseconds == 20 else { throw VoiceProcessingError("block must be 10 or 20 ms") }
        guard (1...65536).contains(maximumFramesPerPeriod) else { throw VoiceProcessingError("period of \(maximumFramesPerPeriod) frames") }
        guard (0.05...2).contains(maximumEchoDelaySeconds) else { throw VoiceProcessingError("maximum echo delay must be in 0.05...2 s") }
        try tuning.validate()
    }

    /// The echo canceller: `custom` when it takes this configuration's blocks, else the configured one.
    func makeCanceller(block: Int, custom: (any EchoCanceller)?) throws(VoiceProcessingError) -> any EchoCanceller {
        let rate = processingSampleRate
        if let custom {
            guard custom.blockSize == block, custom.sampleRate == rate else {
                throw VoiceProcessingError("canceller must take \(block)-sample blocks at \(rate) Hz")
            }
            return custom
        }
        switch echoCanceller {
        case .speex(let tail):
            guard (0.02...1).contains(tail) else { throw VoiceProcessingError("tail \(tail) s must be in 0.02...1") }
            do {
                return try SpeexMDFEchoCanceller(blockSize: block, tailLength: Int(tail * Double(rate)), sampleRate: rate)
            } catch { throw VoiceProcessingError("echo canceller: \(error)") }
        case .passthrough:
            return PassthroughEchoCanceller(blockSize: block, sampleRate: rate)
        }
    }

    /// The capture's way down to the processing rate, the render's, and the capture's way back
    /// up; nil when the device runs at the processing rate.
    func makeResamplers() throws(SpeexError) -> (captureDown: Resampler, renderDown: Resampler, captureUp: Resampler)? {
        let device = deviceSampleRate, processing = processingSampleRate
        guard device != processing else { return nil }
        return (try Resampler(from: device, to: processing), try Resampler(from: device, to: processing),
                try Resampler(from: processing, to: device))
    }
}
