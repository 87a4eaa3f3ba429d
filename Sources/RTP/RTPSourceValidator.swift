public import Platform
import Opus

/// Why the network thread dropped a datagram.
///
/// Thread safety: a value type; safe to use from any thread.
public enum RTPDropReason: Int, Sendable, CaseIterable, Codable {
    /// Not a valid RTP packet, an empty or malformed payload for the codec, or a truncated datagram.
    case malformed
    /// A payload type other than the negotiated ones (Opus, and telephone events if negotiated).
    case wrongPayloadType
    /// From an address other than the locked source's, or (before the lock) than the one the
    /// peer's description declared (``RTPSourceValidator/Configuration/expectedSource``).
    case foreignSource
    /// From the locked address with another SSRC.
    case foreignSSRC
    /// From a source still in probation (RFC 3550 A.1).
    case probation
    /// A sequence number too far from the expected one (A.1), until the sender shows it restarted.
    case badSequence
    /// With our own SSRC (RFC 3550 section 8.2): a collision, or our stream looped back.
    case ssrcCollision
}

/// Decides which RTP datagrams reach the jitter buffer (RFC 3550 appendix A.1 and
/// section 8.2), on the network thread.
///
/// - A datagram must parse as RTP version 2 with the expected payload type and a
///   well-formed Opus payload.
/// - With ``Configuration/expectedSource`` (the address the peer's SDP declared), only that
///   address may become a source until ``acceptAnySource()`` (latching, once the SIP dialog is
///   established): RTP from anywhere else is dropped before probation.
/// - The first source (address and SSRC) to send ``RTPSequenceState/minSequential``
///   packets in sequence is **locked**. Candidates in probation sit in a table of 256 slots
///   chosen by a hash of (address, SSRC) seeded per process: interleaved sources do not stall
///   each other, and a flood of new SSRCs pushes a real source out before its next packet
///   only when one of the flood's lands in its slot (at 4 new SSRCs every 20 ms, 1.6 % of the
///   time; it then passes with the next pair).
/// - A datagram with our own SSRC (``localSSRC``) never passes (section 8.2).
/// - After that, datagrams from other addresses or with other SSRCs are dropped and
///   counted. The sender may change its SSRC (a restart): a new SSRC from the locked
///   address takes over once it has passed probation *and* the locked SSRC has been
///   silent for ``Configuration/ssrcChangeHoldoffMs`` (at once after its BYE). Another
///   address takes over only after ``Configuration/sourceTimeoutMs`` of silence, so a
///   flood from elsewhere during a call changes nothing, or at once (after probation) when
///   it is at the host the peer said it moved to (``peerMoved(to:)``).
/// - Within the locked source, A.1's sequence checks apply (large jumps are accepted
///   only once the next packet confirms them).
///
/// Thread safety: a value type; used by the network thread. ``validate(_:from:arrival:)``
/// does not allocate.
public struct RTPSourceValidator: Sendable {
    public struct Configuration: Sendable, Equatable {
        public var payloadType: UInt8
        /// Silence of the locked SSRC after which a new SSRC from the same address takes over.
        public var ssrcChangeHoldoffMs: Int
        /// Silence of the locked source after which another address may take over.
        public var sourceTimeoutMs: Int
        /// Payloads larger than this are dropped as malformed.
        public var maxPayloadSize: Int
        /// The payload type of telephone events (RFC 4733), accepted beside the audio's; nil: none.
        public var telephoneEventPayloadType: UInt8?
        /// The payload type of comfort noise (RFC 3389), accepted beside the audio's; nil: none.
        public var comfortNoisePayloadType: UInt8?
        /// The only address that may become a source until ``RTPSourceValidator/acceptAnySource()``:
        /// where the peer's SDP says its media is. Nil: any address (a bare RTP endpoint).
        public var expectedSource: SocketAddress?
        /// A second address that may: the SDP's port on the host the peer's SIP comes from. A host
        /// with several addresses may declare one and send from another (linphonec declares the
        /// machine's LAN address and sends to a loopback peer from 127.0.0.1).
        public var alternateSource: SocketAddress?
        /// The codec: what a well-formed payload is, and the clock interarrival jitter counts in
        /// (RFC 3550 A.8).
        public var codec = AudioCodec.opus

        public init(payloadType: UInt8 = 96, ssrcChangeHoldoffMs: Int = 100, sourceTimeoutMs: Int = 2000,
                    maxPayloadSize: Int = 1500) {
            self.payloadType = payloadType
            self.ssrcChangeHoldoffMs = ssrcChangeHoldoffMs
            self.sourceTimeoutMs = sourceTimeoutMs
            self.maxPayloadSize = maxPayloadSize
        }
    }

    /// The outcome for one datagram.
    public enum Verdict: Sendable, Equatable {
        /// Pass `packet` on, with the payload at `payload` in the datagram.
        case accept(RTPReceivedPacket, payload: Range<Int>)
        case drop(RTPDropReason)
    }

    private struct Candidate: Sendable {
        var source: SocketAddress
        var ssrc: UInt32
        var sequence: RTPSequenceState
        var lastSeen: UInt64
    }

    public let configuration: Configuration
    /// The locked source's address.
    public private(set) var source: SocketAddress?
    /// The locked source's SSRC.
    public private(set) var ssrc: UInt32?
    /// The locked source's sequence state (A.1, A.3).
    public private(set) var sequence: RTPSequenceState?
    /// The locked source's interarrival jitter (A.8).
    public private(set) var jitter = RTPInterarrivalJitter()
    /// Increments at each lock and each change of source.
    public private(set) var generation: UInt32 = 0
    /// Datagrams dropped, by reason.
    public private(set) var drops = [Int](repeating: 0, count: RTPDropReason.allCases.count)
    /// Datagrams passed on.
    public private(set) var accepted = 0
    private var lastSeen: UInt64 = 0
    private var byeReceived = false
    /// The host the peer said it moved to (``peerMoved(to:)``), until a source there is locked
    /// or 5 s after the first packet seen since (a peer that moved only its receive port keeps
    /// sending from where it was, and the announcement must not stay open all call).
    private var movedTo: SocketAddress?
    private var movedSince: UInt64?
    private var candidates = [Candidate?](repeating: nil, count: Self.candidateSlots)
    private static let candidateSlots = 256
    /// The address that may become a source before ``acceptAnySource()``; nil: any.
    public private(set) var expectedSource: SocketAddress?
    private var alternateSource: SocketAddress?
    /// Our own SSRC: datagrams that carry it are collisions (RFC 3550 section 8.2).
    public var localSSRC: UInt32?

    public init(configuration: Configuration = .init()) {
        self.configuration = configuration
        expectedSource = configuration.expectedSource
        alternateSource = configuration.alternateSource
    }

    /// Whether any address may become a source (no expected source, or ``acceptAnySource()``).
    public var acceptsAnySource: Bool { expectedSource == nil }

    /// Lets any address become a source from now on: latching (symmetric RTP), once the SIP
    /// dialog is established.
    public mutating func acceptAnySource() {
        expectedSource = nil
        alternateSource = nil
    }

    /// Datagrams dropped for `reason`.
    public func dropped(_ reason: RTPDropReason) -> Int { drops[reason.rawValue] }

    /// Checks one datagram that arrived from `address` at `arrival` (monotonic nanoseconds).
    public mutating func validate(_ datagram: UnsafeRawBufferPointer, from address: SocketAddress, arrival: UInt64) -> Verdict {
        let verdict = check(datagram, from: address, arrival: arrival)
        switch verdict {
        case .accept: accepted += 1
        case .drop(let reason): recordDrop(reason)
        }
        return verdict
    }

    /// Counts a datagram the caller dropped without validating it, for `reason`: the network
    /// thread drops a truncated datagram (its tail is lost) as ``RTPDropReason/malformed``.
    public mutating func recordDrop(_ reason: RTPDropReason) { drops[reason.rawValue] += 1 }

    private mutating func check(_ datagram: UnsafeRawBufferPointer, from address: SocketAddress, arrival: UInt64) -> Verdict {
        guard let packet = try? RTPPacket.parse(datagram) else { return .drop(.malformed) }
        let header = packet.header
        let isEvent = header.payloadType == configuration.telephoneEventPayloadType
        let isNoise = header.payloadType == configuration.comfortNoisePayloadType
        guard header.payloadType == configuration.payloadType || isEvent || isNoise else { return .drop(.wrongPayloadType) }
        let payload = UnsafeRawBufferPointer(rebasing: datagram[packet.payload])
        let wellFormed = isEvent ? TelephoneEvent.parse(payload) != nil
            : isNoise ? ComfortNoisePayload.level(payload) != nil : configuration.codec.isWellFormed(payload)
        guard payload.count <= configuration.maxPayloadSize, wellFormed else { return .drop(.malformed) }

        if movedTo != nil {
            let since = movedSince ?? arrival
            movedSince = since
            if arrival &- since > 5_000_000_000 { movedTo = nil }
        }
        if let lockedSource = source, let lockedSSRC = ssrc, address == lockedSource, header.ssrc == lockedSSRC {
            guard sequence!.update(header.sequenceNumber) else { return .drop(.badSequence) }
            return accept(header, payload: packet.payload, arrival: arrival, isEvent: isEvent, isNoise: isNoise)
        }
        // Only the locked source and the expected address may go further; never our own SSRC.
        if let expectedSource, address != expectedSource, address != alternateSource, address != source {
            return .drop(.foreignSource)
        }
        if header.ssrc == localSSRC { return .drop(.ssrcCollision) }

        // Not the locked source: a candidate, which may take over if it is allowed to.
        let silence = source == nil ? UInt64.max : arrival &- lastSeen
        let sameAddress = source.map { $0 == address } ?? false
        let holdoff = UInt64(sameAddress ? configuration.ssrcChangeHoldoffMs : configuration.sourceTimeoutMs) * 1_000_000
        let announced = movedTo.map { address.sameHost(as: $0) } ?? false
        let mayTakeOver = source == nil || silence >= holdoff || (sameAddress && byeReceived) || announced
        let passed = probe(address: address, ssrc: header.ssrc, sequenceNumber: header.sequenceNumber, arrival: arrival)
        guard let passed else {
            if source == nil || mayTakeOver { return .drop(.probation) }
            return .drop(sameAddress ? .foreignSSRC : .foreignSource)
        }
        guard mayTakeOver else { return .drop(sameAddress ? .foreignSSRC : .foreignSource) }
        lock(address: address, ssrc: header.ssrc, slot: passed)
        return accept(header, payload: packet.payload, arrival: arrival, isEvent: isEvent, isNoise: isNoise)
    }

    /// Runs A.1 probation for a candidate; its slot once it is valid, else nil.
    private mutating func probe(address: SocketAddress, ssrc: UInt32, sequenceNumber: UInt16, arrival: UInt64) -> Int? {
        let i = slot(address, ssrc)
        if !holds(i, address, ssrc) {
            candidates[i] = Candidate(source: address, ssrc: ssrc,
                                      sequence: RTPSequenceState(firstSequence: sequenceNumber), lastSeen: arrival)
        }
        candidates[i]!.lastSeen = arrival
        return candidates[i]!.sequence.update(sequenceNumber) ? i : nil
    }

    /// The candidate slot of (address, SSRC): the one of its two slots that holds it, else
    /// an empty one, else the one seen least recently. Two distinct slots per candidate keep
    /// two interleaved candidates from evicting each other; `Hasher` is seeded per process, so
    /// a sender cannot choose SSRCs that land on another's slots.
    private func slot(_ address: SocketAddress, _ ssrc: UInt32) -> Int {
        var hasher = Hasher()
        hasher.combine(address)
        hasher.combine(ssrc)
        let hash = UInt(bitPattern: hasher.finalize())
        let slots = UInt(Self.candidateSlots)
        let first = Int(hash % slots)
        let second = Int((UInt(first) + 1 + (hash / slots) % (slots - 1)) % slots)
        if holds(first, address, ssrc) { return first }
        if holds(second, address, ssrc) { return second }
        guard let a = candidates[first] else { return first }
        guard let b = candidates[second] else { return second }
        return a.lastSeen <= b.lastSeen ? first : second
    }

    private func holds(_ i: Int, _ address: SocketAddress, _ ssrc: UInt32) -> Bool {
        candidates[i]?.source == address && candidates[i]?.ssrc == ssrc
    }

    private mutating func lock(address: SocketAddress, ssrc newSSRC: UInt32, slot i: Int) {
        source = address
        ssrc = newSSRC
        sequence = candidates[i]!.sequence
        jitter = RTPInterarrivalJitter()
        generation &+= 1
        byeReceived = false
        movedTo = nil
        movedSince = nil
        for j in candidates.indices { candidates[j] = nil }
    }

    private mutating func accept(_ header: RTPHeader, payload: Range<Int>, arrival: UInt64, isEvent: Bool, isNoise: Bool) -> Verdict {
        lastSeen = arrival
        // An event's packets all carry its start time: they would read as growing delay (A.8).
        if !isEvent {
            let arrivalUnits = RTPClock.rtpUnits(nanoseconds: arrival, rate: configuration.codec.rtpClockRate)
            jitter.update(arrival: arrivalUnits, timestamp: header.timestamp)
        }
        let packet = RTPReceivedPacket(sequenceNumber: sequence!.extended(header.sequenceNumber),
                                       timestamp: header.timestamp, marker: header.marker, ssrc: header.ssrc,
                                       arrival: arrival, sourceGeneration: generation, isTelephoneEvent: isEvent,
                                       isComfortNoise: isNoise)
        return .accept(packet, payload: payload)
    }

    /// Whether RTCP from `address` about `senderSSRC` comes from the locked source: its SSRC,
    /// from its host (RTCP uses another port). While only the expected address may send, as
    /// strictly as RTP: from the source's own port (rtcp-mux), the next one, or `peerRTCP`
    /// (the RTCP address the peer declared).
    public func acceptsRTCP(from address: SocketAddress, senderSSRC: UInt32, peerRTCP: SocketAddress? = nil) -> Bool {
        guard let source, let ssrc, senderSSRC == ssrc else { return false }
        guard expectedSource != nil else { return address.sameHost(as: source) }
        return address == source || address == source.with(port: source.port &+ 1) || address == peerRTCP
    }

    /// The locked source said BYE: a new SSRC from its address may take over at once.
    public mutating func goodbye() { byeReceived = true }

    /// The peer moved its media to `address` (signalled, for example by a re-INVITE): a source
    /// at that host takes over as soon as it passes probation, without waiting for the locked
    /// source to fall silent. Sources elsewhere still wait.
    public mutating func peerMoved(to address: SocketAddress) {
        movedTo = address
        movedSince = nil
        if expectedSource != nil {
            expectedSource = address
            alternateSource = nil
        }
    }

    /// Takes the fraction lost since the last call (A.3), for a report block.
    public mutating func takeFractionLost() -> UInt8 { sequence?.takeFractionLost() ?? 0 }
}
