import Platform
import SRTP

/// Counters and measurements of an RTP session, shared between the I/O thread (which
/// sends), the network thread (which receives and runs RTCP) and anyone reading
/// statistics.
///
/// Each value is an atomic cell; writers are fixed: the send counters and the frame
/// clock by the sender, everything else by the network thread.
///
/// Thread safety: safe from any thread; no method allocates, locks or blocks.
public final class RTPSessionState: Sendable {
    enum Cell: Int, CaseIterable {
        case packetsSent, octetsSent, sendFailures, lastFrameTimestamp, lastFrameTime, framesEncoded, framesEncodedWithFEC
        case lossReportSerial, lossReportFraction, expectedLossPercent
        case malformed, wrongPayloadType, foreignSource, foreignSSRC, probation, badSequence
        case sourceChanges, packetsExpected, packetsReceived, cumulativeLost, jitterUnits
        case rtcpSent, rtcpReceived, rtcpDropped, rttMicroseconds
        case remoteFractionLost, remoteCumulativeLost, remoteJitterUnits, remoteReports
        case sendingPaused
        case ssrcCollision, localSSRC, localSSRCChanges, lastPeerActivity, acceptAnySource
        case srtpProtected, srtpUnprotected, srtpAuthenticationFailures, srtpReplays, srtpDropped
        case srtpProfile, srtpKeyed, dtlsState, dtlsHandshakeMicroseconds
    }

    private let cells = AtomicCells(count: Cell.allCases.count)
    /// Where the peer receives, when a re-INVITE moves it mid-call (``RTPSession/retarget(rtp:rtcp:)``).
    let peer = PeerAddressMailbox()

    /// The codec's RTP clock rate, in Hz: the unit of the jitters.
    public let clockRate: Int

    public init(initialExpectedLossPercent: Int = 0, clockRate: Int = 48000) {
        self.clockRate = clockRate
        cells.store(Cell.rttMicroseconds.rawValue, -1)
        cells.store(Cell.expectedLossPercent.rawValue, initialExpectedLossPercent)
    }

    @inline(__always) func int(_ c: Cell) -> Int { cells.int(c.rawValue) }
    @inline(__always) func set(_ c: Cell, _ v: Int) { cells.store(c.rawValue, v) }
    @inline(__always) func add(_ c: Cell, _ v: Int = 1) { cells.add(c.rawValue, v) }

    // MARK: Sender side (I/O thread)

    /// Whether ``RTPSender`` sends RTP: false while the peer does not receive (it put the call
    /// on hold, or its description says `sendonly` or `inactive`). RTCP goes on either way.
    /// Any thread (an atomic); the sender sees a change at its next frame.
    public var isSending: Bool { int(.sendingPaused) == 0 }

    /// Sets ``isSending``. Any thread.
    public func setSending(_ sending: Bool) { set(.sendingPaused, sending ? 0 : 1) }

    func recordFrame(timestamp: UInt32, at time: UInt64, withFEC: Bool) {
        // Time first, then the timestamp with release: a reader that acquires the
        // timestamp sees a time at least as new (close enough for a sender report).
        set(.lastFrameTime, Int(truncatingIfNeeded: time))
        cells.storeReleasing(Cell.lastFrameTimestamp.rawValue, Int(timestamp))
        add(.framesEncoded)
        if withFEC { add(.framesEncodedWithFEC) }
    }

    func recordSent(payloadBytes: Int) {
        add(.packetsSent)
        add(.octetsSent, payloadBytes)
    }

    func recordSendFailure() { add(.sendFailures) }

    /// The SSRC we send with: it changes after a collision (RFC 3550 section 8.2). One atomic
    /// load, for the sender at each frame.
    public var localSSRC: UInt32 { UInt32(truncatingIfNeeded: cells.loadAcquiring(Cell.localSSRC.rawValue)) }

    func setLocalSSRC(_ ssrc: UInt32) { cells.storeReleasing(Cell.localSSRC.rawValue, Int(ssrc)) }

    func setExpectedLoss(_ percent: Int) { set(.expectedLossPercent, percent) }

    /// Whether SRTP keys exist: with encryption, the sender queues nothing before.
    var isKeyed: Bool { cells.loadAcquiring(Cell.srtpKeyed.rawValue) != 0 }
    func setKeyed() { cells.storeReleasing(Cell.srtpKeyed.rawValue, 1) }

    /// The newest receiver report about our stream: its serial number (0: none yet) and fraction lost.
    func latestLossReport() -> (serial: Int, fraction: UInt8) {
        let serial = cells.loadAcquiring(Cell.lossReportSerial.rawValue)
        return (serial, UInt8(truncatingIfNeeded: int(.lossReportFraction)))
    }

    // MARK: Network side

    /// When the peer was last heard (RTP from its source, or RTCP accepted from it), in
    /// monotonic nanoseconds; nil while it has not been. Any thread.
    public var lastPeerActivity: UInt64? {
        let t = int(.lastPeerActivity)
        return t == 0 ? nil : UInt64(truncatingIfNeeded: t)
    }

    func peerHeard(at time: UInt64) { set(.lastPeerActivity, Int(truncatingIfNeeded: time)) }

    /// Whether the control thread has let any address become the source (``RTPSession/acceptAnySource()``).
    var acceptsAnySource: Bool { int(.acceptAnySource) != 0 }
    func setAcceptsAnySource() { set(.acceptAnySource, 1) }

    func publishLossReport(fraction: UInt8) {
        set(.lossReportFraction, Int(fraction))
        cells.storeReleasing(Cell.lossReportSerial.rawValue, int(.lossReportSerial) + 1)
    }

    /// The last frame's RTP timestamp and monotonic time, for a sender report.
    func lastFrame() -> (timestamp: UInt32, time: UInt64, frames: Int) {
        let ts = UInt32(truncatingIfNeeded: cells.loadAcquiring(Cell.lastFrameTimestamp.rawValue))
        return (ts, UInt64(truncatingIfNeeded: int(.lastFrameTime)), int(.framesEncoded))
    }
}

/// A snapshot of an RTP session's statistics.
///
/// Thread safety: a value type; safe to use from any thread.
public struct RTPSessionStatistics: Sendable, Equatable, Codable {
    // Sending.
    public var packetsSent = 0
    public var octetsSent = 0
    /// Datagrams the socket refused (full buffer or error).
    public var sendFailures = 0
    /// The encoder's expected loss now, in percent (fed from receiver reports).
    public var expectedLossPercent = 0
    /// Frames encoded, sent or not (DTX), and those of them coded with in-band FEC on
    /// (expected loss above 0: before the first receiver report, and while the peer reports loss).
    public var framesEncoded = 0
    public var framesEncodedWithFEC = 0
    // Receiving, from the locked source (RFC 3550 A.1, A.3, A.8).
    /// Datagrams passed to the jitter buffer.
    public var packetsReceived = 0
    public var packetsExpected = 0
    /// Cumulative packets lost (expected minus received).
    public var packetsLost = 0
    /// Interarrival jitter in milliseconds.
    public var jitterMs = 0.0
    /// Times a new source was locked.
    public var sourceChanges = 0
    // Dropped on the network thread, never passed on.
    public var droppedMalformed = 0
    public var droppedWrongPayloadType = 0
    public var droppedForeignSource = 0
    public var droppedForeignSSRC = 0
    public var droppedProbation = 0
    public var droppedBadSequence = 0
    /// Datagrams with our own SSRC (RFC 3550 section 8.2), and the times we changed ours for one.
    public var droppedSSRCCollision = 0
    public var localSSRCChanges = 0
    /// Packets dropped because the I/O thread did not keep up.
    public var ringOverruns = 0
    // RTCP.
    public var rtcpSent = 0
    public var rtcpReceived = 0
    /// Compound packets that failed validation or came from elsewhere.
    public var rtcpDropped = 0
    /// Round-trip time from the last report block about our stream, if any.
    public var rttMs: Double?
    /// The peer's last report about our stream.
    public var remoteFractionLost = 0.0
    public var remoteCumulativeLost = 0
    public var remoteJitterMs = 0.0
    public var remoteReports = 0
    // SRTP and SRTCP (zero in clear).
    /// Packets protected before sending (the sender's RTP and the network thread's RTCP).
    public var srtpProtected = 0
    /// Packets that authenticated and were decrypted.
    public var srtpUnprotected = 0
    /// Packets whose authentication tag did not verify: dropped before any parsing.
    public var srtpAuthenticationFailures = 0
    /// Packets seen before (or older than the replay window): dropped.
    public var srtpReplays = 0
    /// Packets dropped otherwise: before the keys exist (DTLS), from an SSRC past the stream
    /// limit, or too short to be SRTP.
    public var srtpDropped = 0
    /// The SRTP profile in use (`AES_CM_128_HMAC_SHA1_80`); nil in clear and before DTLS keys.
    public var srtpProfile: String?
    /// Where the DTLS-SRTP handshake is, and how long it took once established.
    public var dtls: DTLSState = .none
    public var dtlsHandshakeMs: Double?

    public init() {}

    /// Every datagram dropped on the network thread.
    public var droppedTotal: Int {
        droppedMalformed + droppedWrongPayloadType + droppedForeignSource + droppedForeignSSRC + droppedProbation
            + droppedBadSequence + droppedSSRCCollision + srtpAuthenticationFailures + srtpReplays + srtpDropped
    }

    enum CodingKeys: String, CodingKey {
        case packetsSent = "packets_sent", octetsSent = "octets_sent", sendFailures = "send_failures",
             expectedLossPercent = "expected_loss_percent", framesEncoded = "frames_encoded",
             framesEncodedWithFEC = "frames_encoded_with_fec", packetsReceived = "packets_received",
             packetsExpected = "packets_expected", packetsLost = "packets_lost", jitterMs = "jitter_ms",
             sourceChanges = "source_changes", droppedMalformed = "dropped_malformed",
             droppedWrongPayloadType = "dropped_wrong_payload_type", droppedForeignSource = "dropped_foreign_source",
             droppedForeignSSRC = "dropped_foreign_ssrc", droppedProbation = "dropped_probation",
             droppedBadSequence = "dropped_bad_sequence", droppedSSRCCollision = "dropped_ssrc_collision",
             localSSRCChanges = "local_ssrc_changes", ringOverruns = "ring_overruns", rtcpSent = "rtcp_sent",
             rtcpReceived = "rtcp_received", rtcpDropped = "rtcp_dropped", rttMs = "rtt_ms",
             remoteFractionLost = "remote_fraction_lost", remoteCumulativeLost = "remote_cumulative_lost",
             remoteJitterMs = "remote_jitter_ms", remoteReports = "remote_reports",
             srtpProtected = "srtp_protected", srtpUnprotected = "srtp_unprotected",
             srtpAuthenticationFailures = "srtp_authentication_failures", srtpReplays = "srtp_replays",
             srtpDropped = "srtp_dropped", srtpProfile = "srtp_profile", dtls = "dtls",
             dtlsHandshakeMs = "dtls_handshake_ms"
    }
}

extension RTPSessionState {
    /// The statistics now.
    public var snapshot: RTPSessionStatistics {
        var s = RTPSessionStatistics()
        s.packetsSent = int(.packetsSent)
        s.octetsSent = int(.octetsSent)
        s.sendFailures = int(.sendFailures)
        s.expectedLossPercent = int(.expectedLossPercent)
        s.framesEncoded = int(.framesEncoded)
        s.framesEncodedWithFEC = int(.framesEncodedWithFEC)
        s.packetsReceived = int(.packetsReceived)
        s.packetsExpected = int(.packetsExpected)
        s.packetsLost = int(.cumulativeLost)
        s.jitterMs = Double(int(.jitterUnits)) * 1000 / Double(clockRate)
        s.sourceChanges = int(.sourceChanges)
        s.droppedMalformed = int(.malformed)
        s.droppedWrongPayloadType = int(.wrongPayloadType)
        s.droppedForeignSource = int(.foreignSource)
        s.droppedForeignSSRC = int(.foreignSSRC)
        s.droppedProbation = int(.probation)
        s.droppedBadSequence = int(.badSequence)
        s.droppedSSRCCollision = int(.ssrcCollision)
        s.localSSRCChanges = int(.localSSRCChanges)
        s.rtcpSent = int(.rtcpSent)
        s.rtcpReceived = int(.rtcpReceived)
        s.rtcpDropped = int(.rtcpDropped)
        let rtt = int(.rttMicroseconds)
        s.rttMs = rtt < 0 ? nil : Double(rtt) / 1000
        s.remoteFractionLost = Double(int(.remoteFractionLost)) / 256
        s.remoteCumulativeLost = int(.remoteCumulativeLost)
        s.remoteJitterMs = Double(int(.remoteJitterUnits)) * 1000 / Double(clockRate)
        s.remoteReports = int(.remoteReports)
        s.srtpProtected = int(.srtpProtected)
        s.srtpUnprotected = int(.srtpUnprotected)
        s.srtpAuthenticationFailures = int(.srtpAuthenticationFailures)
        s.srtpReplays = int(.srtpReplays)
        s.srtpDropped = int(.srtpDropped)
        let profile = int(.srtpProfile)
        s.srtpProfile = profile > 0 && profile <= SRTPProfile.allCases.count ? SRTPProfile.allCases[profile - 1].sdesName : nil
        s.dtls = DTLSState(rawValue: int(.dtlsState)) ?? .none
        s.dtlsHandshakeMs = s.dtls == .established ? Double(int(.dtlsHandshakeMicroseconds)) / 1000 : nil
        return s
    }

    /// Publishes the validator's counters and reception statistics (network thread).
    func publish(_ v: RTPSourceValidator) {
        set(.malformed, v.dropped(.malformed))
        set(.wrongPayloadType, v.dropped(.wrongPayloadType))
        set(.foreignSource, v.dropped(.foreignSource))
        set(.foreignSSRC, v.dropped(.foreignSSRC))
        set(.probation, v.dropped(.probation))
        set(.badSequence, v.dropped(.badSequence))
        set(.ssrcCollision, v.dropped(.ssrcCollision))
        set(.sourceChanges, Int(v.generation))
        set(.packetsReceived, v.accepted)
        if let seq = v.sequence {
            set(.packetsExpected, Int(seq.expected))
            set(.cumulativeLost, Int(seq.cumulativeLost))
        }
        set(.jitterUnits, Int(v.jitter.jitter))
    }
}
