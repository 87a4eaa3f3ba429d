extension AudioSession {
    /// The system's output volume, from 0 to 1, as the hardware reports it (the route's
    /// playback mixer control on ALSA). Changes are notified to every session with
    /// ``AudioSessionNotification/outputVolumeChanged(_:)``. Read-only, as on iOS: the user sets it.
    ///
    /// Thread safety: safe from any thread.
    public var outputVolume: Float { system.read { $0.outputVolume } }

    /// The input gain, from 0 to 1 (the route's capture mixer control on ALSA).
    ///
    /// Thread safety: safe from any thread.
    public var inputGain: Float { system.read { $0.inputGain } }

    /// Whether ``setInputGain(_:)`` can change the gain on this hardware.
    ///
    /// Thread safety: safe from any thread.
    public var isInputGainSettable: Bool { system.read { $0.isInputGainSettable } }

    /// Sets the input gain for the whole system, as on iOS. The hardware is told after the
    /// system's lock is released, in order with route changes.
    ///
    /// - Parameter gain: From 0 to 1.
    /// - Throws: ``AudioSessionError/invalidPreferredValue(name:value:)`` outside 0...1 or NaN;
    ///   ``AudioSessionError/inputGainNotSettable`` when ``isInputGainSettable`` is `false`.
    ///   The gain is then unchanged.
    ///
    /// Thread safety: safe from any thread.
    public func setInputGain(_ gain: Float) throws(AudioSessionError) {
        guard (0...1).contains(gain) else { throw .invalidPreferredValue(name: "input gain", value: Double(gain)) }
        try system.transact { (state, _) throws(AudioSessionError) in
            guard state.isInputGainSettable else { throw .inputGainNotSettable }
            guard state.inputGain != gain else { return }
            state.inputGain = gain
            state.pending.append(.setInputGain(state.hardware, gain))
        }
    }
}
