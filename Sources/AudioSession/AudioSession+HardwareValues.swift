extension AudioSession {
    // MARK: - Preferred values (hints)

    /// The preferred sample rate, or 0 without a preference (as Apple's).
    ///
    /// Thread safety: safe from any thread.
    public var preferredSampleRate: Double { read { $1.preferred.sampleRate ?? 0 } }

    /// The preferred I/O buffer duration in seconds, or 0 without a preference.
    ///
    /// Thread safety: safe from any thread.
    public var preferredIOBufferDuration: Double { read { $1.preferred.ioBufferDuration ?? 0 } }

    /// The preferred number of input channels, or 0 without a preference.
    ///
    /// Thread safety: safe from any thread.
    public var preferredInputNumberOfChannels: Int { read { $1.preferred.inputNumberOfChannels ?? 0 } }

    /// The preferred number of output channels, or 0 without a preference.
    ///
    /// Thread safety: safe from any thread.
    public var preferredOutputNumberOfChannels: Int { read { $1.preferred.outputNumberOfChannels ?? 0 } }

    /// All preferred values (`nil`: no preference).
    ///
    /// Thread safety: safe from any thread.
    public var preferredHardwareValues: PreferredHardwareValues { read { $1.preferred } }

    /// Prefers a sample rate. A hint: read ``sampleRate`` after activation for the actual rate.
    ///
    /// Set it while inactive ideally; if the session owns the route while active, the hardware
    /// renegotiates at once.
    ///
    /// - Parameter sampleRate: Frames per second (finite, greater than 0), or 0 to clear the preference.
    /// - Throws: ``AudioSessionError/invalidPreferredValue(name:value:)`` for a negative, infinite or NaN rate.
    ///
    /// Thread safety: safe from any thread.
    public func setPreferredSampleRate(_ sampleRate: Double) throws(AudioSessionError) {
        let value = try Self.validatedPositive(sampleRate, name: "sample rate")
        updatePreferred { $0.sampleRate = value }
    }

    /// Prefers an I/O buffer duration. A hint: read ``ioBufferDuration`` after activation.
    ///
    /// - Parameter duration: Seconds (finite, greater than 0), or 0 to clear the preference.
    /// - Throws: ``AudioSessionError/invalidPreferredValue(name:value:)`` for a negative, infinite or NaN duration.
    ///
    /// Thread safety: safe from any thread.
    public func setPreferredIOBufferDuration(_ duration: Double) throws(AudioSessionError) {
        let value = try Self.validatedPositive(duration, name: "I/O buffer duration")
        updatePreferred { $0.ioBufferDuration = value }
    }

    /// Prefers a number of input channels. A hint: the hardware clamps it to what the route offers.
    ///
    /// - Parameter count: 1 or more, or 0 to clear the preference.
    /// - Throws: ``AudioSessionError/invalidPreferredValue(name:value:)`` for a negative count.
    ///
    /// Thread safety: safe from any thread.
    public func setPreferredInputNumberOfChannels(_ count: Int) throws(AudioSessionError) {
        guard count >= 0 else { throw .invalidPreferredValue(name: "input number of channels", value: Double(count)) }
        updatePreferred { $0.inputNumberOfChannels = count == 0 ? nil : count }
    }

    /// Prefers a number of output channels. A hint: the hardware clamps it to what the route offers.
    ///
    /// - Parameter count: 1 or more, or 0 to clear the preference.
    /// - Throws: ``AudioSessionError/invalidPreferredValue(name:value:)`` for a negative count.
    ///
    /// Thread safety: safe from any thread.
    public func setPreferredOutputNumberOfChannels(_ count: Int) throws(AudioSessionError) {
        guard count >= 0 else { throw .invalidPreferredValue(name: "output number of channels", value: Double(count)) }
        updatePreferred { $0.outputNumberOfChannels = count == 0 ? nil : count }
    }

    static func validatedPositive(_ value: Double, name: String) throws(AudioSessionError) -> Double? {
        guard value.isFinite, value >= 0 else { throw .invalidPreferredValue(name: name, value: value) }
        return value == 0 ? nil : value
    }

    private func updatePreferred(_ change: (inout PreferredHardwareValues) -> Void) {
        let id = self.id
        system.transact { state, _ in
            if var preferred = state.sessions[id]?.preferred {
                change(&preferred)
                state.sessions[id]?.preferred = preferred
            }
        }
    }

    // MARK: - Actual values

    /// The hardware's actual values (negotiated for the route owner; after this session's
    /// activation, for this session unless a higher-priority or non-mixable session owns the route).
    ///
    /// Thread safety: safe from any thread.
    public var hardwareValues: HardwareValues { system.hardwareValues }

    /// The actual sample rate. May differ from ``preferredSampleRate``; may change with the route.
    ///
    /// Thread safety: safe from any thread.
    public var sampleRate: Double { hardwareValues.sampleRate }

    /// The actual I/O buffer duration in seconds.
    ///
    /// Thread safety: safe from any thread.
    public var ioBufferDuration: Double { hardwareValues.ioBufferDuration }

    /// The actual number of input channels.
    ///
    /// Thread safety: safe from any thread.
    public var inputNumberOfChannels: Int { hardwareValues.inputNumberOfChannels }

    /// The actual number of output channels.
    ///
    /// Thread safety: safe from any thread.
    public var outputNumberOfChannels: Int { hardwareValues.outputNumberOfChannels }

    /// The most input channels the route offers.
    ///
    /// Thread safety: safe from any thread.
    public var maximumInputNumberOfChannels: Int { hardwareValues.maximumInputNumberOfChannels }

    /// The most output channels the route offers.
    ///
    /// Thread safety: safe from any thread.
    public var maximumOutputNumberOfChannels: Int { hardwareValues.maximumOutputNumberOfChannels }

    /// The input latency in seconds.
    ///
    /// Thread safety: safe from any thread.
    public var inputLatency: Double { hardwareValues.inputLatency }

    /// The output latency in seconds.
    ///
    /// Thread safety: safe from any thread.
    public var outputLatency: Double { hardwareValues.outputLatency }
}
