import Platform

extension EchoPathDelayMove {
    /// An echo whose delay jumps within the call, as a stream that drops or repeats audio moves
    /// it: every 1.5 to 4 s the delay the echo sees takes a new value, 0 to 60 ms above where it
    /// started, in 5 ms steps, and stays there until the next jump. The first move comes after
    /// 3 s, so a canceller has converged once before the delay moves.
    ///
    /// - Parameters: `duration`: the stream's length in seconds; `seed`: the schedule's seed.
    /// - Returns: the moves, in time order (each relative to the delay before it).
    public static func bursts(duration: Double, seed: UInt64) -> [EchoPathDelayMove] {
        var random = SeededRandom(seed: seed &+ 0x5EED)
        var moves: [EchoPathDelayMove] = []
        var time = 3.0, offset = 0.0
        while time < duration {
            var next = offset
            while next == offset { next = Double(random.next() % 13) * 0.005 }
            moves.append(EchoPathDelayMove(time: time, change: next - offset))
            offset = next
            time += 1.5 + Double(random.next() % 2501) / 1000
        }
        return moves
    }
}
