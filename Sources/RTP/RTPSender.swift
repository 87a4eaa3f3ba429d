public import Platform

public import Opus

/// Turns RTCP loss reports into the encoder's expected-loss setting
/// (`OPUS_SET_PACKET_LOSS_PERC`).
///
/// Each report's fraction lost is averaged with the previous estimate (reports come
/// every few seconds). The setting is 0 while no loss is seen (no in-band FEC: all
/// bits go to the audio), and a tenth of the loss otherwise, at least 1 %. The
/// setting switches FEC on and sets its strength, which libopus pays for with the
/// primary encoding's bits; measured with libopus 1.3.1 (PESQ-WB, two speech files,
/// 24 and 32 kb/s, 5 % and 10 % random loss) 1 % beats 3, 5 and 10 % every time, so
/// the setting grows much more slowly than the loss (see `Docs/rtp.md`).
///
/// Thread safety: a value type.
public struct ExpectedLossEstimator: Sendable, Equatable {
    /// The smoothed fraction lost, 0 ... 1; nil before the first report.
    public private(set) var smoothed: Double?

    public init() {}

    /// Accounts for a report's fraction lost (in 1/256) and returns the new setting in percent.
    public mutating func update(fractionLost: UInt8) -> Int {
        let reported = Double(fractionLost) / 256
        let value = smoothed.map { 0.5 * $0 + 0.5 * reported } ?? reported
        smoothed = value
        return Self.setting(forLoss: value)
    }

    /// The encoder setting for a loss fraction: 0 below 0.5 %, else a tenth of the loss
    /// in percent, rounded, at least 1.
    public static func setting(forLoss fraction: Double) -> Int {
        guard fraction >= 0.005 else { return 0 }
        return max(1, Int((fraction * 10).rounded()))
    }
}

/// Encodes frames with the call's codec and wraps them in RTP (RFC 7587 for Opus, RFC 3551
/// for G.722 and G.711): the send side of a call without the socket.
///
/// Frames come at the call's rate (`OpusCallConfiguration.sampleRate`) and length
/// (`OpusCallConfiguration.frameMilliseconds`, the packet time, whatever the codec); G.711 and
/// G.722 resample them to 8 or 16 kHz. Opus frames whose packet is 2 bytes or less are DTX and
/// are not sent: the timestamp moves on and the next packet carries the marker bit.
///
/// Thread safety: not thread-safe; owned by the sending (I/O) thread.
/// ``encode(_:into:)`` does not allocate (real-time safe).
public struct RTPAudioEncoder: ~Copyable {
    public let configuration: OpusCallConfiguration
    /// The codec the packets carry.
    public let codec: AudioCodec
    private var encoder: PayloadEncoder
    public private(set) var packetizer: RTPPacketizer
    private let packet: UnsafeMutableRawBufferPointer
    /// The expected loss the encoder plans for now, in percent.
    public private(set) var expectedLossPercent: Int
    /// The encoder's lookahead (the delay it adds), in frames per channel.
    public let lookaheadFrames: Int
    /// Whether the encoder codes in-band FEC now (Opus, configured, and the expected loss above 0).
    public var codesFEC: Bool { codec == .opus && configuration.inbandFEC && expectedLossPercent > 0 }
    /// RTP timestamp units one frame advances the clock by, in the codec's clock.
    public let timestampIncrement: Int
    private var lossEstimator: ExpectedLossEstimator
    /// G.711 and G.722 with DTX and a peer that takes comfort noise: the silences and the
    /// payload type of their descriptors (``sendComfortNoise(payloadType:)``).
    private var silence: (suppressor: SilenceSuppressor, payloadType: UInt8)?

    /// Creates the encoder. Allocates: call off the real-time thread.
    ///
    /// - Throws: ``CodecError`` when the configuration is invalid, or G.711 or G.722 is asked for in stereo.
    public init(configuration: OpusCallConfiguration, codec: AudioCodec = .opus, packetizer: RTPPacketizer) throws(CodecError) {
        self.configuration = configuration
        self.codec = codec
        encoder = try PayloadEncoder(codec: codec, configuration: configuration)
        lookaheadFrames = encoder.lookahead
        timestampIncrement = codec.rtpClockRate * configuration.frameMilliseconds / 1000
        self.packetizer = packetizer
        packet = .allocate(byteCount: OpusEncoder.maxPacketBytes, alignment: 16)
        expectedLossPercent = configuration.initialExpectedLossPercent
        lossEstimator = ExpectedLossEstimator()
    }

    deinit { packet.deallocate() }

    /// Sends with `ssrc` from the next packet on (after a collision).
    mutating func changeSSRC(_ ssrc: UInt32) { packetizer.ssrc = ssrc }

    /// Bytes a datagram buffer needs for any packet (Opus's largest; G.711's 120 ms is 960).
    public static var maxDatagramSize: Int { RTPHeader.fixedSize + OpusEncoder.maxPacketBytes }

    /// Encodes one frame (`OpusCallConfiguration/framesPerPacket` frames, interleaved)
    /// and writes the RTP datagram.
    ///
    /// - Returns: the datagram's length, or 0 for a DTX frame (nothing to send).
    public mutating func encode(_ pcm: UnsafeBufferPointer<Int16>, into datagram: UnsafeMutableRawBufferPointer) throws(CodecError) -> Int {
        if silence != nil {
            switch silence!.suppressor.decide(pcm) {
            case .speech:
                break
            case .skip:
                packetizer.skip(duration: timestampIncrement)
                return 0
            case .descriptor(let level):
                do {
                    return try packetizer.writeDescriptor(level: level, duration: timestampIncrement,
                                                          payloadType: silence!.payloadType, into: datagram)
                } catch {
                    throw .unsupported("a datagram buffer of \(datagram.count) bytes")
                }
            }
        }
        let n = try encoder.encode(pcm, into: packet)
        if n <= 2 && configuration.dtx && codec == .opus {
            packetizer.skip(duration: timestampIncrement)
            return 0
        }
        do {
            return try packetizer.write(payload: UnsafeRawBufferPointer(rebasing: packet[0..<n]), duration: timestampIncrement,
                                        into: datagram)
        } catch {
            throw .unsupported("a datagram buffer of \(datagram.count) bytes")
        }
    }

    /// Sends silences as comfort noise (RFC 3389) under `payloadType`, the one the peer gave
    /// `CN/8000`: with `Opus/OpusCallConfiguration/dtx` on and G.711 or G.722 (Opus has DTX of its
    /// own); otherwise nothing changes. See ``SilenceSuppressor``.
    public mutating func sendComfortNoise(payloadType: UInt8) {
        guard configuration.dtx, codec != .opus, configuration.channels == 1 else { return }
        silence = (SilenceSuppressor(), payloadType)
    }

    /// Whether silences go as comfort noise (``sendComfortNoise(payloadType:)`` took effect).
    public var sendsComfortNoise: Bool { silence != nil }

    /// Feeds a receiver report's fraction lost (1/256 units) to the encoder's expected
    /// loss (see ``ExpectedLossEstimator``). Does nothing when FEC is off or the codec has none.
    public mutating func receiverReported(fractionLost: UInt8) {
        guard configuration.inbandFEC, codec == .opus else { return }
        let percent = lossEstimator.update(fractionLost: fractionLost)
        guard percent != expectedLossPercent else { return }
        if (try? encoder.setExpectedPacketLoss(percent: percent)) != nil { expectedLossPercent = percent }
    }

    /// Writes `packet` (a telephone event) in place of a frame's audio: the audio's clock moves on
    /// by the frame, and the next audio packet carries the marker.
    public mutating func writeEvent(_ packet: TelephoneEventSender.Packet, payloadType: UInt8,
                                    into datagram: UnsafeMutableRawBufferPointer) throws(RTPWriteError) -> Int {
        let n = try packetizer.writeEvent(packet.event, timestamp: packet.timestamp, marker: packet.marker,
                                          payloadType: payloadType, into: datagram)
        packetizer.skip(duration: timestampIncrement)
        return n
    }

    /// Lets one frame's time pass without a packet (sending is paused): the timestamp moves
    /// on, and the next packet carries the marker, as after DTX.
    public mutating func skipFrame() {
        packetizer.skip(duration: timestampIncrement)
    }

    /// Lets `frames` frames' time pass at once (the audio was stopped): as many ``skipFrame()``.
    public mutating func skipFrames(_ frames: Int) {
        packetizer.skip(duration: max(0, frames) &* timestampIncrement)
    }

    /// Changes Opus's bitrate (for example after an answer's `maxaveragebitrate`).
    ///
    /// - Throws: ``CodecError/unsupported(_:)`` for G.711 and G.722, which have one rate.
    public func setBitrate(_ bitsPerSecond: Int) throws(CodecError) { try encoder.setBitrate(bitsPerSecond) }
}

/// What ``RTPSender/send(_:now:)`` did.
public enum RTPSendOutcome: Sendable, Equatable {
    /// A datagram of this many bytes went out.
    case sent(Int)
    /// A DTX frame: nothing to send.
    case silent
    /// Sending is paused (the peer does not receive: hold): nothing was encoded or sent.
    case paused
    /// The socket refused it (full buffer or an error); the frame is lost.
    case dropped
    /// The media is encrypted and its keys do not exist yet (a DTLS handshake under way): nothing was sent.
    case awaitingKeys
}

/// The send path of a call, for the I/O thread: encode, packetize, send without blocking.
///
/// Thread safety: not thread-safe; owned by the I/O thread. ``send(_:now:)`` and
/// ``send(period:now:)`` do not allocate, lock or block (real-time safe). Use one of the two for
/// a stream: a whole frame sent while ``send(period:now:)`` holds part of one goes out first.
public struct RTPSender: ~Copyable {
    private var encoder: RTPAudioEncoder
    private let socket: UDPSocket
    private var destination: SocketAddress
    /// The last ``PeerAddressMailbox`` write this sender follows.
    private var peerVersion = 0
    private let state: RTPSessionState?
    private let datagram: UnsafeMutableRawBufferPointer
    private var reportsSeen = 0
    /// The codec frame being filled from periods (``send(period:now:)``), and how much of it is.
    private let frame: UnsafeMutableBufferPointer<Int16>
    private var frameFill = 0
    /// Where keys come from, their payload type and the event schedule; nil: none negotiated.
    private var telephoneEvents: (keys: TelephoneEventQueue, payloadType: UInt8, sender: TelephoneEventSender)?
    /// With SRTP: datagrams go to the network thread, which protects and sends them.
    var outgoing: OutgoingDatagrams?

    /// Creates a send path that sends to `destination` through `socket`; `state`
    /// receives the counters for sender reports and supplies RTCP loss reports.
    public init(encoder: consuming RTPAudioEncoder, socket: UDPSocket, destination: SocketAddress, state: RTPSessionState? = nil) {
        frame = .allocate(capacity: encoder.configuration.framesPerPacket * encoder.configuration.channels)
        self.encoder = encoder
        self.socket = socket
        self.destination = destination
        self.state = state
        datagram = .allocate(byteCount: RTPAudioEncoder.maxDatagramSize, alignment: 16)
        frame.initialize(repeating: 0)
    }

    /// Sends the keys `queue` gets as telephone events in `format`, in place of audio.
    public mutating func sendTelephoneEvents(from queue: TelephoneEventQueue, format: TelephoneEventFormat) {
        telephoneEvents = (queue, format.payloadType,
                           TelephoneEventSender(frameDuration: encoder.configuration.timestampIncrement, clockRate: format.clockRate))
    }

    deinit {
        datagram.deallocate()
        frame.deallocate()
    }

    /// The SSRC this stream sends with.
    public var ssrc: UInt32 { encoder.packetizer.ssrc }

    /// The encoder's current expected loss in percent.
    public var expectedLossPercent: Int { encoder.expectedLossPercent }

    /// The encoder's lookahead (the delay it adds), in frames per channel.
    public var lookaheadFrames: Int { encoder.lookaheadFrames }

    /// Takes a period of any length (an I/O period need not be a codec frame; interleaved
    /// samples when the codec runs in stereo) and sends each
    /// codec frame it completes, as ``send(_:now:)`` does; the rest waits for the next period.
    /// `now` is the monotonic time in nanoseconds.
    /// - Returns: how many codec frames this period completed.
    @discardableResult
    public mutating func send(period pcm: UnsafeBufferPointer<Int16>, now: UInt64) -> Int {
        var offset = 0, completed = 0
        while offset < pcm.count {
            let n = min(frame.count - frameFill, pcm.count - offset)
            _ = UnsafeMutableBufferPointer(rebasing: frame[frameFill..<(frameFill + n)])
                .update(fromContentsOf: UnsafeBufferPointer(rebasing: pcm[offset..<(offset + n)]))
            frameFill += n
            offset += n
            if frameFill == frame.count {
                _ = send(UnsafeBufferPointer(frame), now: now)
                frameFill = 0
                completed += 1
            }
        }
        return completed
    }

    /// Forgets a codec frame that ``send(period:now:)`` had begun (the audio stopped and starts again).
    public mutating func discardPartialFrame() { frameFill = 0 }

    /// The audio was stopped for `nanoseconds` (a hold): the timestamp moves on by the frames
    /// that time held, and the next packet carries the marker (RFC 3550 section 5.1), so the
    /// peer's jitter buffer places what follows after the gap rather than right after the
    /// last packet.
    public mutating func skip(nanoseconds: UInt64) {
        let frameNanoseconds = UInt64(encoder.configuration.frameMilliseconds) * 1_000_000
        encoder.skipFrames(Int(min(nanoseconds / frameNanoseconds, UInt64(Int32.max))))
    }

    /// Encodes and sends one codec frame; `now` is the monotonic time in nanoseconds.
    public mutating func send(_ pcm: UnsafeBufferPointer<Int16>, now: UInt64) -> RTPSendOutcome {
        if let state {
            if let moved = state.peer.read(newerThan: &peerVersion) { destination = moved.rtp }
            let ssrc = state.localSSRC
            if ssrc != 0, ssrc != encoder.packetizer.ssrc { encoder.changeSSRC(ssrc) }
            let (serial, fraction) = state.latestLossReport()
            if serial != reportsSeen {
                reportsSeen = serial
                encoder.receiverReported(fractionLost: fraction)
                state.setExpectedLoss(encoder.expectedLossPercent)
            }
        }
        if let state, !state.isSending {
            encoder.skipFrame()
            return .paused
        }
        let timestamp = encoder.packetizer.timestamp, withFEC = encoder.codesFEC
        if let keys = telephoneEvents?.keys, let packet = telephoneEvents?.sender.nextFrame(timestamp: timestamp, queue: keys),
           let payloadType = telephoneEvents?.payloadType {
            // A key is being sent: its event instead of this frame's audio (RFC 4733 section 2.5.1).
            guard let n = try? encoder.writeEvent(packet, payloadType: payloadType, into: datagram) else { return .dropped }
            state?.recordFrame(timestamp: timestamp, at: now, withFEC: false)
            return transmit(n)
        }
        guard let n = try? encoder.encode(pcm, into: datagram) else { return .dropped }
        state?.recordFrame(timestamp: timestamp, at: now, withFEC: withFEC)
        guard n > 0 else { return .silent }
        return transmit(n)
    }

    private func transmit(_ n: Int) -> RTPSendOutcome {
        let bytes = UnsafeRawBufferPointer(rebasing: datagram[0..<n])
        if let outgoing {
            guard state?.isKeyed ?? true else { return .awaitingKeys }
            guard outgoing.push(bytes, to: destination) else {
                state?.recordSendFailure()
                return .dropped
            }
        } else if socket.send(bytes, to: destination) != .sent {
            state?.recordSendFailure()
            return .dropped
        }
        state?.recordSent(payloadBytes: n - RTPHeader.fixedSize)
        return .sent(n)
    }
}
