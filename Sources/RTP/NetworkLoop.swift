import Glibc
import Logging
import Opus
import Platform
import SRTP
import Synchronization

/// The network thread's work: receive, validate, hand over; RTCP in and out.
final class NetworkLoop: ThreadLoop, @unchecked Sendable {
    // @unchecked: everything is touched only by the network thread (between `start()` and
    // the join in `stop()`).
    let configuration: RTPSessionConfiguration
    var ssrc: UInt32
    let cname: String
    let rtp: UDPSocket
    let rtcp: UDPSocket?
    private let ring: RTPPacketRing
    let state: RTPSessionState
    let logger: Logger
    var validator: RTPSourceValidator
    var scheduler: RTCPScheduler
    let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 2048, alignment: 16)
    private let start = MonotonicClock.nanoseconds()
    // The peer's last sender report: LSR and when it arrived.
    var lastSenderReport: UInt32 = 0
    var lastSenderReportArrival: UInt64 = 0
    var peerSentAt: UInt64 = 0
    var framesAtLastReport = 0
    /// The validator's lock generation last seen: a new one is a new source or SSRC.
    private var lockGeneration: UInt32 = 0
    /// Where RTP and RTCP go, and the last ``PeerAddressMailbox`` write followed.
    var rtpDestination: SocketAddress
    var rtcpDestination: SocketAddress
    private var peerVersion = 0
    private var telephoneEvents = TelephoneEventReceiver()
    /// The last address our SSRC collided with, and how many times we changed it.
    var collisionAddress: SocketAddress?
    var collisionChanges = 0
    private let events: AsyncStream<TelephoneEvent>.Continuation
    /// SRTP: every datagram is unprotected before it is parsed, and RTCP protected before it goes.
    let encrypted: Bool
    var inbound: SRTPStream?
    /// Protects our RTP (the sender's datagrams, from ``outgoing``) and our RTCP.
    var outbound: SRTPStream?
    var dtls: DTLSMediaHandshake?
    let outgoing: OutgoingDatagrams?
    let inboundKeys: InboundKeyMailbox
    /// Where outgoing RTCP is protected (room for the SRTCP trailer).
    let sendBuffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 2048, alignment: 16)

    init(configuration: RTPSessionConfiguration, ssrc: UInt32, cname: String, rtp: UDPSocket, rtcp: UDPSocket?,
         ring: RTPPacketRing, state: RTPSessionState, logger: Logger, seed: UInt64,
         events: AsyncStream<TelephoneEvent>.Continuation, keys: SessionKeys, inboundKeys: InboundKeyMailbox,
         outgoing: OutgoingDatagrams?) {
        self.events = events
        encrypted = configuration.protection.isEncrypted
        inbound = keys.inbound
        outbound = keys.outbound
        dtls = keys.dtls
        self.outgoing = outgoing
        self.inboundKeys = inboundKeys
        self.configuration = configuration
        self.ssrc = ssrc
        self.cname = cname
        self.rtp = rtp
        self.rtcp = rtcp
        rtpDestination = configuration.remoteAddress
        rtcpDestination = configuration.rtcpDestination
        self.ring = ring
        self.state = state
        self.logger = logger
        var validation = configuration.validator
        validation.payloadType = configuration.payloadType  // the session's codec wins
        validation.codec = configuration.codec
        validation.telephoneEventPayloadType = configuration.telephoneEvents?.payloadType
        validation.comfortNoisePayloadType = configuration.comfortNoisePayloadType
        validator = RTPSourceValidator(configuration: validation)
        validator.localSSRC = ssrc
        // Session bandwidth: the codec's bitrate plus 40 bytes of RTP/UDP/IPv4 headers per packet.
        let packetsPerSecond = 1000.0 / Double(configuration.opus.frameMilliseconds)
        let bitrate = configuration.codec == .opus ? configuration.opus.bitrate : 64000  // G.711 and G.722: 64 kb/s
        let bandwidth = Double(bitrate) + 40 * 8 * packetsPerSecond
        scheduler = RTCPScheduler(now: 0, sessionBandwidth: bandwidth, firstPacketSize: 100, seed: seed)
    }

    deinit {
        buffer.deallocate()
        sendBuffer.deallocate()
    }

    func seconds(_ t: UInt64) -> Double { Double(t &- start) / 1e9 }

    func run(stopping: borrowing Atomic<Bool>) {
        logger.debug("RTP session listening", metadata: ["rtp": "\(rtp.localAddress)", "ssrc": "\(ssrc)"])
        startDTLS(now: MonotonicClock.nanoseconds())
        while !stopping.load(ordering: .acquiring) {
            let now = MonotonicClock.nanoseconds()
            dtlsTimer(now: now)
            // Without RTCP (a peer that takes none) no report is ever due.
            let untilReport = configuration.sendsRTCP ? max(0, Int((scheduler.nextDue - seconds(now)) * 1000)) : 20
            let (rtpReady, rtcpReady, woken) = UDPSocket.waitReadable(rtp, rtcp, wake: outgoing?.wake, timeoutMs: min(20, untilReport))
            if woken { outgoing?.wake.drain() }
            sendQueued()
            if let moved = state.peer.read(newerThan: &peerVersion) {
                rtpDestination = moved.rtp
                rtcpDestination = moved.rtcp
                validator.peerMoved(to: moved.rtp)
                logger.info("RTP peer moved", metadata: ["rtp": "\(moved.rtp)", "rtcp": "\(moved.rtcp)"])
            }
            if !validator.acceptsAnySource, state.acceptsAnySource { validator.acceptAnySource() }
            if let rekeyed = inboundKeys.take() { inbound = rekeyed }
            if rtpReady { drain(rtp, isRTCPSocket: false) }
            if rtcpReady, let rtcp { drain(rtcp, isRTCPSocket: true) }
            state.publish(validator)
            let t = MonotonicClock.nanoseconds()
            if configuration.sendsRTCP, seconds(t) >= scheduler.nextDue { reportTimer(now: t) }
        }
        sendReport(now: MonotonicClock.nanoseconds(), goodbye: true)
        events.finish()
        logger.debug("RTP session stopped", metadata: ["ssrc": "\(ssrc)"])
    }

    /// Reads every waiting datagram (at most 256 per call, so a flood cannot starve RTCP).
    private func drain(_ socket: UDPSocket, isRTCPSocket: Bool) {
        for _ in 0..<256 {
            guard case .datagram(var length, let source, let truncated) = socket.receiveNow(into: buffer) else { return }
            let arrival = MonotonicClock.nanoseconds()
            let isRTCP = isRTCPSocket || (configuration.rtcpMux && RTCPCompound.isRTCP(UnsafeRawBufferPointer(rebasing: buffer[0..<length])))
            if encrypted {
                guard let plain = unprotect(length, isRTCP: isRTCP, truncated: truncated, from: source) else { continue }
                length = plain
            }
            let datagram = UnsafeRawBufferPointer(rebasing: buffer[0..<length])
            if isRTCP {
                handleRTCP(datagram, from: source, arrival: arrival, truncated: truncated)
                continue
            }
            if truncated {
                validator.recordDrop(.malformed)
                continue
            }
            let verdict = validator.validate(datagram, from: source, arrival: arrival)
            if verdict == .drop(.ssrcCollision) { collided(with: source, now: arrival) }
            if case let .accept(packet, payload) = verdict {
                state.peerHeard(at: arrival)
                // Latching acts at each new lock (a new source, or the same SSRC from a new port
                // after a NAT rebinding), not at each packet: a re-INVITE's move must not be
                // undone by the packets still coming from the old address.
                if validator.generation != lockGeneration {
                    lockGeneration = validator.generation
                    logger.info("RTP source locked", metadata: ["source": "\(source)", "ssrc": "\(packet.ssrc)"])
                    if configuration.latchesToPeerSource { latch(to: source) }
                }
                peerSentAt = arrival
                let body = UnsafeRawBufferPointer(rebasing: datagram[payload])
                if packet.isTelephoneEvent, let event = TelephoneEvent.parse(body),
                   let new = telephoneEvents.receive(event, timestamp: packet.timestamp,
                                                     sourceGeneration: packet.sourceGeneration) {
                    events.yield(new)
                }
                // Events go to the jitter buffer too: their sequence numbers are not audio lost.
                ring.push(packet, payload: body)
            }
        }
    }

    /// Sends to `source` from now on, unless RTP already goes there: the I/O thread's sender at
    /// its next frame, RTCP (to the next port, or the same with rtcp-mux) at once.
    private func latch(to source: SocketAddress) {
        guard source != rtpDestination else { return }
        let rtcp = RTPSessionConfiguration.rtcpDestination(rtp: source, rtcp: nil, mux: configuration.rtcpMux)
        rtpDestination = source
        rtcpDestination = rtcp
        state.peer.publish(rtp: source, rtcp: rtcp)
        logger.info("RTP sent where the peer's RTP comes from", metadata: ["rtp": "\(source)", "rtcp": "\(rtcp)"])
    }
}
