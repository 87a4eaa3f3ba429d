import SRTP
import Testing

/// RTP and RTCP packets for the tests, and array-in, array-out calls over the in-place API.
enum Packets {
    /// An RTP packet (version 2, payload type 111) with a payload that differs per sequence number.
    static func rtp(sequence: UInt16, ssrc: UInt32, payloadLength: Int = 160) -> [UInt8] {
        var packet: [UInt8] = [0x80, 111]
        append(UInt32(sequence) << 16, to: &packet, bytes: 2)
        append(UInt32(sequence) &* 960, to: &packet)
        append(ssrc, to: &packet)
        packet += (0..<payloadLength).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ Int(sequence) &* 13 &+ 1) }
        return packet
    }

    /// An RTCP sender report (28 bytes) from `ssrc`, whose counts vary with `index`.
    static func rtcp(index: UInt32, ssrc: UInt32) -> [UInt8] {
        var packet: [UInt8] = [0x80, 200, 0, 6]
        append(ssrc, to: &packet)
        append(0xE000_0000 &+ index, to: &packet)  // NTP seconds
        append(index &* 0x1234_5678, to: &packet)  // NTP fraction
        append(index &* 960, to: &packet)          // RTP timestamp
        append(index, to: &packet)                 // packets sent
        append(index &* 160, to: &packet)          // octets sent
        return packet
    }

    static func append(_ value: UInt32, to packet: inout [UInt8], bytes: Int = 4) {
        for shift in stride(from: 24, through: 32 - 8 * bytes, by: -8) { packet.append(UInt8(truncatingIfNeeded: value >> UInt32(shift))) }
    }
}

/// Aligned room for one packet and the largest trailer, freed with the value.
final class Scratch {
    let bytes: UnsafeMutableRawBufferPointer

    init(_ packet: [UInt8], room: Int = SRTPProfile.maximumTrailerLength) {
        bytes = .allocate(byteCount: packet.count + room, alignment: 16)
        bytes.initializeMemory(as: UInt8.self, repeating: 0)
        bytes.copyBytes(from: packet)
    }

    deinit { bytes.deallocate() }

    func prefix(_ count: Int) -> [UInt8] { Array(bytes[0..<count]) }
}

extension SRTPContext {
    mutating func protectRTP(_ packet: [UInt8]) throws(SRTPError) -> [UInt8] {
        let scratch = Scratch(packet)
        return scratch.prefix(try protectRTP(scratch.bytes, length: packet.count))
    }

    mutating func unprotectRTP(_ packet: [UInt8]) throws(SRTPError) -> [UInt8] {
        let scratch = Scratch(packet)
        return scratch.prefix(try unprotectRTP(scratch.bytes, length: packet.count))
    }

    mutating func protectRTCP(_ packet: [UInt8]) throws(SRTPError) -> [UInt8] {
        let scratch = Scratch(packet)
        return scratch.prefix(try protectRTCP(scratch.bytes, length: packet.count))
    }

    mutating func unprotectRTCP(_ packet: [UInt8]) throws(SRTPError) -> [UInt8] {
        let scratch = Scratch(packet)
        return scratch.prefix(try unprotectRTCP(scratch.bytes, length: packet.count))
    }
}

/// The error `body` throws, or nil when it returns. (Closures infer untyped throws, so the
/// error arrives boxed; the allocation tests use ``refusal(_:)``, which does not box.)
func failure<T: ~Copyable>(_ body: () throws -> T) -> SRTPError? {
    do {
        _ = try body()
        return nil
    } catch let error as SRTPError {
        return error
    } catch {
        Issue.record("not an SRTPError: \(error)")
        return nil
    }
}

/// The error `body` throws, typed all the way, or nil when it returns.
func refusal(_ body: () throws(SRTPError) -> Int) -> SRTPError? {
    do {
        _ = try body()
        return nil
    } catch {
        return error
    }
}

/// Two contexts with one key for `profile`: an outbound one sending as `ssrc`, an inbound one.
struct Pair: ~Copyable {
    let key: SRTPMasterKey
    var outbound: SRTPContext
    var inbound: SRTPContext

    init(_ profile: SRTPProfile, ssrc: UInt32? = 0x1234_5678, replayWindow: Int = 1024, maximumStreams: Int = 8) throws(SRTPError) {
        let key = SRTPMasterKey.random(profile: profile)
        let outbound = try SRTPContext(key: key, direction: .outbound, ssrc: ssrc)
        let inbound = try SRTPContext(key: key, direction: .inbound, replayWindow: replayWindow, maximumStreams: maximumStreams)
        self.key = key
        self.outbound = outbound
        self.inbound = inbound
    }
}
