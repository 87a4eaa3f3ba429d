// The configuration and statistics of a JitterBuffer: what a caller sets and reads.

/// How a ``JitterBuffer`` behaves.
///
/// Thread safety: a value type; safe to use from any thread.
public struct JitterBufferConfiguration: Sendable, Equatable {
    /// The decoder's output rate in Hz (the call's internal rate; RTP timestamps stay at 48 kHz).
    public var sampleRate: Int
    /// Output channels (1 or 2).
    public var channels: Int
    /// Packets the buffer holds at most; more are dropped and counted (bounded memory).
    public var capacity: Int
    /// The largest payload stored, in bytes.
    public var maxPayloadSize: Int
    /// The quantile of the relative-delay histogram the target delay follows.
    public var delayQuantile: Double
    /// The histogram's forgetting factor per packet.
    public var forgetFactor: Double
    /// Added to the quantile (0 by default: the pull granularity already puts the delay up
    /// to a period above the target).
    public var marginMs: Double
    /// The delay assumed before any packet has been measured.
    public var initialDelayMs: Double
    /// Bounds of the target delay.
    public var minimumDelayMs: Double
    public var maximumDelayMs: Double
    /// Window for the fastest transit (the zero of relative delay), in milliseconds.
    public var historyMs: Int
    /// Recover a missing packet from the next packet's in-band FEC when it carries some.
    public var useFEC: Bool
    /// Shorten or lengthen quiet passages to follow the target delay and absorb clock drift.
    public var timeStretch: Bool
    /// While packets are being lost (over 0.5 % lately) and carry FEC, aim one packet
    /// higher, so that the packet after a lost one is usually there in time to rebuild it.
    /// Off by default: it costs a packet of delay (20 ms) whenever the network loses packets,
    /// which puts the delay up to a period past the jitter quantile + one packet. Without it,
    /// periods shorter than a packet (2.5 ms multiples that divide it and 20 ms) aim a packet
    /// minus a period higher while packets are lost, which keeps the delay within the
    /// quantile + one packet (for 60 ms packets that is 60 ms: what FEC needs with them).
    public var fecDelay: Bool

    public init(sampleRate: Int = 16000, channels: Int = 1, capacity: Int = 64, maxPayloadSize: Int = 1500,
                delayQuantile: Double = 0.95, forgetFactor: Double = 0.995, marginMs: Double = 0,
                initialDelayMs: Double = 30, minimumDelayMs: Double = 0, maximumDelayMs: Double = 500,
                historyMs: Int = 2000, useFEC: Bool = true, timeStretch: Bool = true, fecDelay: Bool = false) {
        self.sampleRate = sampleRate
        self.channels = channels
        self.capacity = capacity
        self.maxPayloadSize = maxPayloadSize
        self.delayQuantile = delayQuantile
        self.forgetFactor = forgetFactor
        self.marginMs = marginMs
        self.initialDelayMs = initialDelayMs
        self.minimumDelayMs = minimumDelayMs
        self.maximumDelayMs = maximumDelayMs
        self.historyMs = historyMs
        self.useFEC = useFEC
        self.timeStretch = timeStretch
        self.fecDelay = fecDelay
    }
}

/// What a ``JitterBuffer`` has done. Durations are in milliseconds.
///
/// Thread safety: a value type; safe to use from any thread.
public struct JitterBufferStatistics: Sendable, Equatable, Codable {
    /// Packets accepted into the buffer.
    public var packetsInserted = 0
    /// Packets that arrived after their playout time (dropped).
    public var late = 0
    /// Copies of a packet already buffered or played (dropped).
    public var duplicates = 0
    /// Packets missing at their playout time, whether FEC recovered them or not.
    public var lost = 0
    /// Lost packets rebuilt from the next packet's in-band FEC.
    public var fecRecovered = 0
    /// Payloads that are not valid Opus, or that the decoder rejected.
    public var undecodable = 0
    /// Packets dropped because the buffer was full.
    public var overflows = 0
    /// Telephone-event packets seen (DTMF): not audio; their sequence numbers are not losses.
    public var telephoneEvents = 0
    /// Comfort-noise descriptors seen (RFC 3389): the sender's silences, played as noise at
    /// their level; their sequence numbers are not losses.
    public var comfortNoiseDescriptors = 0
    /// Times the buffer started over (new source, timestamp jump).
    public var resets = 0
    /// Packets more than 2 s away from the timeline (dropped; a second in a row restarts the buffer).
    public var timestampJumps = 0
    /// Audio made up by packet loss concealment where packets were missing or late.
    public var concealedMs = 0.0
    /// The part of ``concealedMs`` whose packets did arrive, after the pull that needed them:
    /// the buffer ran dry, or a packet came too late to play. With no packet lost on the way,
    /// every millisecond of it is the buffer's own fault.
    public var concealedWithoutLossMs = 0.0
    /// Comfort noise played in DTX gaps and while waiting for a talk spurt.
    public var comfortNoiseMs = 0.0
    /// Quiet audio removed to lower the delay.
    public var droppedMs = 0.0
    /// Quiet audio repeated to raise the delay.
    public var stretchedMs = 0.0
    /// The delay the buffer adds now: playout time minus the expected arrival of the
    /// audio playing (beyond the fastest packets' network delay).
    public var currentDelayMs = 0.0
    /// The delay the buffer aims for: the relative-delay quantile plus the margin; plus a
    /// period for periods that do not divide the packet; while packets are lost and carry
    /// FEC, plus a packet minus a period (periods that divide it), or a whole packet with
    /// ``JitterBufferConfiguration/fecDelay``.
    public var targetDelayMs = 0.0
    /// The estimated quantile of relative delay (the jitter the target covers).
    public var jitterQuantileMs = 0.0
    /// The average of the added delay over every packet played.
    public var meanDelayMs = 0.0
    /// Audio buffered: packets not yet decoded plus decoded samples not yet pulled.
    public var bufferedMs = 0.0

    public init() {}

    enum CodingKeys: String, CodingKey {
        case packetsInserted = "packets_inserted", late, duplicates, lost, fecRecovered = "fec_recovered",
             undecodable, overflows, telephoneEvents = "telephone_events",
             comfortNoiseDescriptors = "comfort_noise_descriptors", resets, timestampJumps = "timestamp_jumps", concealedMs = "concealed_ms",
             concealedWithoutLossMs = "concealed_without_loss_ms", comfortNoiseMs = "comfort_noise_ms",
             droppedMs = "dropped_ms", stretchedMs = "stretched_ms", currentDelayMs = "current_delay_ms",
             targetDelayMs = "target_delay_ms", jitterQuantileMs = "jitter_quantile_ms", meanDelayMs = "mean_delay_ms",
             bufferedMs = "buffered_ms"
    }
}
