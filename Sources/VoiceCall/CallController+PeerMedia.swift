import MediaNegotiation
import SDP
import Platform
import Glibc
import Logging
import RTP
import SIP

/// What the controller accepts of a peer's media: offers it can use without a name lookup,
/// the address its RTP may come from, and how long it may stay silent.
extension CallController {
    /// The offer in an INVITE, if we can answer it: UTF-8 SDP with a stream in one of our codecs
    /// at a numeric address. A name would need a DNS lookup of whatever the caller wrote
    /// (getaddrinfo blocks, and the caller chooses what we resolve): 488, as for an offer
    /// without a codec we take.
    func usableOffer(_ body: SIPBody) -> SessionDescription? {
        guard let parsed = Self.description(in: body), let stream = try? AudioSDP.stream(in: parsed, codecs: configuration.codecs),
              Self.isNumericHost(stream.address) else { return nil }
        return parsed
    }

    /// Where the peer's stream `remote` says its RTP is, without a lookup (numeric addresses only).
    static func peerAddress(_ remote: AudioStreamDescription) throws(CallError) -> SocketAddress {
        guard isNumericHost(remote.address) else {
            throw .media("the peer's media address \(remote.address) is not a numeric address")
        }
        do { return try SocketAddress(host: remote.address, port: UInt16(clamping: remote.port)) } catch {
            throw .media("the peer's media address \(remote.address):\(remote.port): \(error)")
        }
    }

    /// The SIP dialog of call `id` is established (the 2xx's ACK was sent or received): with
    /// latching, any address may now become the peer's source. Before, only its SDP address
    /// could, so nobody who guessed the port takes the media of a call still being set up.
    func dialogEstablished(_ id: String) {
        guard let rtp = records[id]?.media?.rtp, rtp.configuration.latchesToPeerSource else { return }
        rtp.acceptAnySource()
    }

    /// Starts watching the peer's media of call `id` (``CallConfiguration/mediaTimeout``);
    /// nil without a timeout.
    /// The peer consented to our media (``CallRecord/awaitsConsent``): RTP starts, as its
    /// direction and our hold allow.
    func grantConsent(_ id: String) {
        guard var record = records[id], record.awaitsConsent, let media = record.media else { return }
        record.awaitsConsent = false
        records[id] = record
        media.rtp.isSending = (record.remote?.direction.receives ?? true) && !heldCalls.contains(id)
        logger.debug("call \(id): the peer consented; sending media")
    }

    func watchMedia(_ id: String) -> Task<Void, Never>? {
        guard let timeout = configuration.mediaTimeout else { return nil }
        // A quarter of the timeout, at most a second: the call ends within timeout + 1 s.
        let tick = min(timeout / 4, .seconds(1))
        return Task { [weak self] in
            while !Task.isCancelled {
                try? await Task.sleep(for: tick)
                guard let self, await self.checkMedia(id, timeout: timeout) else { return }
            }
        }
    }

    /// Ends call `id` with ``CallEndReason/mediaTimeout`` (and a BYE) when neither RTP nor RTCP
    /// came from the peer for `timeout`; a held call (by either side) and a peer that does not
    /// send are not expected to be heard, and the silence counts from the end of the hold.
    /// Returns whether to keep watching.
    func checkMedia(_ id: String, timeout: Duration) -> Bool {
        guard var record = records[id], let media = record.media, !record.call.state.isEnded else { return false }
        let now = MonotonicClock.nanoseconds()
        if record.mediaQuietSince == 0 { record.mediaQuietSince = now }  // the first look: media just started
        if record.awaitsConsent, media.rtp.statistics.packetsReceived > 0 {
            records[id] = record
            grantConsent(id)  // the peer's first packet from its SDP address
            record = records[id]!
        }
        // A held call, or one that still rings with early media (the ring timeout ends that).
        let held = switch record.call.state { case .held, .outgoingRinging: true; default: false }
        let peerSends = record.remote?.direction.sends ?? true
        // Our own hold is ours to end; a peer that holds us still owes RTCP, for holdTimeout.
        if held || heldCalls.contains(id) || (!peerSends && configuration.holdTimeout == nil) {
            record.mediaQuietSince = now
            records[id] = record
            return true
        }
        records[id] = record
        let heard = max(record.mediaQuietSince, media.rtp.lastPeerActivity ?? 0)
        let allowed = peerSends ? timeout : max(timeout, configuration.holdTimeout ?? timeout)
        let limit = UInt64(allowed.components.seconds) * 1_000_000_000 + UInt64(allowed.components.attoseconds / 1_000_000_000)
        guard now > heard, now - heard >= limit else { return true }
        logger.warning("call \(id): nothing from the peer for \(Double(now - heard) / 1e9) s: hanging up")
        try? record.sip?.bye()
        end(id, .mediaTimeout)
        return false
    }
}
