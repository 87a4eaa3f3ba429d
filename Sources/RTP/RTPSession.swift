public import Platform
import Glibc
public import Logging

public import Opus
public import SRTP
import Synchronization

/// How an ``RTPSession`` is set up.
///
/// Thread safety: a value type; safe to use from any thread.
public struct RTPSessionConfiguration: Sendable {
    /// Where RTP is received; RTCP on the next port unless ``rtcpMux``.
    public var localAddress: SocketAddress
    /// Where RTP is sent.
    public var remoteAddress: SocketAddress
    /// Where RTCP is sent: by default the remote RTP port + 1, or the RTP port with ``rtcpMux``.
    public var remoteRTCPAddress: SocketAddress?
    /// RTP and RTCP on one port (RFC 5761).
    public var rtcpMux: Bool
    /// The codec both ways.
    public var codec: AudioCodec = .opus
    /// The codec's payload type: Opus's is dynamic (96 by convention), the others' static.
    public var payloadType: UInt8
    /// The call's audio (rate, channels, packet time) and, with Opus, the encoder's settings.
    public var opus: OpusCallConfiguration
    /// Packets the network thread may queue for the I/O thread (a power of two).
    public var ringCapacity: Int
    /// The CNAME sent in SDES; a random one (RFC 7022) by default.
    public var cname: String?
    /// Source validation; its payload type is always the session's ``payloadType``.
    public var validator: RTPSourceValidator.Configuration
    /// Send RTP and RTCP to where the peer's RTP comes from each time its source is locked,
    /// instead of ``remoteAddress`` (symmetric RTP): for a peer behind NAT, or one whose SDP gives
    /// an address our socket cannot reach (IPv6 when our socket is IPv4 while it sends from
    /// IPv4). RTCP then goes to the next port, or the same one with ``rtcpMux``.
    public var latchesToPeerSource = false
    /// Telephone events (RFC 4733 DTMF) as negotiated with the peer, both ways; nil: none
    /// (``RTPSession/sendDTMF(_:)`` refuses, and events from the peer are dropped).
    public var telephoneEvents: TelephoneEventFormat?
    /// Comfort noise (RFC 3389) as negotiated with the peer, received only (its silences played
    /// as noise at the level it describes); nil: none (its packets are dropped as another type).
    public var comfortNoisePayloadType: UInt8?
    /// Whether RTCP reports go to the peer. A Janus AudioBridge plain-RTP port takes no RTCP: it
    /// decodes every datagram as Opus.
    public var sendsRTCP = true
    /// Clear RTP, SRTP with SDES keys, or DTLS-SRTP.
    public var protection: MediaProtection = .clear

    public init(localAddress: SocketAddress, remoteAddress: SocketAddress, remoteRTCPAddress: SocketAddress? = nil,
                rtcpMux: Bool = false, payloadType: UInt8 = 96, opus: OpusCallConfiguration = .init(),
                ringCapacity: Int = 64, cname: String? = nil) {
        self.localAddress = localAddress
        self.remoteAddress = remoteAddress
        self.remoteRTCPAddress = remoteRTCPAddress
        self.rtcpMux = rtcpMux
        self.payloadType = payloadType
        self.opus = opus
        self.ringCapacity = ringCapacity
        self.cname = cname
        validator = .init(payloadType: payloadType)
    }

    /// Where RTCP goes.
    public var rtcpDestination: SocketAddress {
        Self.rtcpDestination(rtp: remoteAddress, rtcp: remoteRTCPAddress, mux: rtcpMux)
    }

    /// Where RTCP goes for a peer receiving RTP at `rtp`: `rtcp` when it said (`a=rtcp`), else
    /// `rtp` itself with rtcp-mux, else the next port (RFC 3550 section 11).
    static func rtcpDestination(rtp: SocketAddress, rtcp: SocketAddress?, mux: Bool) -> SocketAddress {
        rtcp ?? (mux ? rtp : rtp.with(port: rtp.port &+ 1))
    }
}

/// One RTP/RTCP session: the sockets, the network thread, RTCP, and the two ends the
/// I/O thread uses (``makeSender()`` and `makeJitterBuffer()`, fed by ``ring``).
///
/// ```
/// network thread:  recvfrom -> RTPSourceValidator -> ring (SPSC) --+
///                  RTCP: reports in, SR/RR + SDES out (RFC 3550 6.3) |
/// I/O thread:      JitterBuffer.receive(from: ring), pull(into:) <--+
///                  RTPSender.send(frame) -> sendto (non-blocking)
/// ```
///
/// The network thread is a plain POSIX thread blocking in `poll` (at most 20 ms at a
/// time, so ``stop()`` returns promptly); it allocates only for RTCP, never on the
/// RTP path.
///
/// With ``RTPSessionConfiguration/protection``, the sender protects each packet in place
/// before it goes (SRTP, RFC 3711), and the network thread unprotects each datagram before
/// anything parses it: one that fails authentication or replays is dropped and counted.
///
/// Thread safety: ``start()``, ``stop()``, ``makeSender()`` and `makeJitterBuffer()`
/// from a control thread; ``statistics`` from any thread.
public final class RTPSession: Sendable {
    public let configuration: RTPSessionConfiguration
    /// Validated packets, from the network thread to the jitter buffer's thread.
    public let ring: RTPPacketRing
    /// Where the jitter buffer made by `makeJitterBuffer()` publishes its statistics.
    public let jitterMonitor = JitterBufferMonitor()
    /// Shared counters.
    public let state: RTPSessionState
    /// The SSRC this session sends with (a new one after a collision, RFC 3550 section 8.2).
    public var ssrc: UInt32 { state.localSSRC }
    let rtpSocket: UDPSocket
    let rtcpSocket: UDPSocket?
    private let thread: LoopThread
    private let senderMade = Atomic<Bool>(false)
    /// Keys for the sender to send as telephone events.
    private let keys = TelephoneEventQueue()
    /// With SRTP, the sender's datagrams on their way to the network thread (nil in clear), and
    /// the peer's new keys on theirs.
    let outgoing: OutgoingDatagrams?
    private let inboundKeys = InboundKeyMailbox()
    /// DTMF keys the peer pressed (telephone events, each reported once when it starts), from
    /// the network thread. Keeps the newest 64 when nobody reads. Finishes when the session stops.
    public let receivedTelephoneEvents: AsyncStream<TelephoneEvent>

    /// Binds the sockets (RTP on the local address, RTCP on the next port unless muxed) and
    /// makes the SRTP contexts the keys call for.
    ///
    /// - Parameter configuration: addresses, codec, validation and protection.
    /// - Parameter bound: sockets already bound to the RTP and RTCP ports (those offered in SDP),
    ///   used instead of binding new ones: what the peer sent before the session existed (a DTLS
    ///   ClientHello, the first RTP) waits in them rather than being refused.
    /// - Parameter logger: where the session and its network thread log.
    public init(configuration: RTPSessionConfiguration, bound: (rtp: UDPSocket, rtcp: UDPSocket)? = nil,
                logger: Logger = Logger(label: "callaudio.rtp")) throws(RTPSessionError) {
        self.configuration = configuration
        do throws(SocketError) {
            if let bound {
                (rtpSocket, rtcpSocket) = (bound.rtp, configuration.rtcpMux ? nil : bound.rtcp)
            } else {
                rtpSocket = try UDPSocket(bindingTo: configuration.localAddress)
                let port = rtpSocket.localAddress.port &+ 1
                rtcpSocket = configuration.rtcpMux ? nil : try UDPSocket(bindingTo: configuration.localAddress.with(port: port))
            }
        } catch {
            throw .socket(error)
        }
        ring = RTPPacketRing(capacity: configuration.ringCapacity, maxPayloadSize: configuration.validator.maxPayloadSize)
        state = RTPSessionState(initialExpectedLossPercent: configuration.opus.initialExpectedLossPercent,
                                clockRate: configuration.codec.rtpClockRate)
        var random = SystemRandomNumberGenerator()
        let ssrc = UInt32.random(in: 1...UInt32.max, using: &random)
        state.setLocalSSRC(ssrc)
        let cname = configuration.cname ?? Self.randomCNAME(&random)
        let (events, eventContinuation) = AsyncStream.makeStream(of: TelephoneEvent.self, bufferingPolicy: .bufferingNewest(64))
        receivedTelephoneEvents = events
        let keys = try SessionKeys(configuration.protection, ssrc: ssrc)
        switch configuration.protection {
        case .clear: break
        case let .srtp(local, _):
            state.set(.srtpProfile, SRTPProfile.allCases.firstIndex(of: local.profile)! + 1)
            state.setKeyed()
        case .dtls: state.set(.dtlsState, DTLSState.handshaking.rawValue)
        }
        do {
            outgoing = configuration.protection.isEncrypted
                ? try OutgoingDatagrams(slotSize: RTPAudioEncoder.maxDatagramSize + SRTPProfile.maximumTrailerLength) : nil
        } catch {
            throw .socket(error)
        }
        let loop = NetworkLoop(configuration: configuration, ssrc: ssrc, cname: cname, rtp: rtpSocket, rtcp: rtcpSocket,
                               ring: ring, state: state, logger: logger, seed: random.next(), events: eventContinuation,
                               keys: keys, inboundKeys: inboundKeys, outgoing: outgoing)
        thread = LoopThread(name: "callaudio-rtp", loop)
    }

    /// Unprotects what the peer sends with `remote` from now on: an SDES re-INVITE that changed
    /// the peer's key (RFC 4568 section 7.1.4). Packets still in flight under the old key fail
    /// authentication and are counted.
    ///
    /// - Throws: ``RTPSessionError/srtp(_:)`` when libsrtp refuses the key; the old key stays.
    ///
    /// Thread safety: any thread (the control thread); the network thread takes the new key at
    /// its next turn (<= 20 ms).
    public func rekeyInbound(_ remote: SRTPMasterKey) throws(RTPSessionError) {
        do { inboundKeys.post(try SRTPStream(key: remote, direction: .inbound)) } catch { throw .srtp(error) }
    }

    /// A random CNAME of 96 bits in base64 (RFC 7022 section 4.2).
    private static func randomCNAME(_ random: inout SystemRandomNumberGenerator) -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")
        return String((0..<16).map { _ in alphabet[Int(random.next() % 64)] })
    }

    /// The RTP socket's address (the real port when bound to port 0).
    public var localAddress: SocketAddress { rtpSocket.localAddress }
    /// The RTCP socket's address (the RTP one with rtcp-mux).
    public var localRTCPAddress: SocketAddress { rtcpSocket?.localAddress ?? rtpSocket.localAddress }

    /// Starts the network thread.
    public func start() { thread.start() }

    /// Lets any address become the peer's source from now on, not only
    /// ``RTPSourceValidator/Configuration/expectedSource``: for latching, once the SIP dialog is
    /// established (before that, anyone who guessed the port could take the call's media).
    ///
    /// Thread safety: any thread; the network thread applies it at its next turn (<= 20 ms).
    public func acceptAnySource() { state.setAcceptsAnySource() }

    /// When the peer was last heard: RTP from its source or RTCP accepted from it (monotonic
    /// nanoseconds, `MonotonicClock/nanoseconds()`); nil while it has not been.
    ///
    /// Thread safety: any thread (an atomic).
    public var lastPeerActivity: UInt64? { state.lastPeerActivity }

    /// Sends a BYE and stops the network thread; returns within about 50 ms.
    public func stop() { thread.stop() }

    /// Whether the sender made by ``makeSender()`` sends RTP. Set it to the peer's stream
    /// direction (`receives`): a peer that holds the call (`sendonly`, `inactive`) gets no
    /// RTP, only RTCP, and reports turn from SR to RR. The timestamp keeps moving while
    /// paused and the first packet after it carries the marker. True at first.
    ///
    /// Thread safety: any thread; the I/O thread sees the change at its next frame.
    public var isSending: Bool {
        get { state.isSending }
        set { state.setSending(newValue) }
    }

    /// Sends to the peer at new addresses from now on: the peer moved its media mid-call (a
    /// re-INVITE with a new `c=` or port, as a PBX does when it steps out of the media path).
    /// The I/O thread's sender switches at its next frame, RTCP at the network thread's next
    /// turn, and a source at the new host may take over reception as soon as it has passed
    /// probation, without the usual ``RTPSourceValidator/Configuration/sourceTimeoutMs``.
    ///
    /// - Parameter rtp: where RTP goes.
    /// - Parameter rtcp: where RTCP goes; nil: `rtp` with rtcp-mux, else the next port.
    ///
    /// Thread safety: any thread, one call at a time (the control thread).
    public func retarget(rtp: SocketAddress, rtcp: SocketAddress?) {
        state.peer.publish(rtp: rtp, rtcp: RTPSessionConfiguration.rtcpDestination(rtp: rtp, rtcp: rtcp, mux: configuration.rtcpMux))
    }

    deinit { stop() }

    /// The send path for the I/O thread (once per session).
    ///
    /// - Throws: ``CodecError`` if the codec's configuration is invalid.
    public func makeSender() throws(CodecError) -> RTPSender {
        precondition(!senderMade.exchange(true, ordering: .relaxed), "one sender per session")
        var encoder = try RTPAudioEncoder(configuration: configuration.opus, codec: configuration.codec,
                                         packetizer: RTPPacketizer(payloadType: configuration.payloadType, ssrc: ssrc))
        if let noise = configuration.comfortNoisePayloadType { encoder.sendComfortNoise(payloadType: noise) }
        var sender = RTPSender(encoder: encoder, socket: rtpSocket, destination: configuration.remoteAddress, state: state)
        sender.outgoing = outgoing
        if let events = configuration.telephoneEvents { sender.sendTelephoneEvents(from: keys, format: events) }
        return sender
    }

    /// Queues DTMF keys (`0`-`9`, `*`, `#`, `A`-`D`) to send as telephone events (RFC 4733):
    /// each key's event lasts 100 ms and takes the place of 140 ms of audio (its final packet
    /// goes three times), then 60 ms of audio come before the next key.
    ///
    /// - Throws: ``DTMFError``, queuing nothing, when telephone events were not negotiated, a key
    ///   is not a DTMF key, or the keys do not fit in the queue (64 waiting at most).
    ///
    /// Thread safety: any thread, one call at a time (the control thread).
    public func sendDTMF(_ keys: String) throws(DTMFError) {
        guard configuration.telephoneEvents != nil else { throw .notNegotiated }
        var events: [UInt8] = []
        for key in keys {
            guard let event = TelephoneEvent.event(forKey: key) else { throw .invalidKey(key) }
            events.append(event)
        }
        guard self.keys.count + events.count <= self.keys.capacity else { throw .queueFull }
        for event in events { _ = self.keys.push(event) }
    }

    /// A jitter buffer for the I/O thread, decoding at the call's rate and publishing to ``jitterMonitor``.
    public func makeJitterBuffer(_ jitter: JitterBufferConfiguration? = nil) throws(CodecError) -> JitterBuffer {
        var config = jitter ?? JitterBufferConfiguration()
        config.sampleRate = configuration.opus.sampleRate
        config.channels = configuration.opus.channels
        config.maxPayloadSize = configuration.validator.maxPayloadSize
        return try JitterBuffer(configuration: config, codec: configuration.codec, monitor: jitterMonitor)
    }

    /// The session's statistics now.
    public var statistics: RTPSessionStatistics {
        var s = state.snapshot
        s.ringOverruns = ring.overruns
        return s
    }
}
