import COpus

/// Facts read from an Opus packet's header (RFC 6716 section 3.1) without decoding it.
///
/// Thread safety: stateless; safe from any thread.
public enum OpusPacket {
    /// Frames per channel `packet` holds when decoded at `sampleRate`.
    ///
    /// The corresponding C function is `opus_packet_get_nb_samples`.
    public static func frameCount(_ packet: [UInt8], sampleRate: Int) throws(OpusError) -> Int {
        guard !packet.isEmpty else { throw OpusError(code: OPUS_INVALID_PACKET, detail: "empty packet") }
        let n = packet.withUnsafeBufferPointer {
            opus_packet_get_nb_samples($0.baseAddress!, Int32(clamping: $0.count), Int32(clamping: sampleRate))
        }
        try OpusError.check(n, "opus_packet_get_nb_samples")
        return Int(n)
    }

    /// Channels the packet was coded with (1 or 2).
    public static func channelCount(_ packet: [UInt8]) throws(OpusError) -> Int {
        guard let first = packet.first else { throw OpusError(code: OPUS_INVALID_PACKET, detail: "empty packet") }
        let n = withUnsafePointer(to: first) { opus_packet_get_nb_channels($0) }
        try OpusError.check(n, "opus_packet_get_nb_channels")
        return Int(n)
    }

    /// Whether the packet uses a SILK or hybrid mode, the only modes that can carry in-band FEC.
    public static func isSILKOrHybrid(_ packet: [UInt8]) -> Bool {
        guard let toc = packet.first else { return false }
        let config = toc >> 3
        return config < 16  // configs 0-11 SILK-only, 12-15 hybrid, 16-31 CELT-only
    }
}
