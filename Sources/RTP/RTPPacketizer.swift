/// The header state of one outgoing RTP stream (RFC 3550 section 5.1): SSRC,
/// sequence number and timestamp, random at the start; the marker on the first
/// packet of each talk spurt.
///
/// Thread safety: a value type; used by the sending thread. Does not allocate.
public struct RTPPacketizer: Sendable {
    public let payloadType: UInt8
    /// Changes only after a collision (RFC 3550 section 8.2, ``RTPSessionState/localSSRC``).
    public internal(set) var ssrc: UInt32
    /// The sequence number of the next packet.
    public private(set) var sequenceNumber: UInt16
    /// The timestamp of the next packet.
    public private(set) var timestamp: UInt32
    /// The next packet starts a talk spurt (the stream's first, or the first after silence not sent).
    public private(set) var talkSpurtStart = true

    /// Creates a stream; values not given are random.
    public init(payloadType: UInt8, ssrc: UInt32? = nil, sequenceNumber: UInt16? = nil, timestamp: UInt32? = nil) {
        var random = SystemRandomNumberGenerator()
        self.payloadType = payloadType
        self.ssrc = ssrc ?? UInt32.random(in: 1...UInt32.max, using: &random)
        self.sequenceNumber = sequenceNumber ?? UInt16.random(in: 0...UInt16.max, using: &random)
        self.timestamp = timestamp ?? UInt32.random(in: 0...UInt32.max, using: &random)
    }

    /// Writes the next packet, carrying `payload` that lasts `duration` RTP units, and advances.
    ///
    /// - Returns: the datagram's length.
    public mutating func write(payload: UnsafeRawBufferPointer, duration: Int,
                               into datagram: UnsafeMutableRawBufferPointer) throws(RTPWriteError) -> Int {
        let header = RTPHeader(marker: talkSpurtStart, payloadType: payloadType, sequenceNumber: sequenceNumber,
                               timestamp: timestamp, ssrc: ssrc)
        let n = try header.write(payload: payload, into: datagram)
        sequenceNumber &+= 1
        timestamp &+= UInt32(truncatingIfNeeded: duration)
        talkSpurtStart = false
        return n
    }

    /// Writes a telephone-event packet (RFC 4733) with the next sequence number, the event's
    /// start `timestamp`, `marker` and `payloadType`; the clock does not move (``skip(duration:)``
    /// accounts for the frame the event replaces).
    ///
    /// - Returns: the datagram's length.
    public mutating func writeEvent(_ event: TelephoneEvent, timestamp eventTimestamp: UInt32, marker: Bool,
                                    payloadType eventPayloadType: UInt8,
                                    into datagram: UnsafeMutableRawBufferPointer) throws(RTPWriteError) -> Int {
        var payload: (UInt8, UInt8, UInt8, UInt8) = (0, 0, 0, 0)
        let n = try withUnsafeMutableBytes(of: &payload) { bytes throws(RTPWriteError) -> Int in
            event.write(into: bytes)
            let header = RTPHeader(marker: marker, payloadType: eventPayloadType, sequenceNumber: sequenceNumber,
                                   timestamp: eventTimestamp, ssrc: ssrc)
            return try header.write(payload: UnsafeRawBufferPointer(bytes), into: datagram)
        }
        sequenceNumber &+= 1
        return n
    }

    /// Writes a silence descriptor (RFC 3389: the noise level in -dBov) in place of a frame of
    /// `duration` RTP units, with `payloadType`, no marker; the next audio packet starts a talk
    /// spurt.
    ///
    /// - Returns: the datagram's length.
    public mutating func writeDescriptor(level: Int, duration: Int, payloadType descriptorPayloadType: UInt8,
                                         into datagram: UnsafeMutableRawBufferPointer) throws(RTPWriteError) -> Int {
        var byte = UInt8(clamping: level)
        let header = RTPHeader(marker: false, payloadType: descriptorPayloadType, sequenceNumber: sequenceNumber,
                               timestamp: timestamp, ssrc: ssrc)
        let n = try withUnsafeBytes(of: &byte) { payload throws(RTPWriteError) in try header.write(payload: payload, into: datagram) }
        sequenceNumber &+= 1
        timestamp &+= UInt32(truncatingIfNeeded: duration)
        talkSpurtStart = true
        return n
    }

    /// A frame of `duration` RTP units that is not sent (DTX): the clock moves on, the
    /// sequence number does not, and the next packet starts a talk spurt.
    public mutating func skip(duration: Int) {
        timestamp &+= UInt32(truncatingIfNeeded: duration)
        talkSpurtStart = true
    }
}
