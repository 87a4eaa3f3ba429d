import Opus
import SpanDSP
import SpeexDSP

/// What the jitter buffer needs to know of a payload before it decodes it.
struct PayloadInfo {
    /// The audio the packet carries, in 48 kHz units.
    var duration: Int
    /// One frame of it, in 48 kHz units (the piece FEC rebuilds).
    var frameDuration: Int
    /// Whether it carries in-band FEC for the packet before it.
    var hasFEC: Bool
}

/// The jitter buffer's decoder, for the codec the call negotiated.
///
/// Thread safety: not thread-safe; owned by the jitter buffer (the I/O thread). Nothing but
/// `init` allocates.
enum PayloadDecoder: ~Copyable {
    case opus(OpusDecoder)
    case sampled(SampledDecoder)

    /// A decoder for `codec` giving audio at `sampleRate` Hz.
    init(codec: AudioCodec, sampleRate: Int, channels: Int) throws(CodecError) {
        if codec == .opus {
            do { self = .opus(try OpusDecoder(sampleRate: sampleRate, channels: channels)) } catch { throw .opus(error) }
        } else {
            guard channels == 1 else { throw .unsupported("\(codec) is mono; the call has \(channels) channels") }
            self = .sampled(try SampledDecoder(codec: codec, outputRate: sampleRate))
        }
    }

    /// The payload's duration and FEC, or nil when it cannot be a packet of this codec.
    func inspect(_ payload: UnsafeRawBufferPointer) -> PayloadInfo? {
        switch self {
        case .opus:
            guard let info = OpusPayload.parse(payload) else { return nil }
            return PayloadInfo(duration: info.duration, frameDuration: info.frameDuration,
                               hasFEC: OpusPayload.hasFEC(payload, info: info))
        case .sampled(let decoder):
            // One byte per tick of the 8 kHz clock (a G.711 sample, a G.722 sample pair).
            guard decoder.codec.isWellFormed(payload) else { return nil }
            let duration = payload.count * decoder.codec.timelineUnitsPerTimestamp
            return PayloadInfo(duration: duration, frameDuration: duration, hasFEC: false)
        }
    }

    /// Decodes a payload; returns the frames written.
    mutating func decode(_ payload: UnsafeRawBufferPointer, into pcm: UnsafeMutableBufferPointer<Int16>) throws(CodecError) -> Int {
        switch consume self {
        case .opus(let decoder):
            let result = decoder.decodeResult(payload, into: pcm)
            self = .opus(decoder)
            return try result.get()
        case .sampled(var decoder):
            let n = decoder.decode(payload, into: pcm)
            self = .sampled(decoder)
            return n
        }
    }

    /// Rebuilds the packet before `next` from its in-band FEC (Opus only).
    func decodeFEC(from next: UnsafeRawBufferPointer, frames: Int,
                   into pcm: UnsafeMutableBufferPointer<Int16>) throws(CodecError) -> Int {
        switch self {
        case .opus(let decoder):
            do { return try decoder.decodeFEC(from: next, frames: frames, into: pcm) } catch { throw .opus(error) }
        case .sampled:
            throw .unsupported("in-band FEC")
        }
    }

    /// Writes `frames` of concealment: what a lost packet probably held, fading out.
    mutating func conceal(frames: Int, into pcm: UnsafeMutableBufferPointer<Int16>) throws(CodecError) -> Int {
        switch consume self {
        case .opus(let decoder):
            let result = decoder.concealResult(frames: frames, into: pcm)
            self = .opus(decoder)
            return try result.get()
        case .sampled(var decoder):
            let n = decoder.conceal(frames: frames, into: pcm)
            self = .sampled(decoder)
            return n
        }
    }

    /// Forgets the stream (a new source).
    mutating func reset() {
        switch consume self {
        case .opus(let decoder):
            try? decoder.reset()
            self = .opus(decoder)
        case .sampled(var decoder):
            decoder.reset()
            self = .sampled(decoder)
        }
    }
}

/// G.711 or G.722 decoding with spandsp's concealment, resampled to the call's rate.
///
/// Thread safety: not thread-safe; one owner. Nothing but `init` allocates.
struct SampledDecoder: ~Copyable {
    let codec: AudioCodec
    private var g722: G722Decoder?
    private var concealer: PacketLossConcealer
    private let resampler: SpeexResampler?
    /// Audio at the codec's rate, before resampling: the longest packet (120 ms at 16 kHz).
    private let coded: UnsafeMutableBufferPointer<Int16>
    private let codedRate: Int
    private let outputRate: Int

    init(codec: AudioCodec, outputRate: Int) throws(CodecError) {
        guard let codedRate = codec.codedSampleRate else { throw .unsupported("\(codec) is not sample-based") }
        let resampler = try CodecError.resampler(from: codedRate, to: outputRate)
        let concealer: PacketLossConcealer
        do throws(SpanDSPError) { concealer = try PacketLossConcealer() } catch { throw .spanDSP(error) }
        let g722: G722Decoder?
        do throws(SpanDSPError) { g722 = codec == .g722 ? try G722Decoder() : nil } catch { throw .spanDSP(error) }
        self.codec = codec
        self.codedRate = codedRate
        self.outputRate = outputRate
        self.resampler = resampler
        self.concealer = concealer
        self.g722 = g722
        coded = .allocate(capacity: codedRate * 120 / 1000)
        coded.initialize(repeating: 0)
    }

    deinit { coded.deallocate() }

    mutating func decode(_ payload: UnsafeRawBufferPointer, into pcm: UnsafeMutableBufferPointer<Int16>) -> Int {
        let space = UnsafeMutableBufferPointer(rebasing: coded[..<min(coded.count, payload.count * codedRate / 8000)])
        let n: Int
        switch codec {
        case .pcmu: n = G711.decode(UnsafeRawBufferPointer(rebasing: payload[..<space.count]), law: .mulaw, into: space)
        case .pcma: n = G711.decode(UnsafeRawBufferPointer(rebasing: payload[..<space.count]), law: .alaw, into: space)
        default: n = g722?.decode(UnsafeRawBufferPointer(rebasing: payload[..<(space.count / 2)]), into: space) ?? 0
        }
        concealer.received(UnsafeMutableBufferPointer(rebasing: coded[..<n]))
        return convert(n, into: pcm)
    }

    mutating func conceal(frames: Int, into pcm: UnsafeMutableBufferPointer<Int16>) -> Int {
        let n = min(coded.count, frames * codedRate / outputRate)
        concealer.conceal(UnsafeMutableBufferPointer(rebasing: coded[..<n]))
        return convert(n, into: pcm)
    }

    mutating func reset() {
        g722?.reset()
        concealer.reset()
        resampler?.reset()
    }

    /// Moves `n` coded samples to `pcm` at the output rate.
    private func convert(_ n: Int, into pcm: UnsafeMutableBufferPointer<Int16>) -> Int {
        let input = UnsafeBufferPointer(rebasing: coded[..<n])
        return resampler?.process(input: input, output: pcm).produced ?? pcm.update(fromContentsOf: input)
    }
}

extension OpusDecoder {
    /// ``decode(_:into:)`` as a value, so the caller can put the decoder back before it throws.
    func decodeResult(_ payload: UnsafeRawBufferPointer, into pcm: UnsafeMutableBufferPointer<Int16>) -> Result<Int, CodecError> {
        do { return .success(try decode(payload, into: pcm)) } catch { return .failure(.opus(error)) }
    }

    /// ``concealLoss(frames:into:)`` as a value.
    func concealResult(frames: Int, into pcm: UnsafeMutableBufferPointer<Int16>) -> Result<Int, CodecError> {
        do { return .success(try concealLoss(frames: frames, into: pcm)) } catch { return .failure(.opus(error)) }
    }
}
