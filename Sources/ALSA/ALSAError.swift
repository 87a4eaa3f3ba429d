import CALSA
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// An error from alsa-lib: the negative errno it returned, ALSA's message for
/// it, and what the wrapper was doing (operation and device name).
///
/// Equality compares codes only, so `error == .noSuchDevice` works whatever the context.
///
/// Thread safety: a value type; safe to use from any thread.
public struct ALSAError: Error, Sendable, Equatable, CustomStringConvertible {
    /// alsa-lib's return code: a negative errno (`-ENOENT`, `-EPIPE`, ...).
    public let code: Int32
    /// `snd_strerror(code)`.
    public let message: String
    /// The operation and device, e.g. "snd_pcm_open 'nonexistent'".
    public let context: String

    /// Creates an error for an alsa-lib return code.
    public init(code: Int32, context: String) {
        self.code = code
        self.message = String(cString: snd_strerror(code))
        self.context = context
    }

    public var description: String { "ALSA error \(code) (\(message)) in \(context)" }

    public static func == (a: ALSAError, b: ALSAError) -> Bool { a.code == b.code }

    /// No such PCM, card or file (`-ENOENT`).
    public static let noSuchDevice = ALSAError(code: -ENOENT, context: "")
    /// Buffer underrun or overrun (`-EPIPE`).
    public static let xrun = ALSAError(code: -EPIPE, context: "")
    /// The stream is suspended (`-ESTRPIPE`).
    public static let suspended = ALSAError(code: -ESTRPIPE, context: "")
    /// The device is busy (`-EBUSY`).
    public static let busy = ALSAError(code: -EBUSY, context: "")
    /// An argument or configuration the device cannot take (`-EINVAL`).
    public static let invalidArgument = ALSAError(code: -EINVAL, context: "")
    /// Non-blocking I/O would block (`-EAGAIN`).
    public static let wouldBlock = ALSAError(code: -EAGAIN, context: "")
    /// The device made no progress within the PCM's I/O timeout (`-ETIMEDOUT`): a stalled server.
    public static let timedOut = ALSAError(code: -ETIMEDOUT, context: "")
    /// The device is gone (`-ENODEV`).
    public static let noDevice = ALSAError(code: -ENODEV, context: "")
    /// The sound server is not running (`-EHOSTDOWN`, from the `pulse` and `pipewire` plugins).
    public static let hostDown = ALSAError(code: -EHOSTDOWN, context: "")

}

/// Throws unless `result` is non-negative.
@inline(__always)
func alsaCheck<T: BinaryInteger>(_ result: T, _ context: @autoclosure () -> String) throws(ALSAError) {
    if result < 0 { throw ALSAError(code: Int32(truncatingIfNeeded: result), context: context()) }
}
