// Framing of SIP over a stream (RFC 3261 section 18.3): a message is its header section up to
// the empty line, then exactly Content-Length bytes, which a stream message must carry. The caps
// are a datagram's: a message over 64 KiB, or a header section that does not end within it,
// is an error that closes the connection (there is no resynchronising a stream).

/// Splits a byte stream into SIP messages and RFC 5626 keep-alives.
///
/// Thread safety: a value type, used by one thread (the user agent's network thread).
struct StreamFramer {
    /// What the stream carried.
    enum Unit: Equatable {
        case message([UInt8])
        /// A double CRLF between messages (RFC 5626 section 4.4.1): answer with a single CRLF.
        case ping
    }

    enum FramingError: Error, Equatable {
        /// No empty line within ``maximumMessageBytes``, or a Content-Length that goes past it.
        case messageTooLarge
        /// A header section without a (single, numeric) Content-Length.
        case badContentLength
    }

    /// The largest message, as for a datagram.
    static let maximumMessageBytes = 65_536

    private var buffer: [UInt8] = []
    /// Where the scan for the empty line resumes (bytes before it were searched already).
    private var scanned = 0

    /// Bytes buffered and not yet part of a whole message.
    var bufferedBytes: Int { buffer.count }
    /// Bytes examined by the search for the empty line so far (the tests check it is linear).
    private(set) var bytesSearched = 0

    /// Adds bytes read from the stream and returns the units now complete. Linear in the bytes
    /// added: the search for the empty line resumes where it stopped.
    mutating func append(_ bytes: some Collection<UInt8>) throws(FramingError) -> [Unit] {
        buffer.append(contentsOf: bytes)
        var units: [Unit] = []
        while let unit = try next() { units.append(unit) }
        return units
    }

    private mutating func next() throws(FramingError) -> Unit? {
        // Line breaks between messages: keep-alives.
        var breaks = 0
        while breaks < buffer.count, buffer[breaks] == .cr || buffer[breaks] == .lf { breaks += 1 }
        if breaks > 0 {
            // A ping is CRLF CRLF; wait for the rest of a shorter run unless a message follows.
            if breaks < 4, breaks == buffer.count { return nil }
            buffer.removeFirst(breaks)
            scanned = 0
            return breaks >= 4 ? .ping : try next()
        }
        guard let headerEnd = findEmptyLine() else {
            guard buffer.count <= Self.maximumMessageBytes else { throw .messageTooLarge }
            return nil
        }
        let length = try Self.contentLength(in: buffer[..<headerEnd])
        let total = headerEnd + length
        guard total <= Self.maximumMessageBytes else { throw .messageTooLarge }
        guard buffer.count >= total else { return nil }
        let message = Array(buffer[..<total])
        buffer.removeFirst(total)
        scanned = 0
        return .message(message)
    }

    /// The index just past the first empty line (CRLF CRLF, or LF LF), if it has arrived.
    private mutating func findEmptyLine() -> Int? {
        var index = max(scanned, 1)
        while index < buffer.count {
            bytesSearched += 1
            if buffer[index] == .lf {
                if buffer[index - 1] == .lf { return index + 1 }
                if index >= 2, buffer[index - 1] == .cr, buffer[index - 2] == .lf { return index + 1 }
            }
            index += 1
        }
        scanned = max(1, buffer.count - 3)
        return nil
    }

    /// The value of the one `Content-Length` (or `l`) field of a header section, read on bytes.
    static func contentLength(in header: ArraySlice<UInt8>) throws(FramingError) -> Int {
        var found: Int?
        var lineStart = header.startIndex
        for index in header.indices where header[index] == .lf {
            if let value = contentLengthValue(header[lineStart..<index]) {
                guard let value, found == nil || found == value else { throw .badContentLength }
                found = value
            }
            lineStart = index + 1
        }
        guard let found else { throw .badContentLength }
        return found
    }

    /// Nil when the line is another field; `.some(nil)` when it is Content-Length with a bad value.
    private static func contentLengthValue(_ line: ArraySlice<UInt8>) -> Int?? {
        guard let colon = line.firstIndex(of: .colon) else { return nil }
        let name = line[..<colon].trimmingLWS
        guard name.elementsEqual("content-length".utf8, by: { $0 | 0x20 == $1 })
            || name.count == 1 && name.first! | 0x20 == UInt8(ascii: "l")
        else { return nil }
        let value = line[(colon + 1)...].trimmingLWS
        guard !value.isEmpty, value.count <= 6, value.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return .some(nil) }
        return .some(value.reduce(0) { $0 * 10 + Int($1 - 0x30) })
    }
}

extension ArraySlice<UInt8> {
    /// Without leading and trailing spaces, tabs and CR.
    fileprivate var trimmingLWS: ArraySlice<UInt8> {
        var slice = self
        while let first = slice.first, first == .space || first == .tab || first == .cr { slice.removeFirst() }
        while let last = slice.last, last == .space || last == .tab || last == .cr { slice.removeLast() }
        return slice
    }
}
