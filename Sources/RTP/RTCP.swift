/// One reception report block of an SR or RR (RFC 3550 section 6.4.1).
///
/// Thread safety: a value type; safe to use from any thread.
public struct RTCPReportBlock: Sendable, Equatable {
    /// The source this block reports on.
    public var ssrc: UInt32
    /// Packets lost since the previous report, in 1/256.
    public var fractionLost: UInt8
    /// Packets lost since the start, 24-bit signed (duplicates can make it negative).
    public var cumulativeLost: Int32
    /// Cycles (high 16 bits) and the highest sequence number received.
    public var extendedHighestSequence: UInt32
    /// Interarrival jitter in RTP timestamp units.
    public var jitter: UInt32
    /// LSR: the middle 32 bits of the NTP timestamp of the last SR from the source, or 0.
    public var lastSenderReport: UInt32
    /// DLSR: time since that SR arrived, in 1/65536 s.
    public var delaySinceLastSenderReport: UInt32

    public init(ssrc: UInt32, fractionLost: UInt8 = 0, cumulativeLost: Int32 = 0, extendedHighestSequence: UInt32 = 0,
                jitter: UInt32 = 0, lastSenderReport: UInt32 = 0, delaySinceLastSenderReport: UInt32 = 0) {
        self.ssrc = ssrc
        self.fractionLost = fractionLost
        self.cumulativeLost = cumulativeLost
        self.extendedHighestSequence = extendedHighestSequence
        self.jitter = jitter
        self.lastSenderReport = lastSenderReport
        self.delaySinceLastSenderReport = delaySinceLastSenderReport
    }

    static let size = 24
}

/// The sender information of an SR (RFC 3550 section 6.4.1).
public struct RTCPSenderInfo: Sendable, Equatable {
    /// Wall clock when the report was sent.
    public var ntpTimestamp: NTPTimestamp
    /// The same instant in the RTP clock.
    public var rtpTimestamp: UInt32
    /// RTP packets sent since the start.
    public var packetCount: UInt32
    /// Payload octets sent since the start.
    public var octetCount: UInt32

    public init(ntpTimestamp: NTPTimestamp, rtpTimestamp: UInt32, packetCount: UInt32, octetCount: UInt32) {
        self.ntpTimestamp = ntpTimestamp
        self.rtpTimestamp = rtpTimestamp
        self.packetCount = packetCount
        self.octetCount = octetCount
    }
}

/// An SDES item (RFC 3550 section 6.5).
public struct RTCPSourceDescriptionItem: Sendable, Equatable {
    /// CNAME, the canonical end-point identifier.
    public static let cname: UInt8 = 1

    public var type: UInt8
    /// UTF-8 text, at most 255 bytes.
    public var text: String

    public init(type: UInt8, text: String) {
        self.type = type
        self.text = text
    }
}

/// One SDES chunk: a source and its items.
public struct RTCPSourceDescriptionChunk: Sendable, Equatable {
    public var ssrc: UInt32
    public var items: [RTCPSourceDescriptionItem]

    public init(ssrc: UInt32, items: [RTCPSourceDescriptionItem]) {
        self.ssrc = ssrc
        self.items = items
    }

    /// The CNAME item's text, if present.
    public var cname: String? { items.first { $0.type == RTCPSourceDescriptionItem.cname }?.text }
}

/// One RTCP packet of a compound packet.
///
/// Thread safety: a value type; safe to use from any thread.
public enum RTCPPacket: Sendable, Equatable {
    /// SR (200): an active sender's report.
    case senderReport(ssrc: UInt32, sender: RTCPSenderInfo, reports: [RTCPReportBlock])
    /// RR (201): a receiver's report.
    case receiverReport(ssrc: UInt32, reports: [RTCPReportBlock])
    /// SDES (202): source descriptions.
    case sourceDescription([RTCPSourceDescriptionChunk])
    /// BYE (203): sources leaving, with an optional reason.
    case goodbye(sources: [UInt32], reason: String?)
    /// Any other type (APP, feedback, XR ...): recognised and skipped.
    case other(packetType: UInt8, count: UInt8, bodyLength: Int)

    /// Packet types.
    public static let senderReportType: UInt8 = 200
    public static let receiverReportType: UInt8 = 201
    public static let sourceDescriptionType: UInt8 = 202
    public static let goodbyeType: UInt8 = 203
}

/// Why a datagram is not a valid compound RTCP packet (the checks of RFC 3550 appendix A.2).
public enum RTCPParseError: Error, Sendable, Equatable, CaseIterable {
    /// Shorter than a header, or a packet's length runs past the datagram's end.
    case truncated
    /// A version field is not 2.
    case badVersion
    /// The first packet is not an SR or RR, or its padding bit is set.
    case notCompound
    /// Padding on a packet other than the last, or a padding count that does not fit.
    case badPadding
    /// The datagram's length is not a multiple of 4.
    case badLength
    /// An SR, RR, SDES or BYE whose contents do not fit its length.
    case malformed
}

/// Why RTCP packets could not be written.
public enum RTCPWriteError: Error, Sendable, Equatable {
    /// More than 31 report blocks, chunks or sources in one packet.
    case tooManyEntries
    /// An SDES item or BYE reason longer than 255 bytes.
    case textTooLong
}

/// Compound RTCP packets (RFC 3550 section 6.1): parsing with validation, and writing.
///
/// Thread safety: stateless; safe from any thread. Parsing and writing allocate the
/// packet list: they run on the network thread, not the real-time one.
public enum RTCPCompound {
    /// Whether a datagram on a multiplexed port is RTCP (RFC 5761 section 4: second byte 192 ... 223).
    public static func isRTCP(_ datagram: UnsafeRawBufferPointer) -> Bool {
        datagram.count >= 2 && (192...223).contains(datagram[1])
    }

    /// Parses and validates a compound packet.
    public static func parse(_ datagram: UnsafeRawBufferPointer) throws(RTCPParseError) -> [RTCPPacket] {
        let total = datagram.count
        guard total >= 4 else { throw .truncated }
        guard total % 4 == 0 else { throw .badLength }
        guard datagram[0] >> 6 == 2 else { throw .badVersion }
        guard datagram[0] & 0x20 == 0,
              datagram[1] == RTCPPacket.senderReportType || datagram[1] == RTCPPacket.receiverReportType
        else { throw .notCompound }

        var packets: [RTCPPacket] = []
        var offset = 0
        while offset < total {
            guard total - offset >= 4 else { throw .truncated }
            let b0 = datagram[offset]
            guard b0 >> 6 == 2 else { throw .badVersion }
            let count = b0 & 0x1F
            let type = datagram[offset + 1]
            let length = (Int(datagram.loadBigEndian(UInt16.self, at: offset + 2)) + 1) * 4
            guard length <= total - offset else { throw .truncated }
            var bodyEnd = offset + length
            if b0 & 0x20 != 0 {
                // Only the last packet may be padded (A.2).
                guard bodyEnd == total else { throw .badPadding }
                let padding = Int(datagram[bodyEnd - 1])
                guard padding > 0, padding <= length - 4 else { throw .badPadding }
                bodyEnd -= padding
            }
            let body = UnsafeRawBufferPointer(rebasing: datagram[(offset + 4)..<bodyEnd])
            packets.append(try parsePacket(type: type, count: count, body: body))
            offset += length
        }
        return packets
    }

    /// Parses a compound packet from bytes (convenience for tests and tools).
    public static func parse(_ bytes: [UInt8]) throws(RTCPParseError) -> [RTCPPacket] {
        var result = Result<[RTCPPacket], RTCPParseError>.failure(.truncated)
        bytes.withUnsafeBytes { raw in result = Result { () throws(RTCPParseError) in try parse(raw) } }
        return try result.get()
    }

    private static func parsePacket(type: UInt8, count: UInt8, body: UnsafeRawBufferPointer) throws(RTCPParseError) -> RTCPPacket {
        let n = Int(count)
        switch type {
        case RTCPPacket.senderReportType:
            guard body.count >= 24 + n * RTCPReportBlock.size else { throw .malformed }
            let info = RTCPSenderInfo(
                ntpTimestamp: NTPTimestamp(seconds: body.loadBigEndian(UInt32.self, at: 4),
                                           fraction: body.loadBigEndian(UInt32.self, at: 8)),
                rtpTimestamp: body.loadBigEndian(UInt32.self, at: 12),
                packetCount: body.loadBigEndian(UInt32.self, at: 16),
                octetCount: body.loadBigEndian(UInt32.self, at: 20))
            return .senderReport(ssrc: body.loadBigEndian(UInt32.self, at: 0), sender: info,
                                 reports: reportBlocks(body, at: 24, count: n))
        case RTCPPacket.receiverReportType:
            guard body.count >= 4 + n * RTCPReportBlock.size else { throw .malformed }
            return .receiverReport(ssrc: body.loadBigEndian(UInt32.self, at: 0), reports: reportBlocks(body, at: 4, count: n))
        case RTCPPacket.sourceDescriptionType:
            return .sourceDescription(try sourceDescription(body, count: n))
        case RTCPPacket.goodbyeType:
            guard body.count >= 4 * n else { throw .malformed }
            let sources = (0..<n).map { body.loadBigEndian(UInt32.self, at: 4 * $0) }
            var reason: String?
            if body.count > 4 * n {
                let length = Int(body[4 * n])
                guard body.count >= 4 * n + 1 + length else { throw .malformed }
                reason = String(decoding: body[(4 * n + 1)..<(4 * n + 1 + length)], as: UTF8.self)
            }
            return .goodbye(sources: sources, reason: reason)
        default:
            return .other(packetType: type, count: count, bodyLength: body.count)
        }
    }

    private static func reportBlocks(_ body: UnsafeRawBufferPointer, at start: Int, count: Int) -> [RTCPReportBlock] {
        (0..<count).map { i in
            let o = start + i * RTCPReportBlock.size
            let lostWord = body.loadBigEndian(UInt32.self, at: o + 4)
            // The cumulative count is 24-bit two's complement: sign-extend it.
            let cumulative = Int32(bitPattern: lostWord << 8) >> 8
            return RTCPReportBlock(ssrc: body.loadBigEndian(UInt32.self, at: o),
                                   fractionLost: UInt8(lostWord >> 24),
                                   cumulativeLost: cumulative,
                                   extendedHighestSequence: body.loadBigEndian(UInt32.self, at: o + 8),
                                   jitter: body.loadBigEndian(UInt32.self, at: o + 12),
                                   lastSenderReport: body.loadBigEndian(UInt32.self, at: o + 16),
                                   delaySinceLastSenderReport: body.loadBigEndian(UInt32.self, at: o + 20))
        }
    }

    private static func sourceDescription(_ body: UnsafeRawBufferPointer, count: Int) throws(RTCPParseError) -> [RTCPSourceDescriptionChunk] {
        var chunks: [RTCPSourceDescriptionChunk] = []
        var offset = 0
        for _ in 0..<count {
            guard body.count - offset >= 4 else { throw .malformed }
            var chunk = RTCPSourceDescriptionChunk(ssrc: body.loadBigEndian(UInt32.self, at: offset), items: [])
            offset += 4
            // Items until a null item; the chunk then pads to a 32-bit boundary.
            while true {
                guard offset < body.count else { throw .malformed }
                let type = body[offset]
                if type == 0 {
                    offset = (offset + 4) & ~3
                    break
                }
                guard body.count - offset >= 2 else { throw .malformed }
                let length = Int(body[offset + 1])
                guard body.count - offset - 2 >= length else { throw .malformed }
                chunk.items.append(RTCPSourceDescriptionItem(
                    type: type, text: String(decoding: body[(offset + 2)..<(offset + 2 + length)], as: UTF8.self)))
                offset += 2 + length
            }
            guard offset <= body.count else { throw .malformed }
            chunks.append(chunk)
        }
        return chunks
    }

    // MARK: Writing

    /// Writes packets as one compound packet. Put an SR or RR first (RFC 3550 section 6.1).
    public static func serialize(_ packets: [RTCPPacket]) throws(RTCPWriteError) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(128)
        for packet in packets { try append(packet, to: &out) }
        return out
    }

    /// One SDES chunk: the source, its items, then a null item and zeros to the next 32-bit
    /// boundary (at least one zero byte).
    private static func appendChunk(_ chunk: RTCPSourceDescriptionChunk, to out: inout [UInt8]) throws(RTCPWriteError) {
        let ssrc = chunk.ssrc
        out += [UInt8(ssrc >> 24), UInt8(truncatingIfNeeded: ssrc >> 16), UInt8(truncatingIfNeeded: ssrc >> 8), UInt8(truncatingIfNeeded: ssrc)]
        for item in chunk.items {
            let text = Array(item.text.utf8)
            guard text.count <= 255 else { throw .textTooLong }
            out += [item.type, UInt8(text.count)] + text
        }
        out.append(0)
        while out.count % 4 != 0 { out.append(0) }
    }

    private static func append(_ packet: RTCPPacket, to out: inout [UInt8]) throws(RTCPWriteError) {
        let start = out.count
        func u32(_ v: UInt32) { out += [UInt8(v >> 24), UInt8(truncatingIfNeeded: v >> 16), UInt8(truncatingIfNeeded: v >> 8), UInt8(truncatingIfNeeded: v)] }
        func header(_ count: Int, _ type: UInt8) throws(RTCPWriteError) {
            guard count <= 31 else { throw .tooManyEntries }
            out += [2 << 6 | UInt8(count), type, 0, 0]  // length filled in below
        }
        func blocks(_ reports: [RTCPReportBlock]) {
            for r in reports {
                u32(r.ssrc)
                u32(UInt32(r.fractionLost) << 24 | (UInt32(bitPattern: r.cumulativeLost) & 0xFF_FFFF))
                u32(r.extendedHighestSequence)
                u32(r.jitter)
                u32(r.lastSenderReport)
                u32(r.delaySinceLastSenderReport)
            }
        }
        switch packet {
        case let .senderReport(ssrc, sender, reports):
            try header(reports.count, RTCPPacket.senderReportType)
            u32(ssrc)
            u32(sender.ntpTimestamp.seconds)
            u32(sender.ntpTimestamp.fraction)
            u32(sender.rtpTimestamp)
            u32(sender.packetCount)
            u32(sender.octetCount)
            blocks(reports)
        case let .receiverReport(ssrc, reports):
            try header(reports.count, RTCPPacket.receiverReportType)
            u32(ssrc)
            blocks(reports)
        case let .sourceDescription(chunks):
            try header(chunks.count, RTCPPacket.sourceDescriptionType)
            for chunk in chunks { try appendChunk(chunk, to: &out) }
        case let .goodbye(sources, reason):
            try header(sources.count, RTCPPacket.goodbyeType)
            for s in sources { u32(s) }
            if let reason {
                let text = Array(reason.utf8)
                guard text.count <= 255 else { throw .textTooLong }
                out += [UInt8(text.count)] + text
                while out.count % 4 != 0 { out.append(0) }
            }
        case let .other(type, count, bodyLength):
            try header(Int(count), type)
            out += [UInt8](repeating: 0, count: (bodyLength + 3) & ~3)
        }
        let words = (out.count - start) / 4 - 1
        out[start + 2] = UInt8(words >> 8)
        out[start + 3] = UInt8(truncatingIfNeeded: words)
    }
}
