import CSRTP

/// Which way a context's packets go.
///
/// Thread safety: a value type; safe to use from any thread.
public enum SRTPDirection: Sendable, Hashable {
    /// Protects what we send.
    case outbound
    /// Unprotects what the peer sends.
    case inbound
}

/// One libsrtp2 session (`srtp_t`) for one direction of one media stream, owned once and freed
/// when the context goes away.
///
/// An outbound context protects RTP and RTCP in place; an inbound one unprotects them in place,
/// checking the tag and the replay window. A context serves only its ``direction``: a call for
/// the other throws ``SRTPError/badParameter``. Buffers must start 4-byte aligned, since libsrtp2
/// reads the headers as 32-bit words.
///
/// Thread safety: not thread-safe; one thread at a time. It may move between threads: it is
/// `Sendable` and non-copyable, so exactly one owner holds it.
public struct SRTPContext: ~Copyable {
    /// The session. `nonisolated(unsafe)` because a pointer is not `Sendable`: the context is
    /// non-copyable and every use of the session is `mutating` or in `deinit`, so only the one
    /// owner ever reaches it, one thread at a time.
    nonisolated(unsafe) private let session: OpaquePointer
    /// The profile of the key the context was made with.
    ///
    /// Thread safety: immutable; read it where the context is.
    public let profile: SRTPProfile
    /// Whether the context protects or unprotects.
    ///
    /// Thread safety: immutable; read it where the context is.
    public let direction: SRTPDirection
    /// Inbound only: the most SSRCs the context makes streams for.
    ///
    /// Thread safety: immutable; read it where the context is.
    public let maximumStreams: Int
    private var streams: StreamTable

    /// Makes the session.
    ///
    /// - Parameters:
    ///   - key: the master key: ours for `.outbound`, the peer's for `.inbound`.
    ///   - direction: which way the packets go.
    ///   - ssrc: outbound only: the SSRC we send with now. Its stream is made here, so the first
    ///     packet does not make one. A template covers any other SSRC we later send with: its
    ///     first packet makes a stream (once, inside libsrtp2). Without `ssrc`, the first packet
    ///     makes the stream.
    ///   - replayWindow: packets the inbound replay window spans, 64 to 32767 (libsrtp2's
    ///     range); RTCP's window is libsrtp2's fixed 128.
    ///   - maximumStreams: inbound only: the most SSRCs the context accepts packets from (1 to
    ///     4096; the table for them is allocated here, and searched per packet). A
    ///     packet from one more throws ``SRTPError/tooManyStreams`` without reaching libsrtp2; an
    ///     SSRC counts once a packet from it has authenticated, so forged packets never do.
    /// - Throws: ``SRTPError/badParameter`` for a window or stream count out of range or an
    ///   `ssrc` for an inbound context; libsrtp2's error if it cannot make the session.
    ///
    /// Thread safety: safe to call from any thread; the first context made in the process
    /// initialises libsrtp2, once.
    ///
    /// The corresponding C functions are `srtp_create` and `srtp_add_stream`.
    public init(key: SRTPMasterKey, direction: SRTPDirection, ssrc: UInt32? = nil,
                replayWindow: Int = 1024, maximumStreams: Int = 8) throws(SRTPError) {
        try Library.ready()
        guard (64..<0x8000).contains(replayWindow), (1...4096).contains(maximumStreams),
              direction == .outbound || ssrc == nil else { throw .badParameter }
        var template = srtp_policy_t()
        try SRTPError.check(srtp_crypto_policy_set_from_profile_for_rtp(&template.rtp, key.profile.libraryProfile))
        try SRTPError.check(srtp_crypto_policy_set_from_profile_for_rtcp(&template.rtcp, key.profile.libraryProfile))
        template.ssrc = srtp_ssrc_t(type: direction == .outbound ? ssrc_any_outbound : ssrc_any_inbound, value: 0)
        template.window_size = UInt(replayWindow)
        template.allow_repeat_tx = 0  // never encrypt two payloads under one index

        // libsrtp2 derives the session keys from the master key while it makes each stream and
        // keeps no pointer to it, so a temporary copy serves.
        var keyAndSalt = key.keyAndSalt
        var status = srtp_err_status_ok
        var made: srtp_t?
        keyAndSalt.withUnsafeMutableBufferPointer { bytes in
            template.key = bytes.baseAddress
            status = srtp_create(&made, &template)
            if status == srtp_err_status_ok, let made, let ssrc {
                var specific = template
                specific.ssrc = srtp_ssrc_t(type: ssrc_specific, value: ssrc)
                status = srtp_add_stream(made, &specific)
            }
            bytes.update(repeating: 0)  // the copy's memory is freed, not cleared, after this
        }
        guard status == srtp_err_status_ok, let made else {
            if let made { srtp_dealloc(made) }
            throw status == srtp_err_status_ok ? .allocationFailed : SRTPError(status)
        }
        self.session = made
        self.profile = key.profile
        self.direction = direction
        self.maximumStreams = maximumStreams
        self.streams = StreamTable(capacity: direction == .inbound ? maximumStreams : 0)
    }

    deinit { srtp_dealloc(session) }

    /// Inbound: the SSRCs the context holds a stream for (each authenticated a packet).
    ///
    /// Thread safety: not thread-safe; one thread at a time.
    public var streamCount: Int { streams.count }

    /// Protects the RTP packet of `length` bytes at the start of `buffer`, in place: encrypts the
    /// payload and appends the tag.
    ///
    /// - Returns: the protected packet's length, `length + profile.rtpTrailerLength`.
    /// - Throws: ``SRTPError/badParameter`` for a packet shorter than an RTP header (12 bytes), a
    ///   buffer without room for the trailer, or an inbound context; libsrtp2's error otherwise.
    ///
    /// The wrapper allocates nothing here. libsrtp2 allocates once for a new SSRC's stream, and
    /// its NSS-backed ciphers as Debian builds them allocate and free for every packet (see
    /// `Docs/srtp.md`).
    ///
    /// Thread safety: not thread-safe; one thread at a time.
    ///
    /// The corresponding C function is `srtp_protect`.
    public mutating func protectRTP(_ buffer: UnsafeMutableRawBufferPointer, length: Int) throws(SRTPError) -> Int {
        try run(buffer, length, minimum: 12, trailer: profile.rtpTrailerLength, .outbound, srtp_protect)
    }

    /// Unprotects the SRTP packet of `length` bytes at the start of `buffer`, in place: checks the
    /// replay window and the tag, decrypts, and drops the trailer.
    ///
    /// - Returns: the RTP packet's length.
    /// - Throws: ``SRTPError/authenticationFailed`` for a forged or corrupted packet or a wrong
    ///   key, ``SRTPError/replayed`` or ``SRTPError/tooOld`` (``SRTPError/isReplay``) for a
    ///   duplicate or a packet behind the window, ``SRTPError/tooManyStreams`` for one SSRC too
    ///   many, ``SRTPError/badParameter`` for a packet shorter than an RTP header or an outbound
    ///   context. The buffer's contents are unspecified after an error.
    ///
    /// Allocates as ``protectRTP(_:length:)`` does.
    ///
    /// Thread safety: not thread-safe; one thread at a time.
    ///
    /// The corresponding C function is `srtp_unprotect`.
    public mutating func unprotectRTP(_ buffer: UnsafeMutableRawBufferPointer, length: Int) throws(SRTPError) -> Int {
        try run(buffer, length, minimum: 12, trailer: 0, .inbound, ssrcOffset: 8, srtp_unprotect)
    }

    /// Protects the RTCP compound packet of `length` bytes at the start of `buffer`, in place:
    /// encrypts it and appends the E flag with the SRTCP index, and the tag (in the profile's order).
    ///
    /// - Returns: the protected packet's length, `length + profile.rtcpTrailerLength`.
    /// - Throws: ``SRTPError/badParameter`` for a packet shorter than an RTCP header (8 bytes), a
    ///   buffer without room for the trailer, or an inbound context; libsrtp2's error otherwise.
    ///
    /// Allocates as ``protectRTP(_:length:)`` does.
    ///
    /// Thread safety: not thread-safe; one thread at a time.
    ///
    /// The corresponding C function is `srtp_protect_rtcp`.
    public mutating func protectRTCP(_ buffer: UnsafeMutableRawBufferPointer, length: Int) throws(SRTPError) -> Int {
        try run(buffer, length, minimum: 8, trailer: profile.rtcpTrailerLength, .outbound, srtp_protect_rtcp)
    }

    /// Unprotects the SRTCP packet of `length` bytes at the start of `buffer`, in place.
    ///
    /// - Returns: the RTCP compound packet's length.
    /// - Throws: as ``unprotectRTP(_:length:)`` does; the SSRC counted against
    ///   ``maximumStreams`` is the sender's (bytes 4 to 7), and RTP and RTCP from one SSRC share
    ///   its stream.
    ///
    /// Allocates as ``protectRTP(_:length:)`` does.
    ///
    /// Thread safety: not thread-safe; one thread at a time.
    ///
    /// The corresponding C function is `srtp_unprotect_rtcp`.
    public mutating func unprotectRTCP(_ buffer: UnsafeMutableRawBufferPointer, length: Int) throws(SRTPError) -> Int {
        try run(buffer, length, minimum: 8, trailer: 0, .inbound, ssrcOffset: 4, srtp_unprotect_rtcp)
    }

    /// The checks every call shares, then `operation`. `trailer` is the room needed after the
    /// packet; `ssrcOffset` (inbound) is where the SSRC counted against the stream cap sits.
    @inline(__always)
    private mutating func run(_ buffer: UnsafeMutableRawBufferPointer, _ length: Int, minimum: Int, trailer: Int,
                              _ required: SRTPDirection, ssrcOffset: Int? = nil,
                              _ operation: (srtp_t?, UnsafeMutableRawPointer?, UnsafeMutablePointer<Int32>?) -> srtp_err_status_t)
        throws(SRTPError) -> Int {
        // libsrtp2 trusts the length it is given and writes the trailer past it: it never learns
        // the buffer's size, so every bound is checked here.
        guard direction == required, let base = buffer.baseAddress, Int(bitPattern: base) & 3 == 0,
              length >= minimum, length <= buffer.count, buffer.count - length >= trailer,
              length <= Int(Int32.max) - SRTPProfile.maximumTrailerLength else { throw .badParameter }
        var ssrc: UInt32?
        if let ssrcOffset {
            let value = base.loadUnaligned(fromByteOffset: ssrcOffset, as: UInt32.self).bigEndian
            if !streams.contains(value) {
                if streams.isFull { throw .tooManyStreams }
                ssrc = value
            }
        }
        var result = Int32(length)
        try SRTPError.check(operation(session, base, &result))
        // libsrtp2 made a stream for a new SSRC only because its packet authenticated.
        if let ssrc { streams.insert(ssrc) }
        return Int(result)
    }
}

extension SRTPContext: Sendable {}
