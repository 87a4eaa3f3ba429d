/// How Opus is set up for a call: the codec side of RFC 7587.
///
/// The RTP clock is always 48 kHz (RFC 7587 section 4.1), whatever rate the
/// encoder and decoder run at internally: a 20 ms frame advances the RTP timestamp
/// by 960 at 16 kHz as at 48 kHz.
///
/// Defaults: 16 kHz mono, 20 ms frames, `voip` application, 24 kb/s VBR, in-band FEC
/// on (its strength follows the expected loss, which the RTP layer feeds from RTCP
/// receiver reports; 1 % until the first report, so FEC is there from the start),
/// DTX off, complexity 9.
///
/// Thread safety: a value type; safe to use from any thread.
public struct OpusCallConfiguration: Sendable, Equatable {
    /// The RTP clock rate for Opus (RFC 7587): 48 kHz, independent of ``sampleRate``.
    public static let rtpClockRate = 48000
    /// The frame durations a call may use, in milliseconds.
    public static let frameDurationsMs = [10, 20, 40, 60]

    /// The encoder's and decoder's internal rate in Hz (8, 12, 16, 24 or 48 kHz).
    public var sampleRate: Int
    /// Channels coded (1 or 2). The SDP still says `opus/48000/2` (RFC 7587 section 7).
    public var channels: Int
    /// Frame (and packet) duration: 10, 20, 40 or 60 ms.
    public var frameMilliseconds: Int
    /// Target bitrate in bits per second.
    public var bitrate: Int
    /// Variable bitrate (unconstrained).
    public var variableBitrate: Bool
    /// In-band forward error correction (SILK LBRR).
    public var inbandFEC: Bool
    /// The loss the encoder plans for until the first receiver report says otherwise, in percent.
    public var initialExpectedLossPercent: Int
    /// Discontinuous transmission: nothing is sent during silence.
    public var dtx: Bool
    /// Encoder complexity, 0 (fastest) ... 10 (best).
    public var complexity: Int
    /// The encoder's application mode.
    public var application: OpusApplication

    public init(sampleRate: Int = 16000, channels: Int = 1, frameMilliseconds: Int = 20, bitrate: Int = 24000,
                variableBitrate: Bool = true, inbandFEC: Bool = true, initialExpectedLossPercent: Int = 1,
                dtx: Bool = false, complexity: Int = 9, application: OpusApplication = .voip) {
        self.sampleRate = sampleRate
        self.channels = channels
        self.frameMilliseconds = frameMilliseconds
        self.bitrate = bitrate
        self.variableBitrate = variableBitrate
        self.inbandFEC = inbandFEC
        self.initialExpectedLossPercent = initialExpectedLossPercent
        self.dtx = dtx
        self.complexity = complexity
        self.application = application
    }

    /// Samples per channel in one frame at ``sampleRate``.
    public var framesPerPacket: Int { sampleRate * frameMilliseconds / 1000 }

    /// RTP timestamp units (48 kHz) one frame advances the clock by.
    public var timestampIncrement: Int { Self.rtpClockRate * frameMilliseconds / 1000 }

    /// Checks every field.
    ///
    /// - Throws: ``OpusError/badArgument`` naming the first field out of range.
    public func validate() throws(OpusError) {
        try OpusFormat.checkRate(sampleRate)
        try OpusFormat.checkChannels(channels)
        func check(_ ok: Bool, _ what: String) throws(OpusError) {
            if !ok { throw OpusError(code: OpusError.badArgument.code, detail: what) }
        }
        try check(Self.frameDurationsMs.contains(frameMilliseconds),
                  "frame duration \(frameMilliseconds) ms (10, 20, 40 or 60 for calls)")
        try check((6000...510_000).contains(bitrate), "bitrate \(bitrate) b/s (6000 ... 510000)")
        try check((0...100).contains(initialExpectedLossPercent), "expected loss \(initialExpectedLossPercent) %")
        try check((0...10).contains(complexity), "complexity \(complexity) (0 ... 10)")
    }

    /// Creates an encoder with every setting applied.
    ///
    /// Thread safety: call off the real-time thread (allocates), then move the encoder there.
    public func makeEncoder() throws(OpusError) -> OpusEncoder {
        try validate()
        let encoder = try OpusEncoder(sampleRate: sampleRate, channels: channels, application: application)
        try encoder.setBitrate(bitrate)
        try encoder.setVBR(variableBitrate)
        try encoder.setVBRConstrained(false)
        try encoder.setComplexity(complexity)
        try encoder.setInbandFEC(inbandFEC)
        try encoder.setExpectedPacketLoss(percent: initialExpectedLossPercent)
        try encoder.setDTX(dtx)
        try encoder.setSignal(.voice)
        return encoder
    }

    /// Creates a decoder at ``sampleRate``.
    ///
    /// Thread safety: call off the real-time thread (allocates), then move the decoder there.
    public func makeDecoder() throws(OpusError) -> OpusDecoder {
        try validate()
        return try OpusDecoder(sampleRate: sampleRate, channels: channels)
    }
}
