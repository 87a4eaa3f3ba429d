import Platform

public import Opus

/// An adaptive jitter buffer for a call's audio over RTP (Opus, G.722 or G.711), owned by the
/// playout side.
///
/// Packets go in as they arrive (``insert(_:payload:)``, or ``receive(from:)`` to drain
/// the network thread's ring); audio comes out in fixed frames (``pull(into:now:)``)
/// at the device's pace. In between:
///
/// - **Delay.** Each packet's relative delay feeds a ``JitterDelayEstimator``; the
///   target delay is its 95th percentile (plus an optional margin), or the highest of the
///   peaks that recur (``DelayPeakDetector``) when that is more. A packet's arrival is the
///   time of the pull that could first play it when it comes through ``receive(from:availableAt:)``,
///   so the target covers the device's pull pattern as well as the network. The buffer holds the first
///   packet of a talk spurt until its delay reaches the target, then plays on the
///   packets' timeline; quiet frames are dropped or played twice to keep the delay
///   within one frame above the target, which also absorbs clock drift.
/// - **Order.** Packets are kept sorted by timestamp: reordering is undone, duplicates
///   and packets older than the playout point are dropped and counted.
/// - **Loss.** A missing packet is rebuilt from the next packet's in-band FEC when that
///   packet has arrived and carries FEC (Opus), otherwise concealed with the codec's PLC (Opus's,
///   or spandsp's for G.711 and G.722). When the
///   buffer runs dry the audio is extended by PLC without moving the timeline, so a
///   late packet still plays (the delay grows and is trimmed again in silence).
/// - **DTX.** A timestamp gap without a sequence gap is silence the sender did not
///   send: it is filled with the decoder's comfort noise, or, after a comfort-noise descriptor
///   (RFC 3389, G.711 and G.722), with noise at the level it gives.
///
/// The timeline counts in 48 kHz units whatever the codec: a G.711 or G.722 timestamp (8 kHz
/// clock) is six of them.
///
/// Memory is allocated once in `init`: at most ``JitterBufferConfiguration/capacity``
/// packets and 200 ms of decoded audio.
///
/// Thread safety: not thread-safe; owned and used by one thread (the I/O thread),
/// it may be moved between threads. ``insert(_:payload:)``, ``receive(from:)`` and
/// ``pull(into:now:)`` do not allocate, lock, log or block (real-time safe).
public struct JitterBuffer: ~Copyable {
    public let configuration: JitterBufferConfiguration
    /// The codec of the packets it takes.
    public let codec: AudioCodec
    var decoder: PayloadDecoder
    let monitor: JitterBufferMonitor?
    var estimator: JitterDelayEstimator
    var peaks = DelayPeakDetector()

    typealias Entry = PacketStore.Entry
    var packets: PacketStore

    // Decoded audio waiting to be pulled.
    let fifo: UnsafeMutablePointer<Int16>
    let fifoCapacity: Int
    var fifoCount = 0

    // Timeline, in 48 kHz RTP units extended to 64 bits.
    var started = false
    var generation: UInt32 = 0
    var referenceTimestamp: Int64 = 0
    var referenceRaw: UInt32 = 0
    var hasReference = false
    var playoutTimestamp: Int64 = 0
    var lastSequence: Int64 = 0
    var hasPlayed = false
    /// Bit i set: sequence number `lastDecoded - i` was decoded (tells late duplicates from late packets).
    var decodedMask: UInt64 = 0
    var lastDecoded: Int64 = 0
    /// PLC played while the buffer was empty, in 48 kHz units, not yet matched to the timeline.
    var expandRun = 0
    /// The next packet starts a talk spurt: hold it until its delay reaches the target.
    var talkSpurtPending = true

    // Level tracking for the quiet-frame test (mean square per frame).
    var noiseFloor = 1000.0
    var heldTarget = 0.0
    /// A packet's timestamp far from the timeline, waiting for a second one to confirm it.
    var pendingJump: Int64?
    /// The share of packets lost lately (an average over about 100 packets).
    var lossRate = 0.0
    var lastDuration = 960
    /// Sequence numbers of the latest telephone-event packets (a ring): a gap they fill is
    /// not loss but a pause in the audio, played as comfort noise.
    let eventSequences: UnsafeMutablePointer<Int64>
    var eventCount = 0
    static let eventMemory = 64
    /// The level (-dBov) of the peer's last comfort-noise descriptor, and where on the
    /// timeline its silence starts; nil once audio after it has played.
    var silenceLevel: Int?
    var silenceFrom: Int64 = 0
    var noise = NoiseGenerator()
    /// Packets inserted since the last one that carried in-band FEC (the peer may send none).
    var packetsSinceFEC = Int.max
    /// The silence or comfort noise added at a time while a start waits for its target:
    /// the period (at most 60 ms: longer pulls come in pieces) in whole Opus quanta, so a
    /// start falls on a pull boundary.
    var waitPiece = 960
    var smoothedDelay: Double?
    var delaySum = 0.0
    var delayCount = 0

    let unitsPerFrame: Int
    var stats = JitterBufferStatistics()

    static let chunk = 960  // 20 ms: the largest piece of concealment made at once
    static let quantum = 120  // 2.5 ms: the Opus frame granularity
    static let maxConcealedExpand = 4800  // 100 ms
    /// How far the smoothed delay may sit above the band (target ... target + a period)
    /// before a frame is dropped, and below the target before one is repeated, in ms:
    /// room for the noise of arrival and wake-up times.
    static let dropMarginMs = 2.0
    static let repeatMarginMs = 1.0

    /// Creates a buffer that decodes Opus with `decoder`.
    ///
    /// - Precondition: the decoder's rate and channels match the configuration's.
    ///
    /// Thread safety: allocates; create it off the real-time thread, then move it there.
    /// - Parameter configuration: delays, capacity, FEC.
    /// - Parameter decoder: the Opus decoder, owned by the buffer from now on.
    /// - Parameter monitor: where statistics are published after every pull, for other threads.
    public init(configuration: JitterBufferConfiguration = .init(), decoder: consuming OpusDecoder,
                monitor: JitterBufferMonitor? = nil) {
        precondition(decoder.sampleRate == configuration.sampleRate && decoder.channels == configuration.channels,
                     "decoder format differs from the jitter buffer's")
        self.init(configuration: configuration, codec: .opus, payloadDecoder: .opus(decoder), monitor: monitor)
    }

    /// Creates a buffer for packets of `codec`, decoding them at the configuration's rate (G.711
    /// and G.722 resampled to it).
    ///
    /// - Throws: ``CodecError`` when the decoder cannot be made (G.711 or G.722 in stereo).
    ///
    /// Thread safety: allocates; create it off the real-time thread, then move it there.
    /// - Parameter configuration: delays, capacity, FEC, the output's rate and channels.
    /// - Parameter codec: the packets' codec.
    /// - Parameter monitor: where statistics are published after every pull, for other threads.
    public init(configuration: JitterBufferConfiguration = .init(), codec: AudioCodec,
                monitor: JitterBufferMonitor? = nil) throws(CodecError) {
        let decoder = try PayloadDecoder(codec: codec, sampleRate: configuration.sampleRate, channels: configuration.channels)
        self.init(configuration: configuration, codec: codec, payloadDecoder: decoder, monitor: monitor)
    }

    private init(configuration: JitterBufferConfiguration, codec: AudioCodec, payloadDecoder: consuming PayloadDecoder,
                 monitor: JitterBufferMonitor?) {
        precondition(configuration.capacity > 0 && configuration.maxPayloadSize > 0)
        self.configuration = configuration
        self.codec = codec
        decoder = payloadDecoder
        self.monitor = monitor
        estimator = JitterDelayEstimator(forgetFactor: configuration.forgetFactor, historyMs: configuration.historyMs,
                                         priorMs: configuration.initialDelayMs)
        unitsPerFrame = OpusCallConfiguration.rtpClockRate / configuration.sampleRate
        packets = PacketStore(capacity: configuration.capacity, maxPayloadSize: configuration.maxPayloadSize)
        // 120 ms (the longest packet) + up to 60 ms pulled at once + 20 ms of stretch.
        fifoCapacity = configuration.sampleRate * configuration.channels / 5
        fifo = .allocate(capacity: fifoCapacity)
        fifo.initialize(repeating: 0, count: fifoCapacity)
        eventSequences = .allocate(capacity: Self.eventMemory)
        eventSequences.initialize(repeating: -1, count: Self.eventMemory)
        stats.targetDelayMs = configuration.initialDelayMs + configuration.marginMs
    }

    deinit {
        fifo.deallocate()
        eventSequences.deallocate()
    }

    /// The counters and delays so far.
    public var statistics: JitterBufferStatistics { stats }

    /// The largest piece ``pull(into:now:)`` serves at once: 60 ms.
    public var maxPullFrames: Int { configuration.sampleRate * 60 / 1000 }

    // MARK: Input

    /// Moves every packet waiting in `ring` into the buffer.
    ///
    /// Thread safety: call from the ring's consumer thread only.
    public mutating func receive(from ring: RTPPacketRing) {
        while ring.pop({ packet, payload in insert(packet, payload: payload) }) {}
    }

    /// Moves every packet waiting in `ring` into the buffer as arriving at `now`: the play time
    /// of the pull about to be made (the `now` of ``pull(into:now:)``), the first one that can
    /// play them.
    ///
    /// Measured this way, a packet's delay is in the units of the buffer's own output: a device
    /// that pulls in bursts (two periods back to back, then a long gap, as under a sound server
    /// whose cycle is not the period) or a sender that sends in bursts shows up as jitter, and
    /// the target covers it, as NetEq does by counting arrivals in its output ticks.
    ///
    /// Thread safety: call from the ring's consumer thread only.
    public mutating func receive(from ring: RTPPacketRing, availableAt now: UInt64) {
        while ring.pop({ packet, payload in
            var packet = packet
            packet.arrival = now
            insert(packet, payload: payload)
        }) {}
    }

    /// Adds a packet that arrived.
    ///
    /// Late packets, duplicates, invalid Opus payloads and packets that do not fit are
    /// dropped and counted. A packet from a new source generation, or a timestamp jump
    /// of more than two seconds confirmed by the next packet, starts the buffer over.
    public mutating func insert(_ packet: RTPReceivedPacket, payload: UnsafeRawBufferPointer) {
        if packet.isTelephoneEvent || packet.isComfortNoise {
            // Not audio (RFC 4733, RFC 3389): remember that its sequence number is no loss.
            eventSequences[eventCount % Self.eventMemory] = packet.sequenceNumber
            eventCount += 1
            if packet.isTelephoneEvent { stats.telephoneEvents += 1 } else { describeSilence(packet, payload) }
            return
        }
        guard let info = decoder.inspect(payload), payload.count <= configuration.maxPayloadSize else {
            stats.undecodable += 1
            return
        }
        if !started || packet.sourceGeneration != generation {
            if started { restart() }
            started = true
            generation = packet.sourceGeneration
        }
        var timestamp = extend(packet.timestamp)
        let jumpLimit = Int64(2 * OpusCallConfiguration.rtpClockRate)
        let anchor: Int64? = hasPlayed ? playoutTimestamp : packets.isEmpty ? nil : packets.first.timestamp
        if let anchor, abs(timestamp - anchor) > jumpLimit {
            // The sender's clock jumped (it restarted), or this one packet is corrupt:
            // drop it, and start over on the new timeline when the next one confirms it.
            guard let pending = pendingJump, abs(timestamp - pending) <= jumpLimit else {
                pendingJump = timestamp
                stats.timestampJumps += 1
                return
            }
            restart()
            started = true
            timestamp = extend(packet.timestamp)
        }
        pendingJump = nil

        if hasPlayed, timestamp < playoutTimestamp {
            let age = lastDecoded - packet.sequenceNumber
            if (0..<64).contains(age), decodedMask & (1 << UInt64(age)) != 0 {
                stats.duplicates += 1
            } else {
                // Too late to play, but it tells how late packets can be; its audio was concealed.
                measure(packet, timestamp: timestamp)
                stats.late += 1
                stats.concealedWithoutLossMs += RTPClock.milliseconds(rtpUnits: info.duration)
            }
            return
        }
        guard let index = packets.insertionIndex(for: timestamp) else {
            stats.duplicates += 1
            return
        }
        measure(packet, timestamp: timestamp)
        let hasFEC = info.hasFEC
        guard packets.insert(at: index, timestamp: timestamp, sequence: packet.sequenceNumber, duration: info.duration,
                             frameDuration: info.frameDuration, hasFEC: hasFEC, payload: payload) else {
            stats.overflows += 1
            return
        }
        packetsSinceFEC = hasFEC ? 0 : packetsSinceFEC == .max ? .max : packetsSinceFEC + 1
        stats.packetsInserted += 1
    }

    /// A comfort-noise descriptor: the silence from its timestamp on is noise at its level.
    mutating func describeSilence(_ packet: RTPReceivedPacket, _ payload: UnsafeRawBufferPointer) {
        guard let level = ComfortNoisePayload.level(payload) else {
            stats.undecodable += 1
            return
        }
        stats.comfortNoiseDescriptors += 1
        // Only on the timeline of the source playing: a descriptor needs audio before it.
        guard started, packet.sourceGeneration == generation else { return }
        // A descriptor that refreshes the silence (RFC 3389 senders repeat them) changes its
        // level, not where it began: the playout, held where the audio stopped, is already in it.
        let from = extend(packet.timestamp)
        if silenceLevel == nil || from < silenceFrom { silenceFrom = from }
        silenceLevel = level
    }

    /// Feeds a packet's relative delay to the quantile and to the peak detector.
    mutating func measure(_ packet: RTPReceivedPacket, timestamp: Int64) {
        let arrival = Int64(bitPattern: packet.arrival)
        let relative = estimator.update(arrival: arrival, timestamp: nanoseconds(timestamp))
        peaks.update(relativeDelayMs: relative, quantileMs: stats.jitterQuantileMs, at: arrival)
    }

    /// Extends a 32-bit timestamp against the newest one seen (wrap-around safe), in 48 kHz units.
    mutating func extend(_ raw: UInt32) -> Int64 {
        guard hasReference else {
            hasReference = true
            referenceRaw = raw
            // The timeline starts at 0 with the first packet after a (re)start.
            referenceTimestamp = 0
            return 0
        }
        let value = referenceTimestamp + Int64(Int32(bitPattern: raw &- referenceRaw)) * Int64(codec.timelineUnitsPerTimestamp)
        if value > referenceTimestamp {
            referenceTimestamp = value
            referenceRaw = raw
        }
        return value
    }

    /// A timeline position in nanoseconds: 10^9 / 48000 (``OpusCallConfiguration/rtpClockRate``)
    /// = 62500 / 3, which cannot overflow for 4.7 million years of timeline.
    func nanoseconds(_ timestamp: Int64) -> Int64 { timestamp * 62_500 / 3 }

    /// Forgets the packets and the timeline, keeps the counters.
    mutating func restart() {
        packets.removeAll()
        hasReference = false
        hasPlayed = false
        smoothedDelay = nil
        decodedMask = 0
        expandRun = 0
        eventCount = 0
        silenceLevel = nil
        talkSpurtPending = true
        estimator.reset(priorMs: configuration.initialDelayMs)
        peaks.reset()
        decoder.reset()
        stats.resets += 1
    }
}
