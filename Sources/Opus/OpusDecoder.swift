import COpus

/// An Opus decoder: packets in, PCM frames out, with loss concealment and
/// recovery from in-band FEC.
///
/// Owns its libopus state exactly once. The buffer-based calls do not allocate,
/// so they may run on a real-time audio thread.
///
/// Thread safety: not thread-safe; use a decoder from one thread at a time
/// (it may be moved between threads).
public struct OpusDecoder: ~Copyable {
    private let handle: OpaquePointer
    /// Output rate in Hz.
    public let sampleRate: Int
    /// Interleaved output channels (1 or 2).
    public let channels: Int

    /// Creates a decoder.
    ///
    /// - Throws: ``OpusError/badArgument`` for a rate other than 8/12/16/24/48 kHz or
    ///   a channel count other than 1 or 2.
    ///
    /// The corresponding C function is `opus_decoder_create`.
    public init(sampleRate: Int, channels: Int = 1) throws(OpusError) {
        try OpusFormat.checkRate(sampleRate)
        try OpusFormat.checkChannels(channels)
        var error: Int32 = OPUS_OK
        guard let handle = opus_decoder_create(Int32(sampleRate), Int32(channels), &error), error == OPUS_OK else {
            throw OpusError(code: error == OPUS_OK ? OPUS_ALLOC_FAIL : error, detail: "opus_decoder_create")
        }
        self.handle = handle
        self.sampleRate = sampleRate
        self.channels = channels
    }

    deinit { opus_decoder_destroy(handle) }

    /// Frames per channel in the longest packet Opus allows (120 ms): the output space that always suffices.
    public var maxFrameCount: Int { sampleRate * OpusFormat.maxDecodeMilliseconds / 1000 }

    /// Decodes one packet into `pcm` (interleaved).
    ///
    /// - Returns: frames per channel written.
    /// - Throws: ``OpusError/invalidPacket`` for corrupt data, ``OpusError/bufferTooSmall``
    ///   when `pcm` cannot hold the packet's duration.
    ///
    /// The corresponding C function is `opus_decode`.
    public func decode(_ packet: UnsafeRawBufferPointer, into pcm: UnsafeMutableBufferPointer<Int16>) throws(OpusError) -> Int {
        guard packet.count > 0 else {
            throw OpusError(code: OPUS_BAD_ARG, detail: "empty packet (use concealLoss for a missing one)")
        }
        return try run(packet, pcm, frames: pcm.count / channels, fec: false, "opus_decode")
    }

    /// Conceals one lost packet of `frames` frames per channel (packet loss concealment).
    ///
    /// `frames` must be a multiple of 2.5 ms at ``sampleRate``: normally the duration of the missing packet.
    /// The corresponding C call is `opus_decode` with a null packet.
    public func concealLoss(frames: Int, into pcm: UnsafeMutableBufferPointer<Int16>) throws(OpusError) -> Int {
        try checkConcealFrames(frames, capacity: pcm.count)
        return try run(UnsafeRawBufferPointer(start: nil, count: 0), pcm, frames: frames, fec: false, "opus_decode (PLC)")
    }

    /// Recovers a lost packet of `frames` frames from the in-band FEC data of the
    /// packet that followed it.
    ///
    /// When `nextPacket` carries no FEC, libopus falls back to concealment, so the
    /// output is always `frames` long. Decode `nextPacket` itself normally afterwards.
    /// The corresponding C call is `opus_decode` with `decode_fec = 1`.
    public func decodeFEC(from nextPacket: UnsafeRawBufferPointer, frames: Int,
                          into pcm: UnsafeMutableBufferPointer<Int16>) throws(OpusError) -> Int {
        try checkConcealFrames(frames, capacity: pcm.count)
        guard nextPacket.count > 0 else { throw OpusError(code: OPUS_BAD_ARG, detail: "empty packet for FEC") }
        return try run(nextPacket, pcm, frames: frames, fec: true, "opus_decode (FEC)")
    }

    /// Decodes a packet and returns its PCM (allocates; for tools and tests).
    public func decode(_ packet: [UInt8]) throws(OpusError) -> [Int16] {
        var pcm = [Int16](repeating: 0, count: maxFrameCount * channels)
        var result = Result<Int, OpusError>.success(0)
        packet.withUnsafeBytes { input in
            pcm.withUnsafeMutableBufferPointer { output in
                result = Result { () throws(OpusError) in try decode(input, into: output) }
            }
        }
        pcm.removeSubrange((try result.get() * channels)...)
        return pcm
    }

    /// Conceals a lost packet and returns its PCM (allocates; for tools and tests).
    public func concealLoss(frames: Int) throws(OpusError) -> [Int16] {
        var pcm = [Int16](repeating: 0, count: max(frames, 0) * channels)
        var result = Result<Int, OpusError>.success(0)
        pcm.withUnsafeMutableBufferPointer { output in
            result = Result { () throws(OpusError) in try concealLoss(frames: frames, into: output) }
        }
        pcm.removeSubrange((try result.get() * channels)...)
        return pcm
    }

    /// Recovers a lost packet from the next one's FEC and returns its PCM (allocates; for tools and tests).
    public func decodeFEC(from nextPacket: [UInt8], frames: Int) throws(OpusError) -> [Int16] {
        var pcm = [Int16](repeating: 0, count: max(frames, 0) * channels)
        var result = Result<Int, OpusError>.success(0)
        nextPacket.withUnsafeBytes { input in
            pcm.withUnsafeMutableBufferPointer { output in
                result = Result { () throws(OpusError) in try decodeFEC(from: input, frames: frames, into: output) }
            }
        }
        pcm.removeSubrange((try result.get() * channels)...)
        return pcm
    }

    /// Frames per channel of the last packet decoded or concealed (`OPUS_GET_LAST_PACKET_DURATION`).
    public var lastPacketDuration: Int {
        var value: Int32 = 0
        _ = callaudio_opus_decoder_get_last_packet_duration(handle, &value)
        return Int(value)
    }

    /// Output gain in Q8 dB units (-32768 ... 32767).
    public var gain: Int {
        var value: Int32 = 0
        _ = callaudio_opus_decoder_get_gain(handle, &value)
        return Int(value)
    }

    /// Sets the output gain in Q8 dB (`OPUS_SET_GAIN`).
    public func setGain(_ q8dB: Int) throws(OpusError) {
        guard let v = Int32(exactly: q8dB) else { throw OpusError(code: OPUS_BAD_ARG, detail: "gain \(q8dB)") }
        let r = callaudio_opus_decoder_set_gain(handle, v)
        if r != OPUS_OK { throw OpusError(code: r, detail: "gain \(q8dB) rejected") }
    }

    /// Resets the decoder as if newly created (`OPUS_RESET_STATE`).
    public func reset() throws(OpusError) { try OpusError.check(callaudio_opus_decoder_reset(handle), "reset") }

    /// Frames per channel in `packet` at this decoder's rate, without decoding it.
    ///
    /// The corresponding C function is `opus_decoder_get_nb_samples`.
    public func frameCount(of packet: UnsafeRawBufferPointer) throws(OpusError) -> Int {
        guard let base = packet.baseAddress, packet.count > 0 else {
            throw OpusError(code: OPUS_INVALID_PACKET, detail: "empty packet")
        }
        let n = opus_decoder_get_nb_samples(handle, base.assumingMemoryBound(to: UInt8.self), Int32(clamping: packet.count))
        try OpusError.check(n, "opus_decoder_get_nb_samples")
        return Int(n)
    }

    private func checkConcealFrames(_ frames: Int, capacity: Int) throws(OpusError) {
        let quantum = sampleRate / 400  // 2.5 ms
        guard frames > 0, frames % quantum == 0, frames <= maxFrameCount else {
            throw OpusError(code: OPUS_BAD_ARG,
                            detail: "\(frames) frames is not a multiple of 2.5 ms up to 120 ms at \(sampleRate) Hz")
        }
        guard frames * channels <= capacity else {
            throw OpusError(code: OPUS_BUFFER_TOO_SMALL, detail: "\(frames) frames need \(frames * channels) samples, got \(capacity)")
        }
    }

    private func run(_ packet: UnsafeRawBufferPointer, _ pcm: UnsafeMutableBufferPointer<Int16>, frames: Int,
                     fec: Bool, _ what: String) throws(OpusError) -> Int {
        guard let out = pcm.baseAddress, frames > 0 else {
            throw OpusError(code: OPUS_BUFFER_TOO_SMALL, detail: "no room for decoded frames")
        }
        let n = opus_decode(handle, packet.baseAddress?.assumingMemoryBound(to: UInt8.self), Int32(clamping: packet.count),
                            out, Int32(clamping: frames), fec ? 1 : 0)
        try OpusError.check(n, "\(what) of \(packet.count) bytes into \(frames) frames")
        return Int(n)
    }
}

// Sendable so a codec can be handed to the I/O thread: the type is non-copyable,
// so one owner at a time uses the handle and libopus state is never shared.
extension OpusDecoder: @unchecked Sendable {}
extension OpusEncoder: @unchecked Sendable {}
