/// Why a request to Janus failed.
///
/// Thread safety: a value; safe from any thread.
public enum JanusError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The server URL is not an `http://` or `https://` URL.
    case invalidURL(String)
    /// Janus did not answer: no connection, a transport error or no reply in time.
    case unreachable(String)
    /// Janus answered with an error of its own API (`janus: error`): a session that timed out
    /// (458), a handle that is gone (459), a request it did not understand.
    case server(code: Int, reason: String)
    /// The AudioBridge plugin refused a request: a room that does not exist (485), a room that
    /// exists already (486), a room that does not allow plain-RTP participants, a bad PIN.
    case audioBridge(code: Int, reason: String)
    /// A reply that is not what Janus's API says (not JSON, missing fields, too large).
    case malformed(String)
    /// The client was closed, or its session ended while the request waited.
    case closed

    public var description: String {
        switch self {
        case let .invalidURL(url): "not an http:// or https:// Janus URL: \(url)"
        case let .unreachable(why): "Janus is unreachable: \(why)"
        case let .server(code, reason): "Janus error \(code): \(reason)"
        case let .audioBridge(code, reason): "AudioBridge error \(code): \(reason)"
        case let .malformed(why): "a malformed reply from Janus: \(why)"
        case .closed: "the Janus session is closed"
        }
    }

    /// Janus's code for a session it does not know (gone, or timed out).
    static let noSuchSession = 458
}
