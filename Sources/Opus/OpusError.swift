import COpus

/// An error from libopus or from the wrapper's argument checks, carrying the
/// library's error code and a readable message.
///
/// Equality compares codes only, so `error == .badArgument` works whatever the detail.
///
/// Thread safety: a value type; safe to use from any thread.
public struct OpusError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The libopus error code (`OPUS_BAD_ARG`, ...): always negative.
    public let code: Int32
    /// What went wrong: libopus's own text, plus the wrapper's detail when it has one.
    public let message: String

    /// Creates an error for a libopus return code, with optional detail.
    public init(code: Int32, detail: String? = nil) {
        self.code = code
        let text = String(cString: opus_strerror(code))
        self.message = detail.map { "\(text): \($0)" } ?? text
    }

    public var description: String { "Opus error \(code) (\(message))" }

    public static func == (a: OpusError, b: OpusError) -> Bool { a.code == b.code }

    /// One or more invalid/out of range arguments.
    public static let badArgument = OpusError(code: OPUS_BAD_ARG)
    /// Not enough bytes allocated in the buffer.
    public static let bufferTooSmall = OpusError(code: OPUS_BUFFER_TOO_SMALL)
    /// An internal error was detected.
    public static let internalError = OpusError(code: OPUS_INTERNAL_ERROR)
    /// The compressed data passed is corrupted.
    public static let invalidPacket = OpusError(code: OPUS_INVALID_PACKET)
    /// Invalid/unsupported request number.
    public static let unimplemented = OpusError(code: OPUS_UNIMPLEMENTED)
    /// An encoder or decoder structure is invalid or already freed.
    public static let invalidState = OpusError(code: OPUS_INVALID_STATE)
    /// Memory allocation has failed.
    public static let allocationFailed = OpusError(code: OPUS_ALLOC_FAIL)


    /// Throws unless `result` is `OPUS_OK` (or any non-negative count).
    @inline(__always)
    static func check(_ result: Int32, _ what: @autoclosure () -> String) throws(OpusError) {
        if result < 0 { throw OpusError(code: result, detail: what()) }
    }
}
