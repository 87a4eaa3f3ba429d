import Platform
import Opus

// The output side: playout decisions (NetEq's decision logic), decoding, FEC and concealment.
extension JitterBuffer {
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

    mutating func pullPiece(into output: UnsafeMutableBufferPointer<Int16>, now: UInt64) {
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
        if !packets.isEmpty {
            let last = packets.last
            buffered += Int(last.timestamp + Int64(last.duration) - (hasPlayed ? playoutTimestamp : packets.first.timestamp))
        }
        stats.bufferedMs = RTPClock.milliseconds(rtpUnits: buffered)
        monitor?.publish(stats)
    }

    /// ``pull(into:now:)`` at the monotonic clock's now (`MonotonicClock/nanoseconds()`),
    /// the clock the network thread stamps arrivals with.
    public mutating func pull(into output: UnsafeMutableBufferPointer<Int16>) {
        pull(into: output, now: MonotonicClock.nanoseconds())
    }

    /// - Parameters:
    ///   - period: the pull's length in 48 kHz units.
    ///   - now: the pull's time, on the arrivals' clock.
    mutating func updateTarget(period: Int, now: Int64) {
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
    func duration(samples: Int) -> Int64 {
        Int64(samples / configuration.channels) * 1_000_000_000 / Int64(configuration.sampleRate)
    }

    /// The added delay, in ms, of the FIFO's first sample played at `time`: the FIFO
    /// ends just before `timestampAfterFIFO`.
    func delayMs(at time: Int64, timestampAfterFIFO: Int64) -> Double {
        delayMs(of: timestampAfterFIFO - Int64(fifoCount / configuration.channels * unitsPerFrame), playedAt: time)
    }

    /// The added delay, in ms, of audio with RTP time `timestamp` played at `time`:
    /// how much later than the fastest packets' arrival it plays.
    func delayMs(of timestamp: Int64, playedAt time: Int64) -> Double {
        Double(time - (estimator.baseTransit + nanoseconds(timestamp))) / 1e6
    }

    /// Appends at least one piece of audio to the FIFO: NetEq's decision, one of start,
    /// extend (empty), play, fill silence (DTX) or fill loss.
    mutating func produce(now: Int64) {
        guard hasPlayed else { return startPlayout(now: now) }
        guard !packets.isEmpty else { return extendWhileEmpty() }
        let next = packets.first
        if next.timestamp == playoutTimestamp { return play(next, now: now) }
        // The packet at the playout point is missing; `next` comes later.
        if audioMissing(before: next) <= 0 {
            fillSilence(before: next)
        } else {
            fillLoss(before: next)
        }
    }

    /// Nothing played yet: silence until the first packet has waited its target.
    private mutating func startPlayout(now: Int64) {
        guard !packets.isEmpty, readyToStart(packets.first, now: now) else { return appendSilence(waitPiece) }
        playoutTimestamp = packets.first.timestamp
        lastSequence = packets.first.sequence - 1
        hasPlayed = true
        talkSpurtPending = false
        decodeFirst(now: now)
    }

    /// Underrun (or a pause): extend by concealment, keep the timeline. Past
    /// `maxConcealedExpand` the sender is taken to be silent: the decoder's concealment has
    /// faded to comfort noise by then, and it is counted as such.
    private mutating func extendWhileEmpty() {
        conceal(Self.chunk)
        if expandRun < Self.maxConcealedExpand {
            stats.concealedMs += RTPClock.milliseconds(rtpUnits: Self.chunk)
        } else {
            stats.comfortNoiseMs += RTPClock.milliseconds(rtpUnits: Self.chunk)
        }
        expandRun += Self.chunk
    }

    /// The packet at the playout point: played, unless it starts a talk spurt that must wait.
    private mutating func play(_ next: Entry, now: Int64) {
        if talkSpurtPending, !readyToStart(next, now: now) { return comfortNoise(waitPiece, advance: false) }
        talkSpurtPending = false
        if expandRun > 0 {
            // The buffer ran dry and the packet came after all: concealment without loss.
            stats.concealedWithoutLossMs += RTPClock.milliseconds(rtpUnits: min(expandRun, Self.maxConcealedExpand))
            expandRun = 0
        }
        decodeFirst(now: now)
    }

    /// A timestamp gap with no sequence gap: the sender was silent (DTX). The concealment
    /// already played while empty counts as comfort noise.
    private mutating func fillSilence(before next: Entry) {
        let gap = Int(next.timestamp - playoutTimestamp)
        talkSpurtPending = true
        if expandRun > 0 {
            let counted = RTPClock.milliseconds(rtpUnits: min(expandRun, Self.maxConcealedExpand))
            stats.concealedMs -= counted
            stats.comfortNoiseMs += counted
            playoutTimestamp += Int64(min(expandRun, gap))
            expandRun = 0
            return
        }
        let piece = quantized(min(gap, Self.chunk))
        if piece == 0 {
            playoutTimestamp = next.timestamp  // less than 2.5 ms: skip it
        } else {
            comfortNoise(piece, advance: true)
        }
    }

    /// Packets lost before `next`: concealment already played while empty covers part of the
    /// gap; else FEC from `next` rebuilds the last frame, and PLC the rest.
    private mutating func fillLoss(before next: Entry) {
        let gap = Int(next.timestamp - playoutTimestamp)
        if expandRun > 0 {
            let covered = min(expandRun, gap)
            expandRun = 0
            playoutTimestamp += Int64(covered)
            if covered == gap { finishGap(next) }
            return
        }
        if configuration.useFEC, next.hasFEC, gap == next.frameDuration, gap <= OpusPayload.maxDuration {
            return recoverWithFEC(next)
        }
        let fecPart = configuration.useFEC && next.hasFEC ? next.frameDuration : 0
        let piece = quantized(min(gap - fecPart, Self.chunk))
        if piece == 0 {
            // Less than 2.5 ms to fill: skip it.
            playoutTimestamp = next.timestamp
            return finishGap(next)
        }
        conceal(piece)
        stats.concealedMs += RTPClock.milliseconds(rtpUnits: piece)
        playoutTimestamp += Int64(piece)
        if playoutTimestamp == next.timestamp { finishGap(next) }
    }

    /// Audio packets missing between the last one played and `next`: the sequence numbers in
    /// between, less those of telephone events.
    func audioMissing(before next: Entry) -> Int64 {
        var missing = next.sequence - lastSequence - 1
        guard missing > 0 else { return missing }
        for i in 0..<min(eventCount, Self.eventMemory) where eventSequences[i] > lastSequence && eventSequences[i] < next.sequence {
            missing -= 1
        }
        return missing
    }

    /// Counts the packets that were missing before `next` once the gap is filled.
    mutating func finishGap(_ next: Entry) {
        let missing = audioMissing(before: next)
        if missing > 0 {
            stats.lost += Int(missing)
            // Over an Int range: a range of Int64 allocates its iterator in an unoptimised build.
            for _ in 0..<Int(min(missing, 50)) { lossRate += (1 - lossRate) / 100 }
        }
        lastSequence = next.sequence - 1
    }

    func quantized(_ units: Int) -> Int { max(0, units) / Self.quantum * Self.quantum }

    /// Whether a talk spurt's first packet has waited long enough: its delay at the
    /// playout point reaches the target.
    func readyToStart(_ entry: Entry, now: Int64) -> Bool {
        delayMs(of: entry.timestamp, playedAt: now + duration(samples: fifoCount)) >= stats.targetDelayMs - 0.5
    }

    /// Decodes the first buffered packet (at the playout point) into the FIFO.
    mutating func decodeFirst(now: Int64) {
        let entry = packets.first
        let delay = delayMs(of: entry.timestamp, playedAt: now + duration(samples: fifoCount))
        delaySum += delay
        delayCount += 1
        stats.meanDelayMs = delaySum / Double(delayCount)
        let payload = packets.payload(of: entry)
        let space = UnsafeMutableBufferPointer(start: fifo + fifoCount, count: fifoCapacity - fifoCount)
        if entry.timestamp >= silenceFrom { silenceLevel = nil }  // the talk spurt after the silence
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
        packets.removeFirst()
    }

    mutating func recoverWithFEC(_ next: Entry) {
        let payload = packets.payload(of: next)
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

    /// Appends `units` (48 kHz) of packet loss concealment, or of the peer's comfort noise in a
    /// silence it described.
    mutating func conceal(_ units: Int) {
        let frames = units / unitsPerFrame
        let space = UnsafeMutableBufferPointer(start: fifo + fifoCount, count: fifoCapacity - fifoCount)
        if let level = silenceLevel, playoutTimestamp >= silenceFrom {
            let samples = min(frames * configuration.channels, space.count)
            noise.fill(UnsafeMutableBufferPointer(rebasing: space[..<samples]), levelDBov: level)
            fifoCount += samples
            return
        }
        if let n = try? decoder.conceal(frames: frames, into: space) {
            fifoCount += n * configuration.channels
        } else {
            appendSilence(units)
        }
    }

    /// Appends `units` of comfort noise (the decoder's concealment, which fades to its
    /// comfort noise in SILK), optionally moving the timeline.
    mutating func comfortNoise(_ units: Int, advance: Bool) {
        conceal(units)
        stats.comfortNoiseMs += RTPClock.milliseconds(rtpUnits: units)
        if advance { playoutTimestamp += Int64(units) }
    }

    mutating func appendSilence(_ units: Int) {
        let samples = units / unitsPerFrame * configuration.channels
        (fifo + fifoCount).update(repeating: 0, count: samples)
        fifoCount += samples
    }
}
