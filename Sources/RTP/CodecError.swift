public import Opus
public import SpanDSP
public import SpeexDSP

/// Why a codec's encoder or decoder could not be made for a call.
///
/// Thread safety: a value type; safe from any thread.
public enum CodecError: Error, Sendable, CustomStringConvertible {
    /// Opus refused the configuration.
    case opus(OpusError)
    /// spandsp could not make a G.711 or G.722 part.
    case spanDSP(SpanDSPError)
    /// The resampler between the call's rate and the codec's could not be made.
    case resampler(SpeexError)
    /// The codec cannot do what was asked (stereo G.711, FEC without Opus).
    case unsupported(String)

    public var description: String {
        switch self {
        case .opus(let error): "Opus: \(error)"
        case .spanDSP(let error): "spandsp: \(error)"
        case .resampler(let error): "resampler: \(error)"
        case .unsupported(let what): "unsupported: \(what)"
        }
    }

    /// A resampler from `input` to `output` Hz, or nil when they are equal. Quality 3 (SpeexDSP's
    /// VoIP setting), as the voice processing's.
    static func resampler(from input: Int, to output: Int) throws(CodecError) -> SpeexResampler? {
        guard input != output else { return nil }
        do { return try SpeexResampler(channels: 1, inputRate: input, outputRate: output, quality: 3) } catch {
            throw .resampler(error)
        }
    }
}
