import COpus

/// An Opus encoder: PCM frames in, packets out.
///
/// Owns its libopus state exactly once and frees it when it goes away.
/// `encode` does not allocate when given caller-owned buffers, so it may run on
/// a real-time audio thread.
///
/// Thread safety: not thread-safe; use an encoder from one thread at a time
/// (it may be moved between threads).
public struct OpusEncoder: ~Copyable {
    private let handle: OpaquePointer
    /// Input rate in Hz.
    public let sampleRate: Int
    /// Interleaved input channels (1 or 2).
    public let channels: Int
    /// The application the encoder was created for.
    public let application: OpusApplication

    /// Creates an encoder.
    ///
    /// - Throws: ``OpusError/badArgument`` for a rate other than 8/12/16/24/48 kHz or
    ///   a channel count other than 1 or 2.
    ///
    /// The corresponding C function is `opus_encoder_create`.
    public init(sampleRate: Int, channels: Int = 1, application: OpusApplication = .voip) throws(OpusError) {
        try OpusFormat.checkRate(sampleRate)
        try OpusFormat.checkChannels(channels)
        var error: Int32 = OPUS_OK
        guard let handle = opus_encoder_create(Int32(sampleRate), Int32(channels), application.cValue, &error),
              error == OPUS_OK
        else { throw OpusError(code: error == OPUS_OK ? OPUS_ALLOC_FAIL : error, detail: "opus_encoder_create") }
        self.handle = handle
        self.sampleRate = sampleRate
        self.channels = channels
        self.application = application
    }

    deinit { opus_encoder_destroy(handle) }

    // MARK: Encoding

    /// Encodes one frame of interleaved 16-bit PCM into `packet`.
    ///
    /// - Parameters:
    ///   - pcm: `frames * channels` samples, where `frames` is 2.5, 5, 10, 20, 40 or 60 ms.
    ///   - packet: where the packet is written; 1275 bytes always suffice for one frame.
    /// - Returns: the packet length in bytes (1 or 2 bytes means DTX: nothing to send).
    ///
    /// The corresponding C function is `opus_encode`.
    public func encode(_ pcm: UnsafeBufferPointer<Int16>, into packet: UnsafeMutableRawBufferPointer) throws(OpusError) -> Int {
        let frames = try checkedFrames(pcm.count)
        let out = try Self.packetPointer(packet)
        let n = opus_encode(handle, pcm.baseAddress!, Int32(frames), out, Int32(clamping: packet.count))
        try OpusError.check(n, "opus_encode of \(frames) frames into \(packet.count) bytes")
        return Int(n)
    }

    /// Encodes one frame of interleaved float PCM (nominally in [-1, 1]) into `packet`.
    ///
    /// The corresponding C function is `opus_encode_float`.
    public func encode(_ pcm: UnsafeBufferPointer<Float>, into packet: UnsafeMutableRawBufferPointer) throws(OpusError) -> Int {
        let frames = try checkedFrames(pcm.count)
        let out = try Self.packetPointer(packet)
        let n = opus_encode_float(handle, pcm.baseAddress!, Int32(frames), out, Int32(clamping: packet.count))
        try OpusError.check(n, "opus_encode_float of \(frames) frames into \(packet.count) bytes")
        return Int(n)
    }

    /// Encodes one frame and returns the packet (allocates; for tools and tests).
    public func encode(_ pcm: [Int16]) throws(OpusError) -> [UInt8] {
        var packet = [UInt8](repeating: 0, count: Self.maxPacketBytes)
        var result = Result<Int, OpusError>.success(0)
        pcm.withUnsafeBufferPointer { input in
            packet.withUnsafeMutableBytes { output in
                result = Result { () throws(OpusError) in try encode(input, into: output) }
            }
        }
        packet.removeSubrange(try result.get()...)
        return packet
    }

    /// The largest packet one frame can produce (RFC 6716: 1275 bytes per frame, up to 3 frames in 60 ms).
    public static let maxPacketBytes = 4000

    private static func packetPointer(_ packet: UnsafeMutableRawBufferPointer) throws(OpusError) -> UnsafeMutablePointer<UInt8> {
        guard let base = packet.baseAddress, packet.count > 0 else {
            throw OpusError(code: OPUS_BUFFER_TOO_SMALL, detail: "no room for a packet")
        }
        return base.assumingMemoryBound(to: UInt8.self)
    }

    private func checkedFrames(_ samples: Int) throws(OpusError) -> Int {
        let frames = samples / channels
        guard samples % channels == 0, OpusFormat.isValidEncoderFrameCount(frames, sampleRate: sampleRate) else {
            throw OpusError(code: OPUS_BAD_ARG,
                            detail: "\(samples) samples is not a 2.5/5/10/20/40/60 ms frame at \(sampleRate) Hz x \(channels)")
        }
        return frames
    }

    // MARK: Settings

    /// Target bitrate in bits per second (500 ... 512000).
    ///
    /// The corresponding request is `OPUS_GET_BITRATE`; set it with ``setBitrate(_:)``.
    public var bitrate: Int { read(callaudio_opus_get_bitrate) }

    /// Sets the target bitrate in bits per second (`OPUS_SET_BITRATE`).
    public func setBitrate(_ bitsPerSecond: Int) throws(OpusError) {
        try set(callaudio_opus_set_bitrate, bitsPerSecond, "bitrate")
    }

    /// Computational complexity, 0 (fastest) ... 10 (best).
    public var complexity: Int { read(callaudio_opus_get_complexity) }

    /// Sets the complexity, 0 ... 10 (`OPUS_SET_COMPLEXITY`).
    public func setComplexity(_ value: Int) throws(OpusError) {
        try set(callaudio_opus_set_complexity, value, "complexity")
    }

    /// Whether variable bitrate is on.
    public var isVBR: Bool { read(callaudio_opus_get_vbr) != 0 }

    /// Turns variable bitrate on or off (`OPUS_SET_VBR`).
    public func setVBR(_ on: Bool) throws(OpusError) { try set(callaudio_opus_set_vbr, on ? 1 : 0, "VBR") }

    /// Whether VBR is constrained (bitrate bounded per frame, better for fixed-rate links).
    public var isVBRConstrained: Bool { read(callaudio_opus_get_vbr_constraint) != 0 }

    /// Constrains or frees VBR (`OPUS_SET_VBR_CONSTRAINT`).
    public func setVBRConstrained(_ on: Bool) throws(OpusError) {
        try set(callaudio_opus_set_vbr_constraint, on ? 1 : 0, "VBR constraint")
    }

    /// Whether in-band forward error correction (LBRR) is on.
    public var isInbandFECEnabled: Bool { read(callaudio_opus_get_inband_fec) != 0 }

    /// Turns in-band FEC on or off (`OPUS_SET_INBAND_FEC`). It only takes effect in
    /// SILK modes and with a non-zero ``expectedPacketLossPercent``.
    public func setInbandFEC(_ on: Bool) throws(OpusError) {
        try set(callaudio_opus_set_inband_fec, on ? 1 : 0, "in-band FEC")
    }

    /// The packet loss the encoder plans for, 0 ... 100 %.
    public var expectedPacketLossPercent: Int { read(callaudio_opus_get_packet_loss_perc) }

    /// Sets the expected packet loss, 0 ... 100 % (`OPUS_SET_PACKET_LOSS_PERC`).
    public func setExpectedPacketLoss(percent: Int) throws(OpusError) {
        try set(callaudio_opus_set_packet_loss_perc, percent, "expected packet loss")
    }

    /// Whether discontinuous transmission is on.
    public var isDTXEnabled: Bool { read(callaudio_opus_get_dtx) != 0 }

    /// Turns discontinuous transmission on or off (`OPUS_SET_DTX`).
    public func setDTX(_ on: Bool) throws(OpusError) { try set(callaudio_opus_set_dtx, on ? 1 : 0, "DTX") }

    /// Whether the last frame encoded was a DTX frame (silence, nothing worth sending).
    public var isInDTX: Bool { read(callaudio_opus_get_in_dtx) != 0 }

    /// The signal type hint.
    public var signal: OpusSignal { OpusSignal(cValue: Int32(read(callaudio_opus_get_signal))) }

    /// Sets the signal type hint (`OPUS_SET_SIGNAL`).
    public func setSignal(_ signal: OpusSignal) throws(OpusError) {
        try set(callaudio_opus_set_signal, Int(signal.cValue), "signal")
    }

    /// The widest bandwidth the encoder may use.
    public var maxBandwidth: OpusBandwidth { OpusBandwidth(cValue: Int32(read(callaudio_opus_get_max_bandwidth))) ?? .fullband }

    /// Limits the bandwidth (`OPUS_SET_MAX_BANDWIDTH`).
    public func setMaxBandwidth(_ bandwidth: OpusBandwidth) throws(OpusError) {
        try set(callaudio_opus_set_max_bandwidth, Int(bandwidth.cValue), "max bandwidth")
    }

    /// Samples per channel (at ``sampleRate``) the encoder delays its input by.
    ///
    /// A decoder's output lines up with the encoder's input after this many samples.
    public var lookahead: Int { read(callaudio_opus_get_lookahead) }

    /// Resets the codec state as if newly created, keeping the settings (`OPUS_RESET_STATE`).
    public func reset() throws(OpusError) { try OpusError.check(callaudio_opus_encoder_reset(handle), "reset") }

    // MARK: Plumbing

    private func read(_ request: (OpaquePointer?, UnsafeMutablePointer<Int32>?) -> Int32) -> Int {
        var value: Int32 = 0
        // A getter on a live encoder cannot fail: every request here is implemented by libopus.
        _ = request(handle, &value)
        return Int(value)
    }

    private func set(_ request: (OpaquePointer?, Int32) -> Int32, _ value: Int, _ what: String) throws(OpusError) {
        guard let v = Int32(exactly: value) else {
            throw OpusError(code: OPUS_BAD_ARG, detail: "\(what) \(value) is out of range")
        }
        let result = request(handle, v)
        if result != OPUS_OK { throw OpusError(code: result, detail: "\(what) \(value) rejected") }
    }
}
