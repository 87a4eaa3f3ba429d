/// An error from spandsp.
///
/// spandsp 0.0.6 reports failure only by its `*_init` functions returning no state, which
/// happens only when `malloc` fails; the coding and concealment calls cannot fail. So there is
/// one case, and throwing it costs no allocation.
///
/// Thread safety: a value type; safe to use from any thread.
public enum SpanDSPError: Error, Sendable, Hashable, CustomStringConvertible {
    /// spandsp could not allocate a codec or concealer state (its `*_init` returned null).
    case allocationFailed

    /// `spandsp: allocation failed`.
    ///
    /// Thread safety: a value type; safe to use from any thread.
    public var description: String {
        switch self {
        case .allocationFailed: "spandsp: allocation failed"
        }
    }
}
