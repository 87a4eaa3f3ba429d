import Opus
import SpanDSP
import SpeexDSP

/// The sender's encoder, for the codec the call negotiated.
///
/// Thread safety: not thread-safe; owned by the sender (the I/O thread). Nothing but `init`
/// allocates.
enum PayloadEncoder: ~Copyable {
    case opus(OpusEncoder)
    case sampled(SampledEncoder)

    /// An encoder for `codec` taking `configuration`'s frames (its rate, channels and duration).
    init(codec: AudioCodec, configuration: OpusCallConfiguration) throws(CodecError) {
        if codec == .opus {
            do { self = .opus(try configuration.makeEncoder()) } catch { throw .opus(error) }
        } else {
            guard configuration.channels == 1 else { throw .unsupported("\(codec) is mono; the call has 2 channels") }
            self = .sampled(try SampledEncoder(codec: codec, inputRate: configuration.sampleRate,
                                               frameMilliseconds: configuration.frameMilliseconds))
        }
    }

    /// The delay the encoder adds, in frames at the call's rate.
    var lookahead: Int {
        switch self {
        case .opus(let encoder): encoder.lookahead
        case .sampled(let encoder): encoder.lookahead
        }
    }

    /// Encodes one frame; returns the payload's length.
    mutating func encode(_ pcm: UnsafeBufferPointer<Int16>, into payload: UnsafeMutableRawBufferPointer) throws(CodecError) -> Int {
        switch consume self {
        case .opus(let encoder):
            let result: Result<Int, CodecError>
            do { result = .success(try encoder.encode(pcm, into: payload)) } catch { result = .failure(.opus(error)) }
            self = .opus(encoder)
            return try result.get()
        case .sampled(var encoder):
            let n = encoder.encode(pcm, into: payload)
            self = .sampled(encoder)
            return n
        }
    }

    /// Plans for `percent` loss (Opus's FEC strength); nothing for the others.
    func setExpectedPacketLoss(percent: Int) throws(CodecError) {
        switch self {
        case .opus(let encoder):
            do { try encoder.setExpectedPacketLoss(percent: percent) } catch { throw .opus(error) }
        case .sampled:
            return
        }
    }

    /// Sets Opus's bitrate; the others have one rate.
    func setBitrate(_ bitsPerSecond: Int) throws(CodecError) {
        switch self {
        case .opus(let encoder):
            do { try encoder.setBitrate(bitsPerSecond) } catch { throw .opus(error) }
        case .sampled:
            throw .unsupported("a bitrate for a fixed-rate codec")
        }
    }
}

/// G.711 or G.722 encoding of the call's audio, resampled to the codec's rate first.
///
/// Thread safety: not thread-safe; one owner. Nothing but `init` allocates.
struct SampledEncoder: ~Copyable {
    let codec: AudioCodec
    private var g722: G722Encoder?
    private let resampler: SpeexResampler?
    /// One frame at the codec's rate.
    private let coded: UnsafeMutableBufferPointer<Int16>

    init(codec: AudioCodec, inputRate: Int, frameMilliseconds: Int) throws(CodecError) {
        guard let codedRate = codec.codedSampleRate else { throw .unsupported("\(codec) is not sample-based") }
        let resampler = try CodecError.resampler(from: inputRate, to: codedRate)
        let g722: G722Encoder?
        do throws(SpanDSPError) { g722 = codec == .g722 ? try G722Encoder() : nil } catch { throw .spanDSP(error) }
        self.codec = codec
        self.g722 = g722
        self.resampler = resampler
        coded = .allocate(capacity: codedRate * frameMilliseconds / 1000)
        coded.initialize(repeating: 0)
    }

    deinit { coded.deallocate() }

    /// The delay it adds, in frames at the call's rate: the resampler's (G.722's QMF filters
    /// add 22 samples at 16 kHz more, left out as the decoder side's too).
    var lookahead: Int {
        switch resampler {
        case .some(let resampler): resampler.inputLatency
        case .none: 0
        }
    }

    mutating func encode(_ pcm: UnsafeBufferPointer<Int16>, into payload: UnsafeMutableRawBufferPointer) -> Int {
        let n = resampler?.process(input: pcm, output: coded).produced
            ?? coded.update(fromContentsOf: UnsafeBufferPointer(rebasing: pcm[..<min(pcm.count, coded.count)]))
        let frame = UnsafeBufferPointer(rebasing: coded[..<n])
        switch codec {
        case .pcmu: return G711.encode(frame, law: .mulaw, into: payload)
        case .pcma: return G711.encode(frame, law: .alaw, into: payload)
        default: return g722?.encode(frame, into: payload) ?? 0
        }
    }
}
