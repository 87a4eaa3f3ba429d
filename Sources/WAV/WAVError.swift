/// Why a WAV file could not be read or written.
///
/// Each case names what was found, so the message alone tells a user what is
/// wrong with the file.
///
/// Thread safety: a value type; safe to use from any thread.
public enum WAVError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The file could not be opened, read or written (`errno` text included).
    case io(path: String, reason: String)
    /// The file does not start with a RIFF/WAVE header.
    case notWAV(found: String)
    /// A chunk or the sample data ends before its declared size.
    case truncated(what: String, declared: Int, available: Int)
    /// No `fmt ` or `data` chunk.
    case missingChunk(String)
    /// A sample encoding other than 16-bit PCM or 32-bit float.
    case unsupportedEncoding(formatTag: UInt16, bitsPerSample: UInt16)
    /// A channel count other than 1 or 2.
    case unsupportedChannelCount(Int)
    /// A sample rate outside 1 Hz ... 384 kHz.
    case unsupportedSampleRate(Int)

    public var description: String {
        switch self {
        case let .io(path, reason):
            return "cannot access WAV file '\(path)': \(reason)"
        case let .notWAV(found):
            return "not a RIFF/WAVE file: found '\(found)' where 'RIFF....WAVE' was expected"
        case let .truncated(what, declared, available):
            return "truncated WAV file: \(what) declares \(declared) bytes but only \(available) are present"
        case let .missingChunk(name):
            return "WAV file has no '\(name)' chunk"
        case let .unsupportedEncoding(tag, bits):
            let name: String
            switch tag {
            case 1: name = "PCM"
            case 3: name = "IEEE float"
            case 6: name = "A-law"
            case 7: name = "mu-law"
            case 0x11: name = "IMA ADPCM"
            case 0xFFFE: name = "extensible"
            default: name = "format tag 0x" + String(tag, radix: 16)
            }
            return "unsupported WAV encoding: \(name) with \(bits) bits per sample (16-bit PCM and 32-bit float are supported)"
        case let .unsupportedChannelCount(n):
            return "unsupported WAV channel count \(n) (1 or 2 are supported)"
        case let .unsupportedSampleRate(r):
            return "unsupported WAV sample rate \(r) Hz"
        }
    }
}
