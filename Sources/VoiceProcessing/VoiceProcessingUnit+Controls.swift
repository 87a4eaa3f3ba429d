import Synchronization

// The controls and statistics other threads use: atomics in `SharedState`, never the I/O
// thread's own state (thread safety as documented on ``VoiceProcessingUnit``).
extension VoiceProcessingUnit {
    /// Leaves the capture untouched (bit-exact) while processing continues in the background.
    public var isBypassed: Bool {
        get { shared.bypass.load(ordering: .relaxed) }
        set { shared.bypass.store(newValue, ordering: .relaxed) }
    }

    /// Sends zeros uplink; voice activity is still detected, and speech is reported as events.
    public var isInputMuted: Bool {
        get { shared.muted.load(ordering: .relaxed) }
        set { shared.muted.store(newValue, ordering: .relaxed) }
    }

    /// Automatic gain control (on by default); takes effect at the next period.
    public var isAGCEnabled: Bool {
        get { shared.agc.load(ordering: .relaxed) }
        set { shared.agc.store(newValue, ordering: .relaxed) }
    }

    /// The session mode; in modes other than voice and video chat the unit is transparent.
    public var mode: VoiceProcessingMode {
        get { VoiceProcessingMode(rawValue: shared.mode.load(ordering: .relaxed)) ?? .other }
        set { shared.mode.store(newValue.rawValue, ordering: .relaxed) }
    }

    /// Ducking of other audio; read the resulting gain from ``statistics``.
    public var ducking: OtherAudioDucking {
        get {
            OtherAudioDucking(isAdvanced: shared.duckingAdvanced.load(ordering: .relaxed),
                              level: DuckingLevel(rawValue: shared.duckingLevel.load(ordering: .relaxed)) ?? .default)
        }
        set {
            shared.duckingAdvanced.store(newValue.isAdvanced, ordering: .relaxed)
            shared.duckingLevel.store(newValue.level.rawValue, ordering: .relaxed)
        }
    }

    /// What the unit measures now.
    public var statistics: VoiceProcessingStatistics {
        let fp = Double(configuration.processingSampleRate)
        return VoiceProcessingStatistics(
            estimatedDelayMs: SharedState.load(shared.estimatedDelay).map { $0 / fp * 1000 },
            deviceDelayMs: SharedState.load(shared.deviceDelay).map { $0 / fp * 1000 },
            referenceDelayMs: (SharedState.load(shared.referenceDelay) ?? 0) / fp * 1000,
            driftPPM: SharedState.load(shared.drift),
            erleDB: SharedState.load(shared.erle),
            isVoiceActive: shared.voiceActive.load(ordering: .relaxed),
            speechWhileMutedEvents: shared.mutedSpeechEvents.load(ordering: .relaxed),
            isSpeakingWhileMuted: shared.speakingWhileMuted.load(ordering: .relaxed),
            isBypassed: isBypassed, isInputMuted: isInputMuted, isAGCEnabled: isAGCEnabled, mode: mode,
            otherAudioGain: Float(bitPattern: shared.otherAudioGain.load(ordering: .relaxed)),
            cancellerResets: shared.resets.load(ordering: .relaxed),
            echoMoves: shared.echoMoves.load(ordering: .relaxed),
            echoPath: EchoPathState(rawValue: shared.echoPath.load(ordering: .relaxed)) ?? .unknown,
            blocksProcessed: shared.blocks.load(ordering: .relaxed),
            addedLatencyMs: (SharedState.load(shared.addedLatency) ?? 0) * 1000)
    }
}
