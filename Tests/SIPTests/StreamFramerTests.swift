@testable import SIP
import Testing
import TestSupport

/// Framing SIP on a stream (RFC 3261 section 18.3): Content-Length, keep-alives, the caps.
@Suite struct StreamFramerTests {
    static func message(_ id: Int, body: String = "v=0") -> [UInt8] {
        Array(sipText(["OPTIONS sip:b@h SIP/2.0", "Via: SIP/2.0/TCP h;branch=z9hG4bK\(id)", "f: <sip:a@h>;tag=1",
                       "t: <sip:b@h>", "i: \(id)", "CSeq: 1 OPTIONS"], body: body).utf8)
    }

    /// Messages split at every possible point, and several in one read, come out whole and in order.
    @Test func messagesSurviveAnySplit() throws {
        let stream = Self.message(1) + Self.message(2, body: "") + Self.message(3)
        for cut in 1..<stream.count {
            var framer = StreamFramer()
            let units = try framer.append(stream[..<cut]) + framer.append(stream[cut...])
            #expect(units == [.message(Self.message(1)), .message(Self.message(2, body: "")), .message(Self.message(3))])
            #expect(framer.bufferedBytes == 0)
        }
    }

    /// A double CRLF between messages is a ping (RFC 5626); a single one is a pong, ignored.
    @Test func keepAlives() throws {
        var framer = StreamFramer()
        #expect(try framer.append(Array("\r\n\r\n".utf8)) == [.ping])
        #expect(try framer.append(Array("\r\n".utf8)) == [])
        #expect(try framer.append(Self.message(4)) == [.message(Self.message(4))])
    }

    /// A stream message must say its length; a compact `l:` does; two different ones do not.
    @Test func contentLengthIsRequired() throws {
        var framer = StreamFramer()
        let noLength = Array("OPTIONS sip:b@h SIP/2.0\r\nVia: SIP/2.0/TCP h\r\n\r\n".utf8)
        #expect(throws: StreamFramer.FramingError.badContentLength) { try framer.append(noLength) }
        var compact = StreamFramer()
        let short = Array("OPTIONS sip:b@h SIP/2.0\r\nl: 3\r\n\r\nabc".utf8)
        #expect(try compact.append(short) == [.message(short)])
        var twice = StreamFramer()
        #expect(throws: StreamFramer.FramingError.badContentLength) {
            try twice.append(Array("OPTIONS sip:b@h SIP/2.0\r\nl: 3\r\nContent-Length: 4\r\n\r\nabcd".utf8))
        }
    }

    /// The caps are a datagram's: a header section that does not end within 64 KiB, or a body
    /// that would take a message past it, is an error (the connection closes).
    @Test func oversizedMessagesAreErrors() throws {
        var endless = StreamFramer()
        let header = Array("OPTIONS sip:b@h SIP/2.0\r\nX: ".utf8) + Array(repeating: UInt8(ascii: "x"), count: 70_000)
        #expect(throws: StreamFramer.FramingError.messageTooLarge) { try endless.append(header) }
        var huge = StreamFramer()
        #expect(throws: StreamFramer.FramingError.messageTooLarge) {
            try huge.append(Array("OPTIONS sip:b@h SIP/2.0\r\nContent-Length: 99999\r\n\r\n".utf8))
        }
    }

    /// A message fed a byte at a time costs work linear in its size: the search for the empty
    /// line resumes where it stopped instead of starting over (counted, not timed).
    @Test func byteAtATimeIsLinear() throws {
        var framer = StreamFramer()
        var endless = Array("OPTIONS sip:b@h SIP/2.0\r\nX: ".utf8)
        endless += Array(repeating: UInt8(ascii: "x"), count: 20_000)
        for byte in endless { _ = try framer.append(CollectionOfOne(byte)) }
        #expect(framer.bytesSearched <= 4 * endless.count)
        var whole = StreamFramer()
        let big = Self.message(5, body: String(repeating: "a", count: 20_000))
        var units: [StreamFramer.Unit] = []
        for byte in big { units += try whole.append(CollectionOfOne(byte)) }
        #expect(units == [.message(big)])
    }
}
