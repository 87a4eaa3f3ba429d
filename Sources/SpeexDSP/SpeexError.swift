import CSpeexDSP

/// An error from SpeexDSP or from the wrapper's argument checks.
///
/// Thread safety: a value type; safe to use from any thread.
public struct SpeexError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The library's return code (resampler codes are `RESAMPLER_ERR_*`; -1 for a rejected ctl request).
    public let code: Int32
    /// What went wrong.
    public let message: String

    public init(code: Int32, message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "SpeexDSP error \(code) (\(message))" }

    public static func == (a: SpeexError, b: SpeexError) -> Bool { a.code == b.code }

    /// An argument outside what SpeexDSP accepts (the wrapper's own check).
    public static let invalidArgument = SpeexError(code: Int32(RESAMPLER_ERR_INVALID_ARG), message: "invalid argument")
    /// Memory allocation failed.
    public static let allocationFailed = SpeexError(code: Int32(RESAMPLER_ERR_ALLOC_FAILED), message: "allocation failed")
    /// A ctl request the library rejected.
    public static let requestRejected = SpeexError(code: -1, message: "request rejected")

    static func resampler(_ code: Int32, _ what: String) -> SpeexError {
        SpeexError(code: code, message: "\(what): \(String(cString: speex_resampler_strerror(code)))")
    }

    static func invalid(_ detail: String) -> SpeexError {
        SpeexError(code: Int32(RESAMPLER_ERR_INVALID_ARG), message: detail)
    }
}
