/// The hardware values a session asks for. Hints: the hardware decides (see ``HardwareValues``).
///
/// `nil` means no preference. Set through ``AudioSession/setPreferredSampleRate(_:)`` and its
/// siblings, ideally while the session is inactive.
///
/// Thread safety: a value type; safe to use from any thread.
public struct PreferredHardwareValues: Hashable, Sendable {
    /// Frames per second.
    public var sampleRate: Double?
    /// Seconds per I/O cycle.
    public var ioBufferDuration: Double?
    /// Input channels.
    public var inputNumberOfChannels: Int?
    /// Output channels.
    public var outputNumberOfChannels: Int?

    /// Creates preferred values.
    ///
    /// Thread safety: safe from any thread.
    public init(
        sampleRate: Double? = nil, ioBufferDuration: Double? = nil,
        inputNumberOfChannels: Int? = nil, outputNumberOfChannels: Int? = nil
    ) {
        self.sampleRate = sampleRate
        self.ioBufferDuration = ioBufferDuration
        self.inputNumberOfChannels = inputNumberOfChannels
        self.outputNumberOfChannels = outputNumberOfChannels
    }

    /// No preference at all.
    ///
    /// Thread safety: safe from any thread.
    public static let none = PreferredHardwareValues()
}

/// The values the hardware actually runs with for a route. They may differ from the preferred
/// values (a rate the device cannot do, a Bluetooth HFP link at 16 kHz): read them after
/// activation and after every route change.
///
/// Thread safety: a value type; safe to use from any thread.
public struct HardwareValues: Hashable, Sendable {
    /// Frames per second.
    public var sampleRate: Double
    /// Seconds per I/O cycle.
    public var ioBufferDuration: Double
    /// Input channels in use (0 without input).
    public var inputNumberOfChannels: Int
    /// Output channels in use (0 without output).
    public var outputNumberOfChannels: Int
    /// The most input channels the route offers.
    public var maximumInputNumberOfChannels: Int
    /// The most output channels the route offers.
    public var maximumOutputNumberOfChannels: Int
    /// Seconds from the microphone to the app.
    public var inputLatency: Double
    /// Seconds from the app to the speaker.
    public var outputLatency: Double

    /// Creates hardware values.
    ///
    /// Thread safety: safe from any thread.
    public init(
        sampleRate: Double, ioBufferDuration: Double,
        inputNumberOfChannels: Int, outputNumberOfChannels: Int,
        maximumInputNumberOfChannels: Int, maximumOutputNumberOfChannels: Int,
        inputLatency: Double, outputLatency: Double
    ) {
        self.sampleRate = sampleRate
        self.ioBufferDuration = ioBufferDuration
        self.inputNumberOfChannels = inputNumberOfChannels
        self.outputNumberOfChannels = outputNumberOfChannels
        self.maximumInputNumberOfChannels = maximumInputNumberOfChannels
        self.maximumOutputNumberOfChannels = maximumOutputNumberOfChannels
        self.inputLatency = inputLatency
        self.outputLatency = outputLatency
    }
}
