/// A snapshot of one call's media: network, jitter buffer, echo canceller, device.
///
/// The JSON keys (snake case) are part of `voicecall`'s command-line contract.
///
/// Thread safety: a value type; safe to use from any thread.
public struct CallStatistics: Sendable, Equatable, Codable {
    /// The codec both ways, by its SDP name (`opus`, `G722`, `PCMU`, `PCMA`; empty before media).
    public var codec = ""
    public var packetsSent = 0
    public var packetsReceived = 0
    public var packetsLost = 0
    /// Interarrival jitter (RFC 3550 A.8) of what we receive, in milliseconds.
    public var jitterMs = 0.0
    /// Round-trip time from RTCP, in milliseconds (nil until the first report comes back).
    public var rttMs: Double?
    /// Packets rebuilt from the next packet's in-band FEC.
    public var fecRecovered = 0
    /// Uplink frames coded with in-band FEC on: before the peer's first receiver report, and
    /// while it reports loss (FEC costs the encoder about an eighth more CPU).
    public var framesEncodedWithFEC = 0
    /// Audio made up by loss concealment, in milliseconds.
    public var concealedMs = 0.0
    /// The part of ``concealedMs`` whose packets did arrive, too late for the pull that needed
    /// them (the jitter buffer ran dry): with no packet lost, this should be 0.
    public var concealedWithoutLossMs = 0.0
    /// The jitter buffer's current and target delay, in milliseconds.
    public var jitterBufferDelayMs = 0.0
    public var jitterBufferTargetMs = 0.0
    /// Echo return loss enhancement the canceller achieves now, in dB (nil while unknown).
    public var erleDB: Double?
    /// The echo delay the canceller's reference is aligned to (nil while no echo is found: a
    /// headset, or a microphone that does not hear the loudspeaker), and the clock drift it compensates.
    public var echoDelayMs: Double?
    /// Whether the microphone hears the far end: "unknown" (not decided yet), "present" or "absent".
    public var echoPath = "unknown"
    public var driftPPM: Double?
    /// Times the echo canceller started over: a realignment (the echo found far from where the
    /// device's delay report put it), a moved loudspeaker, divergence, or drift beyond
    /// interpolation. Each one holds the echo back until the canceller has converged again.
    public var cancellerResets = 0
    /// Jumps of the echo's delay the canceller's reference followed without a restart (a sound
    /// server that runs the stream in bursts).
    public var echoMoves = 0
    /// Delay the voice processing adds to the uplink (resampling, framing), in milliseconds.
    public var processingLatencyMs = 0.0
    /// Delay the Opus encoder adds (its lookahead), in milliseconds.
    public var codecLookaheadMs = 0.0
    public var xruns = 0
    /// Input and output levels over the call (mean power of every period so far), in dBFS.
    public var captureLevelDBFS = -100.0
    public var playbackLevelDBFS = -100.0
    /// Output port types of the current route, e.g. "builtInReceiver".
    public var route = ""
    /// Share of one core the call's audio thread used.
    public var cpuLoad = 0.0
    /// Malformed, foreign or unexpected packets dropped.
    public var packetsDropped = 0
    /// The media's encryption: "off", "sdes" or "dtls".
    public var mediaEncryption = "off"
    /// The SRTP profile in use (`AES_CM_128_HMAC_SHA1_80`); nil in clear, and before a DTLS
    /// handshake has given keys.
    public var srtpProfile: String?
    /// Packets protected (RTP and RTCP sent) and unprotected (received and authenticated).
    public var srtpProtected = 0
    public var srtpUnprotected = 0
    /// Received packets dropped because their tag did not verify, or they replayed one seen before.
    public var srtpAuthenticationFailures = 0
    public var srtpReplays = 0
    /// How long the DTLS-SRTP handshake took, in milliseconds (nil without one, or before it ends).
    public var dtlsHandshakeMs: Double?

    public init() {}

    enum CodingKeys: String, CodingKey {
        case codec
        case packetsSent = "packets_sent", packetsReceived = "packets_received", packetsLost = "packets_lost"
        case jitterMs = "jitter_ms", rttMs = "rtt_ms", fecRecovered = "fec_recovered",
             framesEncodedWithFEC = "frames_encoded_with_fec", concealedMs = "concealed_ms",
             concealedWithoutLossMs = "concealed_without_loss_ms"
        case jitterBufferDelayMs = "jitter_buffer_delay_ms", jitterBufferTargetMs = "jitter_buffer_target_ms"
        case erleDB = "erle_db", echoDelayMs = "echo_delay_ms", echoPath = "echo_path", driftPPM = "drift_ppm",
             cancellerResets = "canceller_resets", echoMoves = "echo_moves", xruns
        case processingLatencyMs = "processing_latency_ms", codecLookaheadMs = "codec_lookahead_ms"
        case captureLevelDBFS = "capture_level_dbfs", playbackLevelDBFS = "playback_level_dbfs"
        case route, cpuLoad = "cpu_load", packetsDropped = "packets_dropped"
        case mediaEncryption = "media_encryption", srtpProfile = "srtp_profile", srtpProtected = "srtp_protected",
             srtpUnprotected = "srtp_unprotected", srtpAuthenticationFailures = "srtp_authentication_failures",
             srtpReplays = "srtp_replays", dtlsHandshakeMs = "dtls_handshake_ms"
    }
}
