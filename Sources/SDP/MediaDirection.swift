/// A media direction attribute (RFC 4566 section 6, RFC 3264 section 6.1).
public enum MediaDirection: String, Sendable, CaseIterable {
    case sendrecv, sendonly, recvonly, inactive

    /// The answer to an offer in this direction from an answerer that wants at most `wanted`
    /// (RFC 3264 section 6.1): it sends only if the offerer receives and it wants to send, and
    /// receives only if the offerer sends and it wants to receive. With `sendrecv` that is the
    /// offer's mirror; a side that holds the call answers `inactive` whatever the offer.
    public func answer(wanting wanted: MediaDirection = .sendrecv) -> MediaDirection {
        MediaDirection(sends: receives && wanted.sends, receives: sends && wanted.receives)
    }

    /// The direction that sends and receives as given.
    public init(sends: Bool, receives: Bool) {
        switch (sends, receives) {
        case (true, true): self = .sendrecv
        case (true, false): self = .sendonly
        case (false, true): self = .recvonly
        case (false, false): self = .inactive
        }
    }

    public var sends: Bool { self == .sendrecv || self == .sendonly }
    public var receives: Bool { self == .sendrecv || self == .recvonly }
}
