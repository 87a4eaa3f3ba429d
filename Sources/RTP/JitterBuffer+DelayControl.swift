// Delay control: dropping and repeating quiet frames to keep the delay on its target.
extension JitterBuffer {
    /// Removes or repeats the frame about to play, if it is quiet, to keep the delay
    /// within one frame above the target. Moving whole frames keeps packet boundaries
    /// on pull boundaries: a fraction of a frame left in the FIFO would add delay
    /// without making any packet safer. Returns whether it changed the FIFO.
    mutating func adjustDelay(now: Int64, frame: Int) -> Bool {
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
    func power(_ count: Int) -> Double {
        let n = min(count, fifoCount)
        guard n > 0 else { return 0 }
        var sum = 0.0
        for i in 0..<n { sum += Double(fifo[i]) * Double(fifo[i]) }
        return sum / Double(n)
    }

    /// Whether the frame about to play is quiet: within 10 dB of the tracked noise
    /// floor, or below -60 dBFS, and never above -35 dBFS.
    func isQuiet(_ count: Int) -> Bool {
        let p = power(count)
        let absoluteSilence = 1074.0  // -60 dBFS
        let loud = 339_000.0  // -35 dBFS
        return p < loud && (p < absoluteSilence || p < noiseFloor * 10)
    }

    /// Follows the noise floor: down at once, up by about 2.5 dB per second (0.05 dB per
    /// 20 ms, whatever the period).
    mutating func trackLevel(_ count: Int) {
        let p = max(power(count), 1)
        let pulls = Double(count / configuration.channels) / Double(configuration.sampleRate / 50)
        noiseFloor = p < noiseFloor ? p : noiseFloor * (1 + 0.0116 * pulls)
    }
}
