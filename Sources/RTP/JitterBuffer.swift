public import Opus

/// An adaptive jitter buffer for Opus over RTP, owned by the playout side.
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
///   packet has arrived and carries FEC, otherwise concealed with Opus PLC. When the
///   buffer runs dry the audio is extended by PLC without moving the timeline, so a
///   late packet still plays (the delay grows and is trimmed again in silence).
/// - **DTX.** A timestamp gap without a sequence gap is silence the sender did not
///   send: it is filled with the decoder's comfort noise.
///
/// Memory is allocated once in `init`: at most ``JitterBufferConfiguration/capacity``
/// packets and 200 ms of decoded audio.
///
/// Thread safety: not thread-safe; owned and used by one thread (the I/O thread),
/// it may be moved between threads. ``insert(_:payload:)``, ``receive(from:)`` and
/// ``pull(into:now:)`` do not allocate, lock, log or block (real-time safe).
public struct JitterBuffer: ~Copyable {
    public let configuration: JitterBufferConfiguration
    private let decoder: OpusDecoder
    private let monitor: JitterBufferMonitor?
    private var estimator: JitterDelayEstimator
    private var peaks = DelayPeakDetector()

    // Packets, sorted by timestamp; payloads in fixed slots.
    private struct Entry {
        var timestamp: Int64
        var sequence: Int64
        var duration: Int
        var frameDuration: Int
        var length: Int
        var slot: Int
        var hasFEC: Bool
    }
    private let entries: UnsafeMutablePointer<Entry>
    private var entryCount = 0
    private let freeSlots: UnsafeMutablePointer<Int>
    private var freeCount: Int
    private let payloads: UnsafeMutableRawPointer

    // Decoded audio waiting to be pulled.
    private let fifo: UnsafeMutablePointer<Int16>
    private let fifoCapacity: Int
    private var fifoCount = 0

    // Timeline, in 48 kHz RTP units extended to 64 bits.
    private var started = false
    private var generation: UInt32 = 0
    private var referenceTimestamp: Int64 = 0
    private var referenceRaw: UInt32 = 0
    private var hasReference = false
    private var playoutTimestamp: Int64 = 0
    private var lastSequence: Int64 = 0
    private var hasPlayed = false
    /// Bit i set: sequence number `lastDecoded - i` was decoded (tells late duplicates from late packets).
    private var decodedMask: UInt64 = 0
    private var lastDecoded: Int64 = 0
    /// PLC played while the buffer was empty, in 48 kHz units, not yet matched to the timeline.
    private var expandRun = 0
    /// The next packet starts a talk spurt: hold it until its delay reaches the target.
    private var talkSpurtPending = true

    // Level tracking for the quiet-frame test (mean square per frame).
    private var noiseFloor = 1000.0
    private var heldTarget = 0.0
    /// A packet's timestamp far from the timeline, waiting for a second one to confirm it.
    private var pendingJump: Int64?
    /// The share of packets lost lately (an average over about 100 packets).
    private var lossRate = 0.0
    private var lastDuration = 960
    /// Sequence numbers of the latest telephone-event packets (a ring): a gap they fill is
    /// not loss but a pause in the audio, played as comfort noise.
    private let eventSequences: UnsafeMutablePointer<Int64>
    private var eventCount = 0
    private static let eventMemory = 64
    /// Packets inserted since the last one that carried in-band FEC (the peer may send none).
    private var packetsSinceFEC = Int.max
    /// The silence or comfort noise added at a time while a start waits for its target:
    /// the period (at most 60 ms: longer pulls come in pieces) in whole Opus quanta, so a
    /// start falls on a pull boundary.
    private var waitPiece = 960
    private var smoothedDelay: Double?
    private var delaySum = 0.0
    private var delayCount = 0

    private let unitsPerFrame: Int
    private var stats = JitterBufferStatistics()

    private static let chunk = 960  // 20 ms: the largest piece of concealment made at once
    private static let quantum = 120  // 2.5 ms: the Opus frame granularity
    private static let maxConcealedExpand = 4800  // 100 ms
    /// How far the smoothed delay may sit above the band (target ... target + a period)
    /// before a frame is dropped, and below the target before one is repeated, in ms:
    /// room for the noise of arrival and wake-up times.
    private static let dropMarginMs = 2.0
    private static let repeatMarginMs = 1.0

    /// Creates a buffer that decodes with `decoder`.
    ///
    /// - Precondition: the decoder's rate and channels match the configuration's.
    ///
    /// Thread safety: allocates; create it off the real-time thread, then move it there.
    /// - Parameter monitor: where statistics are published after every pull, for other threads.
    public init(configuration: JitterBufferConfiguration = .init(), decoder: consuming OpusDecoder,
                monitor: JitterBufferMonitor? = nil) {
        precondition(decoder.sampleRate == configuration.sampleRate && decoder.channels == configuration.channels,
                     "decoder format differs from the jitter buffer's")
        precondition(configuration.capacity > 0 && configuration.maxPayloadSize > 0)
        self.configuration = configuration
        self.decoder = decoder
        self.monitor = monitor
        estimator = JitterDelayEstimator(forgetFactor: configuration.forgetFactor, historyMs: configuration.historyMs,
                                         priorMs: configuration.initialDelayMs)
        unitsPerFrame = OpusCallConfiguration.rtpClockRate / configuration.sampleRate
        entries = .allocate(capacity: configuration.capacity)
        freeSlots = .allocate(capacity: configuration.capacity)
        for i in 0..<configuration.capacity { freeSlots[i] = configuration.capacity - 1 - i }
        freeCount = configuration.capacity
        payloads = .allocate(byteCount: configuration.capacity * configuration.maxPayloadSize, alignment: 16)
        // 120 ms (the longest packet) + up to 60 ms pulled at once + 20 ms of stretch.
        fifoCapacity = configuration.sampleRate * configuration.channels / 5
        fifo = .allocate(capacity: fifoCapacity)
        fifo.initialize(repeating: 0, count: fifoCapacity)
        eventSequences = .allocate(capacity: Self.eventMemory)
        eventSequences.initialize(repeating: -1, count: Self.eventMemory)
        stats.targetDelayMs = configuration.initialDelayMs + configuration.marginMs
    }

    deinit {
        entries.deallocate()
        freeSlots.deallocate()
        payloads.deallocate()
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
        if packet.isTelephoneEvent {
            // Not audio (RFC 4733): remember that its sequence number is no loss.
            eventSequences[eventCount % Self.eventMemory] = packet.sequenceNumber
            eventCount += 1
            stats.telephoneEvents += 1
            return
        }
        guard let info = OpusPayload.parse(payload), payload.count <= configuration.maxPayloadSize else {
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
        let anchor: Int64? = hasPlayed ? playoutTimestamp : entryCount > 0 ? entries[0].timestamp : nil
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
        var index = entryCount
        while index > 0, entries[index - 1].timestamp >= timestamp {
            if entries[index - 1].timestamp == timestamp {
                stats.duplicates += 1
                return
            }
            index -= 1
        }
        measure(packet, timestamp: timestamp)
        guard freeCount > 0 else {
            stats.overflows += 1
            return
        }
        freeCount -= 1
        let slot = freeSlots[freeCount]
        if let base = payload.baseAddress {
            (payloads + slot * configuration.maxPayloadSize).copyMemory(from: base, byteCount: payload.count)
        }
        (entries + index + 1).update(from: entries + index, count: entryCount - index)
        let hasFEC = OpusPayload.hasFEC(payload, info: info)
        entries[index] = Entry(timestamp: timestamp, sequence: packet.sequenceNumber, duration: info.duration,
                               frameDuration: info.frameDuration, length: payload.count, slot: slot,
                               hasFEC: hasFEC)
        packetsSinceFEC = hasFEC ? 0 : packetsSinceFEC == .max ? .max : packetsSinceFEC + 1
        entryCount += 1
        stats.packetsInserted += 1
    }

    /// Feeds a packet's relative delay to the quantile and to the peak detector.
    private mutating func measure(_ packet: RTPReceivedPacket, timestamp: Int64) {
        let arrival = Int64(bitPattern: packet.arrival)
        let relative = estimator.update(arrival: arrival, timestamp: nanoseconds(timestamp))
        peaks.update(relativeDelayMs: relative, quantileMs: stats.jitterQuantileMs, at: arrival)
    }

    /// Extends a 32-bit timestamp against the newest one seen (wrap-around safe).
    private mutating func extend(_ raw: UInt32) -> Int64 {
        guard hasReference else {
            hasReference = true
            referenceRaw = raw
            // The timeline starts at 0 with the first packet after a (re)start.
            referenceTimestamp = 0
            return 0
        }
        let value = referenceTimestamp + Int64(Int32(bitPattern: raw &- referenceRaw))
        if value > referenceTimestamp {
            referenceTimestamp = value
            referenceRaw = raw
        }
        return value
    }

    /// A timeline position in nanoseconds: 10^9 / 48000 (``OpusCallConfiguration/rtpClockRate``)
    /// = 62500 / 3, which cannot overflow for 4.7 million years of timeline.
    private func nanoseconds(_ timestamp: Int64) -> Int64 { timestamp * 62_500 / 3 }

    /// Forgets the packets and the timeline, keeps the counters.
    private mutating func restart() {
        for i in 0..<entryCount { release(i) }
        entryCount = 0
        hasReference = false
        hasPlayed = false
        smoothedDelay = nil
        decodedMask = 0
        expandRun = 0
        eventCount = 0
        talkSpurtPending = true
        estimator.reset(priorMs: configuration.initialDelayMs)
        peaks.reset()
        try? decoder.reset()
        stats.resets += 1
    }

    private mutating func release(_ index: Int) {
        freeSlots[freeCount] = entries[index].slot
        freeCount += 1
    }

    private mutating func removeFirst() {
        release(0)
        entryCount -= 1
        entries.update(from: entries + 1, count: entryCount)
    }

    // MARK: Output

    /// Fills `output` with the next period of audio (interleaved), `now` being when its
    /// first sample will be played, on the clock of the packets' arrival times.
    ///
    /// Any period length works (a sound card's 256 or 1024 frames as well as the packets'
    /// 20 ms); periods longer than ``maxPullFrames`` are served in pieces.
    ///
    /// - Precondition: `output.count` is a whole number of frames.
    public mutating func pull(into output: UnsafeMutableBufferPointer<Int16>, now: UInt64) {
        let channels = configuration.channels
        precondition(output.count % channels == 0, "pull whole frames")
        updateTarget(period: output.count / channels * unitsPerFrame, now: Int64(bitPattern: now))
        var offset = 0
        while offset < output.count {
            let n = min(output.count - offset, maxPullFrames * channels)
            pullPiece(into: UnsafeMutableBufferPointer(rebasing: output[offset..<(offset + n)]),
                      now: now &+ UInt64(duration(samples: offset)))
            offset += n
        }
    }

    private mutating func pullPiece(into output: UnsafeMutableBufferPointer<Int16>, now: UInt64) {
        let channels = configuration.channels
        let need = output.count
        let nowNs = Int64(bitPattern: now)
        waitPiece = max(Self.quantum, quantized(need / channels * unitsPerFrame))

        var adjusted = false
        while true {
            while fifoCount < need { produce(now: nowNs) }
            if adjusted || !configuration.timeStretch || !hasPlayed || expandRun > 0 { break }
            adjusted = true
            if !adjustDelay(now: nowNs, frame: need) { break }
        }

        trackLevel(need)
        if let base = output.baseAddress { base.update(from: fifo, count: need) }
        fifoCount -= need
        fifo.update(from: fifo + need, count: fifoCount)
        if hasPlayed { stats.currentDelayMs = delayMs(at: nowNs + duration(samples: need), timestampAfterFIFO: playoutTimestamp) }
        var buffered = fifoCount / channels * unitsPerFrame
        if entryCount > 0 {
            let last = entries[entryCount - 1]
            buffered += Int(last.timestamp + Int64(last.duration) - (hasPlayed ? playoutTimestamp : entries[0].timestamp))
        }
        stats.bufferedMs = RTPClock.milliseconds(rtpUnits: buffered)
        monitor?.publish(stats)
    }

    /// ``pull(into:now:)`` at the monotonic clock's now (``RTPClock/monotonicNanoseconds()``),
    /// the clock the network thread stamps arrivals with.
    public mutating func pull(into output: UnsafeMutableBufferPointer<Int16>) {
        pull(into: output, now: RTPClock.monotonicNanoseconds())
    }

    /// - Parameters:
    ///   - period: the pull's length in 48 kHz units.
    ///   - now: the pull's time, on the arrivals' clock.
    private mutating func updateTarget(period: Int, now: Int64) {
        let q = estimator.quantile(configuration.delayQuantile)
        stats.jitterQuantileMs = q
        var target = max(q, peaks.peakMs(at: now)) + configuration.marginMs
        let periodMs = RTPClock.milliseconds(rtpUnits: period)
        let packetMs = RTPClock.milliseconds(rtpUnits: lastDuration)
        // Aligned periods (whole Opus quanta of 2.5 ms that divide the packet, and divide or
        // are made of the 20 ms pieces an underrun is filled with) keep packet boundaries on
        // pull boundaries: a packet is decoded at the pull that plays its first sample, and
        // the delay moves by whole periods, so it sits within one period above the target.
        // Any other period ends, at some phases, inside a packet that must already be here:
        // up to one period of delay more (measured at the period's first sample).
        let aligned = period > 0 && period % Self.quantum == 0 && period <= lastDuration && lastDuration % period == 0
            && (Self.chunk % period == 0 || period % Self.chunk == 0)
        if !aligned { target += periodMs }
        if configuration.useFEC, packetsSinceFEC < 100, lossRate > 0.005 {
            // While packets are lost, the packet after a lost one must be here when the lost
            // one is due, which takes a packet's time on top of the jitter. Aligned periods
            // shorter than a packet leave room for part of it within the jitter quantile +
            // one packet: aim so that the band the delay is kept in, a period wide, ends
            // there (the drop margin may take it up to 2 ms past: see Docs/rtp.md). Only
            // while the peer's packets carry FEC. `fecDelay` takes the whole packet.
            if configuration.fecDelay {
                target += packetMs
            } else if aligned {
                target += packetMs - periodMs
            }
        }
        target = min(configuration.maximumDelayMs, max(configuration.minimumDelayMs, target))
        stats.targetDelayMs = target
        // The level delay is only lowered to: it follows the target up at once and down
        // by at most 5 ms per second, so a target that wavers does not make the buffer
        // drop a frame now and repeat one a moment later.
        heldTarget = max(target, heldTarget - 5 * periodMs / 1000)
    }

    /// Nanoseconds that `samples` interleaved samples last.
    private func duration(samples: Int) -> Int64 {
        Int64(samples / configuration.channels) * 1_000_000_000 / Int64(configuration.sampleRate)
    }

    /// The added delay, in ms, of the FIFO's first sample played at `time`: the FIFO
    /// ends just before `timestampAfterFIFO`.
    private func delayMs(at time: Int64, timestampAfterFIFO: Int64) -> Double {
        delayMs(of: timestampAfterFIFO - Int64(fifoCount / configuration.channels * unitsPerFrame), playedAt: time)
    }

    /// The added delay, in ms, of audio with RTP time `timestamp` played at `time`:
    /// how much later than the fastest packets' arrival it plays.
    private func delayMs(of timestamp: Int64, playedAt time: Int64) -> Double {
        Double(time - (estimator.baseTransit + nanoseconds(timestamp))) / 1e6
    }

    /// Appends at least one piece of audio to the FIFO.
    private mutating func produce(now: Int64) {
        guard hasPlayed else {
            // Nothing played yet: silence until the first packet has waited its target.
            if entryCount > 0, readyToStart(entries[0], now: now) {
                playoutTimestamp = entries[0].timestamp
                lastSequence = entries[0].sequence - 1
                hasPlayed = true
                talkSpurtPending = false
                decodeFirst(now: now)
            } else {
                appendSilence(waitPiece)
            }
            return
        }
        guard entryCount > 0 else {
            // Underrun (or a pause): extend by concealment, keep the timeline. Past
            // `maxConcealedExpand` the sender is taken to be silent: the decoder's
            // concealment has faded to comfort noise by then, and it is counted as such.
            conceal(Self.chunk)
            if expandRun < Self.maxConcealedExpand {
                stats.concealedMs += RTPClock.milliseconds(rtpUnits: Self.chunk)
            } else {
                stats.comfortNoiseMs += RTPClock.milliseconds(rtpUnits: Self.chunk)
            }
            expandRun += Self.chunk
            return
        }
        let next = entries[0]
        if next.timestamp == playoutTimestamp {
            if talkSpurtPending, !readyToStart(next, now: now) {
                comfortNoise(waitPiece, advance: false)
                return
            }
            talkSpurtPending = false
            if expandRun > 0 {
                // The buffer ran dry and the packet came after all: concealment without loss.
                stats.concealedWithoutLossMs += RTPClock.milliseconds(rtpUnits: min(expandRun, Self.maxConcealedExpand))
                expandRun = 0
            }
            decodeFirst(now: now)
            return
        }

        // The packet at the playout point is missing; `next` comes later.
        let gap = Int(next.timestamp - playoutTimestamp)
        let missing = audioMissing(before: next)
        if missing <= 0 {
            // A timestamp gap with no sequence gap: the sender was silent (DTX). The
            // concealment already played while empty counts as comfort noise.
            if expandRun > 0 {
                let covered = min(expandRun, gap)
                let counted = RTPClock.milliseconds(rtpUnits: min(expandRun, Self.maxConcealedExpand))
                stats.concealedMs -= counted
                stats.comfortNoiseMs += counted
                expandRun = 0
                playoutTimestamp += Int64(covered)
                talkSpurtPending = true
                return
            }
            talkSpurtPending = true
            let piece = quantized(min(gap, Self.chunk))
            if piece == 0 {
                playoutTimestamp = next.timestamp  // less than 2.5 ms: skip it
            } else {
                comfortNoise(piece, advance: true)
            }
            return
        }
        // Packets lost. Concealment already played while empty covers part of the gap.
        if expandRun > 0 {
            let covered = min(expandRun, gap)
            expandRun = 0
            playoutTimestamp += Int64(covered)
            if covered == gap { finishGap(next) }
            return
        }
        if configuration.useFEC, next.hasFEC, gap == next.frameDuration, gap <= OpusPayload.maxDuration {
            recoverWithFEC(next)
            return
        }
        let fecPart = configuration.useFEC && next.hasFEC ? next.frameDuration : 0
        let piece = quantized(min(gap - fecPart, Self.chunk))
        if piece == 0 {
            // Less than 2.5 ms to fill: skip it.
            playoutTimestamp = next.timestamp
            finishGap(next)
            return
        }
        conceal(piece)
        stats.concealedMs += RTPClock.milliseconds(rtpUnits: piece)
        playoutTimestamp += Int64(piece)
        if playoutTimestamp == next.timestamp { finishGap(next) }
    }

    /// Audio packets missing between the last one played and `next`: the sequence numbers in
    /// between, less those of telephone events.
    private func audioMissing(before next: Entry) -> Int64 {
        var missing = next.sequence - lastSequence - 1
        guard missing > 0 else { return missing }
        for i in 0..<min(eventCount, Self.eventMemory) where eventSequences[i] > lastSequence && eventSequences[i] < next.sequence {
            missing -= 1
        }
        return missing
    }

    /// Counts the packets that were missing before `next` once the gap is filled.
    private mutating func finishGap(_ next: Entry) {
        let missing = audioMissing(before: next)
        if missing > 0 {
            stats.lost += Int(missing)
            for _ in 0..<min(missing, 50) { lossRate += (1 - lossRate) / 100 }
        }
        lastSequence = next.sequence - 1
    }

    private func quantized(_ units: Int) -> Int { max(0, units) / Self.quantum * Self.quantum }

    /// Whether a talk spurt's first packet has waited long enough: its delay at the
    /// playout point reaches the target.
    private func readyToStart(_ entry: Entry, now: Int64) -> Bool {
        delayMs(of: entry.timestamp, playedAt: now + duration(samples: fifoCount)) >= stats.targetDelayMs - 0.5
    }

    /// Decodes the first buffered packet (at the playout point) into the FIFO.
    private mutating func decodeFirst(now: Int64) {
        let entry = entries[0]
        let delay = delayMs(of: entry.timestamp, playedAt: now + duration(samples: fifoCount))
        delaySum += delay
        delayCount += 1
        stats.meanDelayMs = delaySum / Double(delayCount)
        let payload = UnsafeRawBufferPointer(start: payloads + entry.slot * configuration.maxPayloadSize, count: entry.length)
        let space = UnsafeMutableBufferPointer(start: fifo + fifoCount, count: fifoCapacity - fifoCount)
        do {
            let frames = try decoder.decode(payload, into: space)
            fifoCount += frames * configuration.channels
        } catch {
            stats.undecodable += 1
            conceal(entry.duration)
            stats.concealedMs += RTPClock.milliseconds(rtpUnits: entry.duration)
        }
        finishGap(entry)
        lossRate -= lossRate / 100
        lastDuration = entry.duration
        lastSequence = entry.sequence
        let shift = entry.sequence - lastDecoded
        decodedMask = shift >= 64 || shift < 0 ? 0 : decodedMask << UInt64(shift)
        decodedMask |= 1
        lastDecoded = entry.sequence
        playoutTimestamp = entry.timestamp + Int64(entry.duration)
        removeFirst()
    }

    private mutating func recoverWithFEC(_ next: Entry) {
        let payload = UnsafeRawBufferPointer(start: payloads + next.slot * configuration.maxPayloadSize, count: next.length)
        let frames = next.frameDuration / unitsPerFrame
        let space = UnsafeMutableBufferPointer(start: fifo + fifoCount, count: fifoCapacity - fifoCount)
        do {
            fifoCount += try decoder.decodeFEC(from: payload, frames: frames, into: space) * configuration.channels
            stats.fecRecovered += 1
        } catch {
            conceal(next.frameDuration)
            stats.concealedMs += RTPClock.milliseconds(rtpUnits: next.frameDuration)
        }
        playoutTimestamp = next.timestamp
        finishGap(next)
    }

    /// Appends `units` (48 kHz) of packet loss concealment.
    private mutating func conceal(_ units: Int) {
        let frames = units / unitsPerFrame
        let space = UnsafeMutableBufferPointer(start: fifo + fifoCount, count: fifoCapacity - fifoCount)
        if let n = try? decoder.concealLoss(frames: frames, into: space) {
            fifoCount += n * configuration.channels
        } else {
            appendSilence(units)
        }
    }

    /// Appends `units` of comfort noise (the decoder's concealment, which fades to its
    /// comfort noise in SILK), optionally moving the timeline.
    private mutating func comfortNoise(_ units: Int, advance: Bool) {
        conceal(units)
        stats.comfortNoiseMs += RTPClock.milliseconds(rtpUnits: units)
        if advance { playoutTimestamp += Int64(units) }
    }

    private mutating func appendSilence(_ units: Int) {
        let samples = units / unitsPerFrame * configuration.channels
        (fifo + fifoCount).update(repeating: 0, count: samples)
        fifoCount += samples
    }

    // MARK: Delay control

    /// Removes or repeats the frame about to play, if it is quiet, to keep the delay
    /// within one frame above the target. Moving whole frames keeps packet boundaries
    /// on pull boundaries: a fraction of a frame left in the FIFO would add delay
    /// without making any packet safer. Returns whether it changed the FIFO.
    private mutating func adjustDelay(now: Int64, frame: Int) -> Bool {
        // The delay measured now carries the noise of arrival and wake-up times: decide
        // on a smoothed value (over about 160 ms), with a margin on each side, so that the
        // buffer does not drop and repeat frames around a band edge.
        let frameMs = Double(frame / configuration.channels) * 1000 / Double(configuration.sampleRate)
        let measured = delayMs(at: now, timestampAfterFIFO: playoutTimestamp)
        let delay = smoothedDelay.map { $0 + (measured - $0) * min(1, frameMs / 160) } ?? measured
        smoothedDelay = delay
        let target = stats.targetDelayMs
        let quiet = isQuiet(frame)
        if delay - frameMs >= heldTarget + Self.dropMarginMs, quiet || delay - target > 150 {
            // A frame less still meets the target: drop it (any frame, far above the target).
            fifoCount -= frame
            fifo.update(from: fifo + frame, count: fifoCount)
            stats.droppedMs += frameMs
            smoothedDelay = delay - frameMs
            return true
        }
        if delay < target - Self.repeatMarginMs, quiet, fifoCount + frame <= fifoCapacity {
            // Below the target, as when the receiver's clock runs faster than the sender's:
            // play the quiet frame twice before packets start to be late.
            (fifo + frame).update(from: fifo, count: fifoCount)
            fifoCount += frame
            stats.stretchedMs += frameMs
            smoothedDelay = delay + frameMs
            return true
        }
        return false
    }

    /// Mean square of the next `count` samples.
    private func power(_ count: Int) -> Double {
        let n = min(count, fifoCount)
        guard n > 0 else { return 0 }
        var sum = 0.0
        for i in 0..<n { sum += Double(fifo[i]) * Double(fifo[i]) }
        return sum / Double(n)
    }

    /// Whether the frame about to play is quiet: within 10 dB of the tracked noise
    /// floor, or below -60 dBFS, and never above -35 dBFS.
    private func isQuiet(_ count: Int) -> Bool {
        let p = power(count)
        let absoluteSilence = 1074.0  // -60 dBFS
        let loud = 339_000.0  // -35 dBFS
        return p < loud && (p < absoluteSilence || p < noiseFloor * 10)
    }

    /// Follows the noise floor: down at once, up by about 2.5 dB per second (0.05 dB per
    /// 20 ms, whatever the period).
    private mutating func trackLevel(_ count: Int) {
        let p = max(power(count), 1)
        let pulls = Double(count / configuration.channels) / Double(configuration.sampleRate / 50)
        noiseFloor = p < noiseFloor ? p : noiseFloor * (1 + 0.0116 * pulls)
    }
}
