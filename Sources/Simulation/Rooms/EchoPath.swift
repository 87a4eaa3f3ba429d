import DSP

/// Everything between the loudspeaker signal and the echo it leaves in the microphone.
///
/// Thread safety: a value type; safe from any thread.
public struct EchoPathConfiguration: Sendable, Equatable {
    /// Sampling rate of the render and echo signals, in Hz.
    public var sampleRate: Int
    /// The room's response from loudspeaker to microphone (acoustic delay included).
    public var impulseResponse: [Float]
    /// Scale applied to the response (the echo's level).
    public var gain: Float
    /// Delay before the room, in seconds: converters and device buffers that the
    /// application does not know about.
    public var bulkDelay: Double
    /// The loudspeaker's distortion, applied before the room.
    public var nonlinearity: LoudspeakerNonlinearity
    /// How much faster the capture clock runs than the playback clock, in parts per million.
    public var driftPPM: Double
    /// An abrupt change of the room response (someone moves the phone), if any.
    public var change: EchoPathChange?
    /// How far clock drift may move the delay before the simulated device slips back (an
    /// xrun), in seconds.
    public var maximumDriftExcursion: Double
    /// Partition size of the convolution in samples (a power of two): bigger is cheaper per sample.
    public var blockSize: Int
    /// Moves of the delay within the stream, in time order (a stream that drops or repeats
    /// audio: the echo's delay changes under the canceller); each adds to the delay from then on.
    public var delayMoves: [EchoPathDelayMove] = []

    public init(sampleRate: Int, impulseResponse: [Float], gain: Float = 1, bulkDelay: Double = 0,
                nonlinearity: LoudspeakerNonlinearity = .none, driftPPM: Double = 0, change: EchoPathChange? = nil,
                maximumDriftExcursion: Double = 0.25, blockSize: Int = 128) {
        self.sampleRate = sampleRate
        self.impulseResponse = impulseResponse
        self.gain = gain
        self.bulkDelay = bulkDelay
        self.nonlinearity = nonlinearity
        self.driftPPM = driftPPM
        self.change = change
        self.maximumDriftExcursion = maximumDriftExcursion
        self.blockSize = blockSize
    }
}

/// A change of the echo's delay at a given time.
///
/// Thread safety: a value type; safe from any thread.
public struct EchoPathDelayMove: Sendable, Equatable {
    /// Seconds from the start of the stream.
    public var time: Double
    /// Seconds the delay grows by (negative: shrinks).
    public var change: Double

    public init(time: Double, change: Double) {
        self.time = time
        self.change = change
    }
}

/// A switch to a second room response at a given time.
///
/// Thread safety: a value type; safe from any thread.
public struct EchoPathChange: Sendable, Equatable {
    /// Seconds from the start of the stream.
    public var time: Double
    /// The response from then on (scaled by the same ``EchoPathConfiguration/gain``).
    public var impulseResponse: [Float]

    public init(time: Double, impulseResponse: [Float]) {
        self.time = time
        self.impulseResponse = impulseResponse
    }
}

/// An invalid echo path configuration.
public struct EchoPathError: Error, Sendable, Equatable, CustomStringConvertible {
    public let message: String
    public init(_ message: String) { self.message = message }
    public var description: String { "invalid echo path: \(message)" }
}

/// Turns the loudspeaker (render) signal into the echo at the microphone, block by block.
///
/// The chain: loudspeaker ``LoudspeakerNonlinearity`` (memoryless) -> room response (partitioned
/// FFT convolution with a direct-form head, so no latency) -> bulk delay and clock drift (a
/// time-varying windowed-sinc delay line) -> echo. With an ``EchoPathChange``, a second room
/// runs alongside from the start (so its reverberation is there when it takes over) and takes
/// over at the change time; from then on the first room is no longer run.
///
/// Streaming and offline use are the same code: ``render(_:)`` is one call of
/// ``process(render:echo:)`` over the whole signal, and any split of the input into blocks gives
/// bit-identical output.
///
/// Thread safety: not thread-safe; one owner at a time (for example an I/O thread).
/// ``process(render:echo:)`` does not allocate, lock or log.
public final class EchoPath {
    public let configuration: EchoPathConfiguration
    private let room: PartitionedConvolver
    private let changedRoom: PartitionedConvolver?
    private let changeSample: Int
    private let delay: DriftingDelay
    /// The delay moves as (sample, change in samples), and the next one to apply.
    private let moves: [(sample: Int, samples: Double)]
    private var nextMove = 0
    private let chunk = 512
    private let driven: UnsafeMutablePointer<Float>
    private let echoed: UnsafeMutablePointer<Float>
    private let changed: UnsafeMutablePointer<Float>
    /// Samples processed so far.
    public private(set) var sampleCount = 0

    /// Builds the path; all memory is allocated here.
    public init(_ configuration: EchoPathConfiguration) throws(EchoPathError) {
        let c = configuration
        guard (1000...384_000).contains(c.sampleRate) else { throw EchoPathError("sample rate \(c.sampleRate) Hz") }
        guard !c.impulseResponse.isEmpty else { throw EchoPathError("empty impulse response") }
        guard c.bulkDelay >= 0, c.bulkDelay <= 10 else { throw EchoPathError("bulk delay \(c.bulkDelay) s must be in 0...10") }
        guard abs(c.driftPPM) <= 10_000 else { throw EchoPathError("drift \(c.driftPPM) ppm must be within +-10000") }
        guard c.maximumDriftExcursion > 0 else { throw EchoPathError("maximum drift excursion must be > 0") }
        guard c.blockSize >= 8, c.blockSize & (c.blockSize - 1) == 0 else {
            throw EchoPathError("block size \(c.blockSize) must be a power of two >= 8")
        }
        if let change = c.change {
            guard change.time >= 0 else { throw EchoPathError("change time must be >= 0") }
            guard !change.impulseResponse.isEmpty else { throw EchoPathError("empty changed impulse response") }
        }
        self.configuration = c
        room = PartitionedConvolver(impulseResponse: c.impulseResponse.map { $0 * c.gain }, blockSize: c.blockSize)
        changedRoom = c.change.map {
            PartitionedConvolver(impulseResponse: $0.impulseResponse.map { $0 * c.gain }, blockSize: c.blockSize)
        }
        changeSample = c.change.map { Int(($0.time * Double(c.sampleRate)).rounded()) } ?? Int.max
        let fs = Double(c.sampleRate)
        moves = c.delayMoves.map { (Int(($0.time * fs).rounded()), $0.change * fs) }
        var offset = 0.0, widest = 0.0, lowest = 0.0
        for move in moves {
            offset += move.samples
            widest = max(widest, abs(offset))
            lowest = min(lowest, offset)
        }
        guard moves.isEmpty || c.bulkDelay * fs + lowest >= Double(SincKernel.halfTaps) else {
            throw EchoPathError("the delay moves under \(SincKernel.halfTaps) samples")
        }
        // The moves must not count as drift slipping back into range.
        delay = DriftingDelay(delay: c.bulkDelay * fs, ppm: c.driftPPM,
                              maximumExcursion: max(c.maximumDriftExcursion * fs, widest + 1), moves: !moves.isEmpty)
        driven = .allocate(capacity: chunk)
        echoed = .allocate(capacity: chunk)
        changed = .allocate(capacity: chunk)
    }

    deinit {
        driven.deallocate()
        echoed.deallocate()
        changed.deallocate()
    }

    /// How many times clock drift made the simulated device slip.
    public var slips: Int { delay.slips }

    /// Computes the echo of `render`; both buffers hold the same number of samples and may not overlap.
    public func process(render: UnsafeBufferPointer<Float>, echo: UnsafeMutableBufferPointer<Float>) {
        precondition(render.count == echo.count, "render and echo must hold the same number of samples")
        guard let input = render.baseAddress, let output = echo.baseAddress else { return }
        let nonlinearity = configuration.nonlinearity
        var done = 0
        while done < render.count {
            let n = min(chunk, render.count - done)
            for i in 0..<n { driven[i] = nonlinearity.apply(input[done + i]) }
            if let changedRoom, sampleCount >= changeSample {
                // Past the change only the new room is heard: the old one is no longer run.
                changedRoom.process(driven, echoed, count: n)
            } else {
                room.process(driven, echoed, count: n)
                if let changedRoom {
                    changedRoom.process(driven, changed, count: n)
                    for i in 0..<n where sampleCount + i >= changeSample { echoed[i] = changed[i] }
                }
            }
            delayed(count: n, into: output + done)
            sampleCount += n
            done += n
        }
    }

    /// Delays the chunk in `echoed` into `output`, moving the delay at the samples it moves at.
    private func delayed(count n: Int, into output: UnsafeMutablePointer<Float>) {
        var start = 0
        while start < n {
            var end = n
            if nextMove < moves.count { end = min(n, max(start, moves[nextMove].sample - sampleCount)) }
            if end > start { delay.process(echoed + start, output + start, count: end - start) }
            start = end
            if start < n, nextMove < moves.count, moves[nextMove].sample - sampleCount <= start {
                delay.move(by: moves[nextMove].samples)
                nextMove += 1
            }
        }
    }

    /// Streaming convenience: the echo of the next `render` samples (allocates; for tools and tests).
    public func process(_ render: [Float]) -> [Float] {
        var echo = [Float](repeating: 0, count: render.count)
        render.withUnsafeBufferPointer { r in echo.withUnsafeMutableBufferPointer { process(render: r, echo: $0) } }
        return echo
    }

    /// The echo of a whole signal through a new path (offline use).
    public static func render(_ configuration: EchoPathConfiguration, signal: [Float]) throws(EchoPathError) -> [Float] {
        try EchoPath(configuration).process(signal)
    }
}

// An echo path may be created on one thread and handed to the I/O thread; it has no shared
// state, so one owner at a time is enough (the same rule as the SpeexDSP wrappers).
extension EchoPath: @unchecked Sendable {}
