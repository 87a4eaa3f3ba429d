/// The contributing sources of an RTP packet (at most 15), stored inline so that
/// parsing a header never allocates.
///
/// Thread safety: a value type; safe to use from any thread.
public struct RTPContributingSources: RandomAccessCollection, Sendable, Equatable, ExpressibleByArrayLiteral {
    /// The most CSRCs a header can carry (the CC field is 4 bits).
    public static let capacity = 15

    private var storage = InlineArray<15, UInt32>(repeating: 0)
    public private(set) var count = 0

    public init() {}

    public init(arrayLiteral elements: UInt32...) {
        precondition(elements.count <= Self.capacity, "at most 15 CSRCs")
        for e in elements { append(e) }
    }

    public var startIndex: Int { 0 }
    public var endIndex: Int { count }
    public subscript(position: Int) -> UInt32 {
        precondition(position >= 0 && position < count, "CSRC index out of range")
        return storage[position]
    }

    /// Appends a CSRC.
    ///
    /// - Precondition: fewer than 15 are stored.
    public mutating func append(_ csrc: UInt32) {
        precondition(count < Self.capacity, "at most 15 CSRCs")
        storage[count] = csrc
        count += 1
    }

    public static func == (a: Self, b: Self) -> Bool { a.elementsEqual(b) }
}

/// The RTP fixed header with its CSRC list and optional header extension
/// (RFC 3550 section 5.1 and 5.3.1).
///
/// Thread safety: a value type; safe to use from any thread.
public struct RTPHeader: Sendable, Equatable {
    /// The only RTP version (2).
    public static let version: UInt8 = 2
    /// Bytes of the fixed part of the header.
    public static let fixedSize = 12

    /// Marks significant events; for audio, the first packet of a talk spurt.
    public var marker: Bool
    /// The payload type, 0 ... 127.
    public var payloadType: UInt8
    public var sequenceNumber: UInt16
    /// Sampling instant of the first octet of the payload, in RTP clock units.
    public var timestamp: UInt32
    /// Synchronisation source.
    public var ssrc: UInt32
    public var csrcs: RTPContributingSources
    /// The header extension's profile-defined 16 bits, or `nil` for no extension.
    public var extensionProfile: UInt16?

    public init(marker: Bool = false, payloadType: UInt8, sequenceNumber: UInt16, timestamp: UInt32, ssrc: UInt32,
                csrcs: RTPContributingSources = RTPContributingSources(), extensionProfile: UInt16? = nil) {
        self.marker = marker
        self.payloadType = payloadType
        self.sequenceNumber = sequenceNumber
        self.timestamp = timestamp
        self.ssrc = ssrc
        self.csrcs = csrcs
        self.extensionProfile = extensionProfile
    }
}

/// Why a datagram is not a valid RTP packet.
///
/// Thread safety: a value type; safe to use from any thread.
public enum RTPParseError: Error, Sendable, Equatable, CaseIterable {
    /// Shorter than its header, CSRC list or extension says.
    case truncated
    /// The version field is not 2.
    case badVersion
    /// The padding count is zero or longer than what follows the header.
    case badPadding
    /// A payload type in 72 ... 76 is RTCP sent to the RTP port (RFC 5761 section 4).
    case rtcpPayloadType
}

/// A parsed RTP packet: its header and where the extension data and payload lie in
/// the datagram. Parsing copies nothing and does not allocate.
///
/// Thread safety: a value type; safe to use from any thread.
public struct RTPPacket: Sendable, Equatable {
    public var header: RTPHeader
    /// Byte range of the header extension's data (after its 4-byte preamble); empty without one.
    public var extensionData: Range<Int>
    /// Byte range of the payload.
    public var payload: Range<Int>
    /// Padding bytes at the end, including the count byte itself (0 without padding).
    public var paddingCount: Int

    /// Parses an RTP datagram (RFC 3550 section 5.1 and the checks of appendix A.1).
    ///
    /// Checks the version, that the CSRC list, the extension and the padding fit, and
    /// that the payload type is not one RTCP uses. Payload type and source are checked
    /// by ``RTPSourceValidator``.
    ///
    /// Thread safety: safe from any thread; does not allocate (real-time safe).
    public static func parse(_ datagram: UnsafeRawBufferPointer) throws(RTPParseError) -> RTPPacket {
        let count = datagram.count
        guard count >= RTPHeader.fixedSize else { throw .truncated }
        let b0 = datagram[0], b1 = datagram[1]
        guard b0 >> 6 == RTPHeader.version else { throw .badVersion }
        let hasPadding = b0 & 0x20 != 0
        let hasExtension = b0 & 0x10 != 0
        let csrcCount = Int(b0 & 0x0F)
        let payloadType = b1 & 0x7F
        guard !(72...76).contains(payloadType) else { throw .rtcpPayloadType }

        var header = RTPHeader(marker: b1 & 0x80 != 0, payloadType: payloadType,
                               sequenceNumber: datagram.loadBigEndian(UInt16.self, at: 2),
                               timestamp: datagram.loadBigEndian(UInt32.self, at: 4),
                               ssrc: datagram.loadBigEndian(UInt32.self, at: 8))
        var offset = RTPHeader.fixedSize
        guard count >= offset + 4 * csrcCount else { throw .truncated }
        for i in 0..<csrcCount { header.csrcs.append(datagram.loadBigEndian(UInt32.self, at: offset + 4 * i)) }
        offset += 4 * csrcCount

        var extensionData = offset..<offset
        if hasExtension {
            guard count >= offset + 4 else { throw .truncated }
            header.extensionProfile = datagram.loadBigEndian(UInt16.self, at: offset)
            let words = Int(datagram.loadBigEndian(UInt16.self, at: offset + 2))
            guard count >= offset + 4 + 4 * words else { throw .truncated }
            extensionData = (offset + 4)..<(offset + 4 + 4 * words)
            offset = extensionData.upperBound
        }

        var paddingCount = 0
        if hasPadding {
            paddingCount = Int(datagram[count - 1])
            guard paddingCount > 0, paddingCount <= count - offset else { throw .badPadding }
        }
        return RTPPacket(header: header, extensionData: extensionData, payload: offset..<(count - paddingCount),
                         paddingCount: paddingCount)
    }
}

/// Why an RTP packet could not be written.
public enum RTPWriteError: Error, Sendable, Equatable {
    /// The output buffer is too small for the packet.
    case bufferTooSmall
    /// Extension data must be a whole number of 32-bit words, at most 65535 of them.
    case badExtensionLength
    /// Padding must be 1 ... 255 bytes.
    case badPadding
    /// Payload types are 7 bits.
    case badPayloadType
}

extension RTPHeader {
    /// Bytes the header takes with its CSRCs and an extension of `extensionLength` data bytes.
    public func size(extensionLength: Int = 0) -> Int {
        Self.fixedSize + 4 * csrcs.count + (extensionProfile == nil ? 0 : 4 + extensionLength)
    }

    /// Writes a whole packet: this header, `extensionData` (if ``extensionProfile`` is set),
    /// `payload` and `padding` bytes of padding.
    ///
    /// - Returns: the packet's length in bytes.
    ///
    /// Thread safety: safe from any thread; does not allocate (real-time safe).
    public func write(payload: UnsafeRawBufferPointer, extensionData: UnsafeRawBufferPointer = .init(start: nil, count: 0),
                      padding: Int = 0, into buffer: UnsafeMutableRawBufferPointer) throws(RTPWriteError) -> Int {
        guard payloadType < 128 else { throw .badPayloadType }
        guard (0...255).contains(padding) else { throw .badPadding }
        let extLength = extensionProfile == nil ? 0 : extensionData.count
        guard extLength % 4 == 0, extLength / 4 <= 0xFFFF else { throw .badExtensionLength }
        let headerSize = size(extensionLength: extLength)
        let total = headerSize + payload.count + padding
        guard buffer.count >= total else { throw .bufferTooSmall }

        buffer[0] = RTPHeader.version << 6 | (padding > 0 ? 0x20 : 0) | (extensionProfile != nil ? 0x10 : 0)
            | UInt8(csrcs.count)
        buffer[1] = (marker ? 0x80 : 0) | payloadType
        buffer.storeBigEndian(sequenceNumber, at: 2)
        buffer.storeBigEndian(timestamp, at: 4)
        buffer.storeBigEndian(ssrc, at: 8)
        var offset = Self.fixedSize
        for csrc in csrcs {
            buffer.storeBigEndian(csrc, at: offset)
            offset += 4
        }
        if let profile = extensionProfile {
            buffer.storeBigEndian(profile, at: offset)
            buffer.storeBigEndian(UInt16(extLength / 4), at: offset + 2)
            offset += 4
            if extLength > 0 {
                UnsafeMutableRawBufferPointer(rebasing: buffer[offset..<(offset + extLength)]).copyMemory(from: extensionData)
            }
            offset += extLength
        }
        if payload.count > 0 {
            UnsafeMutableRawBufferPointer(rebasing: buffer[offset..<(offset + payload.count)]).copyMemory(from: payload)
        }
        offset += payload.count
        if padding > 0 {
            for i in offset..<(offset + padding - 1) { buffer[i] = 0 }
            buffer[offset + padding - 1] = UInt8(padding)
        }
        return total
    }
}

extension RTPPacket {
    /// Parses `bytes` (convenience for tests and tools).
    public static func parse(_ bytes: [UInt8]) throws(RTPParseError) -> RTPPacket {
        var result = Result<RTPPacket, RTPParseError>.failure(.truncated)
        bytes.withUnsafeBytes { raw in result = Result { () throws(RTPParseError) in try RTPPacket.parse(raw) } }
        return try result.get()
    }
}

extension RTPHeader {
    /// Writes a packet and returns its bytes (allocating convenience for tests and tools).
    public func packet(payload: [UInt8], extensionData: [UInt8] = [], padding: Int = 0) throws(RTPWriteError) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: size(extensionLength: extensionData.count) + payload.count + max(padding, 0))
        var result = Result<Int, RTPWriteError>.success(0)
        payload.withUnsafeBytes { p in
            extensionData.withUnsafeBytes { e in
                out.withUnsafeMutableBytes { o in
                    result = Result { () throws(RTPWriteError) in try write(payload: p, extensionData: e, padding: padding, into: o) }
                }
            }
        }
        out.removeSubrange(try result.get()...)
        return out
    }
}
