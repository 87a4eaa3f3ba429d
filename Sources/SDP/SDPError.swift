/// Why a session description was rejected.
///
/// Thread safety: a value type; safe to use from any thread.
public enum SDPError: Error, Sendable, Equatable {
    /// A line is not `<letter>=<value>`, or its type letter is unknown (RFC 4566 section 5).
    case badLine(Int)
    /// `v=0` is not the first line.
    case missingVersion
    /// No valid `o=` line, or no `s=` line.
    case missingOrigin
    case missingSessionName
    /// An `m=` or `c=` line does not parse.
    case badMedia(Int)
    case badConnection(Int)
    /// No audio stream offers a codec this endpoint takes (Opus, G.722, PCMU, PCMA, as allowed).
    case noCommonCodec
    /// A new offer in an established session changes something this endpoint cannot change
    /// mid-call (the codec, the peer's address, the streams); the detail says what.
    case unsupportedChange(String)
}
