/// The Opus RTP payload (RFC 7587): one Opus packet per RTP packet, read without
/// decoding it.
///
/// Parsing follows the framing rules of RFC 6716 section 3 (as libopus's
/// `opus_packet_parse` does), so a payload that passes ``parse(_:)`` is one the
/// decoder accepts structurally.
///
/// Thread safety: stateless; safe from any thread; nothing here allocates (real-time safe).
public enum OpusPayload {
    /// The longest an Opus packet may last: 120 ms at 48 kHz.
    public static let maxDuration = 5760

    /// The coding mode named by the TOC byte.
    public enum Mode: Sendable, Equatable {
        case silk, hybrid, celt
    }

    /// What the TOC and framing say about a payload.
    public struct Info: Sendable, Equatable {
        public var mode: Mode
        /// Whether the packet was coded in stereo.
        public var stereo: Bool
        /// Opus frames in the packet (1 ... 48).
        public var frameCount: Int
        /// Duration of one frame in 48 kHz samples (120 ... 2880).
        public var frameDuration: Int
        /// Byte range of the first frame in the payload (empty for a DTX frame).
        public var firstFrame: Range<Int>

        /// Duration of the whole packet in 48 kHz samples (RTP timestamp units).
        public var duration: Int { frameCount * frameDuration }
    }

    /// Parses the TOC byte and the frame lengths (RFC 6716 sections 3.1 and 3.2).
    ///
    /// - Returns: `nil` for an empty or malformed packet (any rule R1 ... R7 broken).
    public static func parse(_ payload: UnsafeRawBufferPointer) -> Info? {
        guard payload.count >= 1 else { return nil }
        let toc = payload[0]
        let (mode, frameDuration) = configuration(toc)
        let stereo = toc & 0x04 != 0
        var offset = 1
        var remaining = payload.count - 1
        var frameCount = 1
        var firstLength = remaining

        switch toc & 0x03 {
        case 0:
            break
        case 1:
            // Two frames of equal size.
            guard remaining % 2 == 0 else { return nil }
            frameCount = 2
            firstLength = remaining / 2
        case 2:
            // Two frames, the first one's length coded.
            guard let length = frameLength(payload, &offset, &remaining), length <= remaining else { return nil }
            frameCount = 2
            firstLength = length
            guard remaining - length <= 1275 else { return nil }
        default:
            guard let frames = code3Frames(payload, &offset, &remaining, frameDuration: frameDuration) else { return nil }
            (frameCount, firstLength) = frames
        }
        guard firstLength <= 1275, frameCount * frameDuration <= maxDuration else { return nil }
        return Info(mode: mode, stereo: stereo, frameCount: frameCount, frameDuration: frameDuration,
                    firstFrame: offset..<(offset + firstLength))
    }

    /// The mode and frame duration (48 kHz samples) of a TOC byte's configuration (RFC 6716 table 2).
    private static func configuration(_ toc: UInt8) -> (Mode, Int) {
        let config = Int(toc >> 3)
        switch config {
        case 0..<12: return (.silk, config & 3 == 3 ? 2880 : 480 << (config & 3))  // 10, 20, 40, 60 ms
        case 12..<16: return (.hybrid, 480 << (config & 1))  // 10, 20 ms
        default: return (.celt, 120 << (config & 3))  // 2.5, 5, 10, 20 ms
        }
    }

    /// Code 3 (RFC 6716 section 3.2.5): a frame count byte, optional padding, CBR or VBR lengths;
    /// returns the frame count and the first frame's length.
    private static func code3Frames(_ payload: UnsafeRawBufferPointer, _ offset: inout Int, _ remaining: inout Int,
                                    frameDuration: Int) -> (count: Int, firstLength: Int)? {
        guard remaining >= 1 else { return nil }
        let countByte = payload[offset]
        offset += 1; remaining -= 1
        let frameCount = Int(countByte & 0x3F)
        guard frameCount > 0, frameCount * frameDuration <= maxDuration else { return nil }
        if countByte & 0x40 != 0 {
            var more = true
            while more {
                guard remaining > 0 else { return nil }
                let p = Int(payload[offset])
                offset += 1; remaining -= 1
                let padding = p == 255 ? 254 : p
                remaining -= padding
                more = p == 255
            }
            guard remaining >= 0 else { return nil }
        }
        guard countByte & 0x80 != 0 else {
            guard remaining % frameCount == 0 else { return nil }
            return (frameCount, remaining / frameCount)
        }
        // VBR: every length but the last is coded.
        var last = remaining
        var first = -1
        for _ in 0..<(frameCount - 1) {
            let before = remaining
            guard let length = frameLength(payload, &offset, &remaining) else { return nil }
            guard length <= remaining else { return nil }
            if first < 0 { first = length }
            last -= (before - remaining) + length
        }
        guard last >= 0, last <= 1275 else { return nil }
        return (frameCount, first < 0 ? last : first)
    }

    /// Reads a frame length (1 or 2 bytes, RFC 6716 section 3.2.1) at `offset`; nil when it does not fit.
    private static func frameLength(_ payload: UnsafeRawBufferPointer, _ offset: inout Int, _ remaining: inout Int) -> Int? {
        guard remaining >= 1 else { return nil }
        let first = Int(payload[offset])
        if first < 252 {
            offset += 1
            remaining -= 1
            return first
        }
        guard remaining >= 2 else { return nil }
        let value = 4 * Int(payload[offset + 1]) + first
        offset += 2
        remaining -= 2
        return value
    }

    /// Duration of `payload` in 48 kHz samples, or `nil` if it is malformed.
    public static func duration(_ payload: UnsafeRawBufferPointer) -> Int? { parse(payload)?.duration }

    /// Whether the packet carries in-band FEC (SILK LBRR data) for the packet before it.
    ///
    /// Reads the first SILK symbols of the first frame with the range decoder of
    /// RFC 6716 section 4.1: the voice-activity flags, then the LBRR flag (section 4.2.3).
    /// CELT-only packets never carry FEC.
    public static func hasFEC(_ payload: UnsafeRawBufferPointer) -> Bool {
        guard let info = parse(payload) else { return false }
        return hasFEC(payload, info: info)
    }

    /// ``hasFEC(_:)`` for a payload already parsed: `info` must be what ``parse(_:)`` returned
    /// for `payload`. The jitter buffer parses each packet once on the I/O thread and reuses it.
    public static func hasFEC(_ payload: UnsafeRawBufferPointer, info: Info) -> Bool {
        guard info.mode != .celt, !info.firstFrame.isEmpty, info.firstFrame.upperBound <= payload.count else { return false }
        let silkFrames = max(1, info.frameDuration / 960)  // 20 ms SILK frames in one Opus frame
        var decoder = RangeDecoder(UnsafeRawBufferPointer(rebasing: payload[info.firstFrame]))
        for _ in 0..<silkFrames { _ = decoder.bit() }  // voice activity flags of the first channel
        return decoder.bit()
    }

    /// The few operations of the Opus range decoder (RFC 6716 section 4.1) needed to read flags.
    struct RangeDecoder {
        private let bytes: UnsafeRawBufferPointer
        private var position = 0
        private var range: UInt32 = 128
        private var value: UInt32
        private var remainder: UInt32

        init(_ bytes: UnsafeRawBufferPointer) {
            self.bytes = bytes
            remainder = 0
            value = 0
            remainder = readByte()
            value = range - 1 - (remainder >> 1)
            normalize()
        }

        private mutating func readByte() -> UInt32 {
            guard position < bytes.count else { return 0 }
            defer { position += 1 }
            return UInt32(bytes[position])
        }

        private mutating func normalize() {
            while range <= 1 << 23 {
                range <<= 8
                let previous = remainder
                remainder = readByte()
                let symbol = ((previous << 8) | remainder) >> 1
                value = ((value << 8) &+ (255 & ~symbol)) & 0x7FFF_FFFF
            }
        }

        /// Decodes one symbol with probability 1/2 (`ec_dec_bit_logp(dec, 1)`).
        mutating func bit() -> Bool {
            let split = range >> 1
            let result = value < split
            if result {
                range = split
            } else {
                value -= split
                range -= split
            }
            normalize()
            return result
        }
    }
}
