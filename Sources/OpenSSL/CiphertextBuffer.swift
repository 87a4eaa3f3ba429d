import COpenSSL

/// The ciphertext between a session and its caller, on both sides of a custom BIO: what the
/// peer sent waits in `incoming` until OpenSSL reads it, what OpenSSL writes waits in
/// `outgoing` until the caller takes it. For datagrams each chunk is one datagram and keeps
/// its bounds (OpenSSL's memory BIO would merge them); for a stream chunks are just bytes.
///
/// The BIO holds an unretained pointer to the buffer: the session owns both and frees the SSL
/// (and with it the BIO) before the buffer.
///
/// Thread safety: not thread-safe; used by its session only.
final class CiphertextBuffer {
    let datagrams: Bool
    private(set) var incoming: [[UInt8]] = []
    private var incomingHead = 0     // chunks before it are consumed
    private var incomingOffset = 0   // bytes of incoming[incomingHead] consumed (streams)
    private(set) var incomingBytes = 0
    private(set) var outgoing: [[UInt8]] = []
    private(set) var outgoingBytes = 0

    init(datagrams: Bool) { self.datagrams = datagrams }

    func append(_ bytes: [UInt8]) {
        incoming.append(bytes)
        incomingBytes += bytes.count
    }

    /// The next datagram, or all pending bytes of a stream; nil when there is nothing.
    func takeOutgoing() -> [UInt8]? {
        guard !outgoing.isEmpty else { return nil }
        let chunk = datagrams ? outgoing.removeFirst() : outgoing.joined().map { $0 }
        if datagrams { outgoingBytes -= chunk.count } else { outgoing.removeAll(); outgoingBytes = 0 }
        return chunk
    }

    /// BIO read: one datagram (truncated to `capacity`, as a UDP read is), or up to `capacity` bytes.
    fileprivate func read(into target: UnsafeMutableRawBufferPointer) -> Int {
        var copied = 0
        while incomingHead < incoming.count, copied < target.count {
            let chunk = incoming[incomingHead]
            let n = min(chunk.count - incomingOffset, target.count - copied)
            chunk.withUnsafeBytes { source in
                UnsafeMutableRawBufferPointer(rebasing: target[copied..<(copied + n)])
                    .copyMemory(from: UnsafeRawBufferPointer(rebasing: source[incomingOffset..<(incomingOffset + n)]))
            }
            copied += n
            if datagrams || incomingOffset + n == chunk.count {
                incomingBytes -= chunk.count - incomingOffset
                incomingHead += 1
                incomingOffset = 0
                if datagrams { break }
            } else {
                incomingOffset += n
                incomingBytes -= n
            }
        }
        if incomingHead == incoming.count || incomingHead >= 64 {
            // Drop consumed chunks in bulk so a long session's array stays small.
            incoming.removeFirst(incomingHead)
            incomingHead = 0
        }
        return copied
    }

    fileprivate func write(_ source: UnsafeRawBufferPointer) {
        if datagrams || outgoing.isEmpty { outgoing.append(Array(source)) } else { outgoing[0] += source }
        outgoingBytes += source.count
    }

    /// A BIO over this buffer; SSL_set_bio hands it to the SSL, which frees it.
    func makeBIO() -> OpaquePointer? {
        guard let method = ciphertextBIOMethod, let bio = BIO_new(method) else { return nil }
        BIO_set_data(bio, Unmanaged.passUnretained(self).toOpaque())
        BIO_set_init(bio, 1)
        return bio
    }

    fileprivate static func from(_ bio: OpaquePointer?) -> CiphertextBuffer? {
        guard let bio, let data = BIO_get_data(bio) else { return nil }
        return Unmanaged<CiphertextBuffer>.fromOpaque(data).takeUnretainedValue()
    }
}

/// The BIO_METHOD of ``CiphertextBuffer``, made once per process and never freed.
nonisolated(unsafe) private let ciphertextBIOMethod: OpaquePointer? = {
    guard let method = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "callaudio ciphertext") else { return nil }
    _ = BIO_meth_set_write(method) { bio, data, length in
        guard let buffer = CiphertextBuffer.from(bio), let data, length >= 0 else { return -1 }
        callaudio_bio_clear_retry_flags(bio)
        buffer.write(UnsafeRawBufferPointer(start: data, count: Int(length)))
        return length
    }
    _ = BIO_meth_set_read(method) { bio, data, length in
        guard let buffer = CiphertextBuffer.from(bio), let data, length >= 0 else { return -1 }
        callaudio_bio_clear_retry_flags(bio)
        let n = buffer.read(into: UnsafeMutableRawBufferPointer(start: data, count: Int(length)))
        if n == 0 {
            // Nothing yet: "try again", as a non-blocking socket says, so OpenSSL asks for more.
            callaudio_bio_set_retry_read(bio)
            return -1
        }
        return Int32(n)
    }
    _ = BIO_meth_set_ctrl(method) { bio, command, _, _ in
        guard let buffer = CiphertextBuffer.from(bio) else { return 0 }
        switch command {
        case BIO_CTRL_PENDING: return buffer.incomingBytes
        // DTLS shrinks its next fragment by what is pending, as if it shared the datagram:
        // here every datagram stands alone, so nothing is.
        case BIO_CTRL_WPENDING: return buffer.datagrams ? 0 : buffer.outgoingBytes
        case BIO_CTRL_FLUSH: return 1
        // The MTU is set on the SSL, never asked of the BIO; every other datagram control
        // (peer address, timeouts) has nothing to do over memory.
        default: return 0
        }
    }
    return method
}()
