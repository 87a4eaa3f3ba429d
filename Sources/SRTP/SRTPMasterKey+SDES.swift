extension SRTPMasterKey {
    /// A key from an SDES `a=crypto` key-params (RFC 4568 section 9.2):
    /// `inline:<base64 of key||salt>`, optionally followed by `|<lifetime>` (`2^31` or `1048576`).
    ///
    /// The lifetime is checked for form and then ignored: libsrtp2 enforces its own limit (2^48
    /// packets, with a soft limit before). An MKI (`|1:4`) is refused, since this wrapper sends
    /// and expects packets without one; the offer should be answered with a suite without MKI.
    ///
    /// - Throws: ``SRTPError/badKey`` for another key method, bad base64, the wrong length for
    ///   `profile`, a malformed lifetime, an MKI, or anything after them.
    ///
    /// Thread safety: a value type; safe to use from any thread.
    public init(profile: SRTPProfile, sdesKeyParameters: String) throws(SRTPError) {
        let prefix = "inline:"
        guard sdesKeyParameters.count > prefix.count,
              sdesKeyParameters.prefix(prefix.count).lowercased() == prefix else { throw .badKey }
        let parts = sdesKeyParameters.dropFirst(prefix.count).split(separator: "|", omittingEmptySubsequences: false)
        // key||salt, then at most a lifetime: a part with ':' is an MKI, which we refuse.
        guard parts.count <= 2, let bytes = Base64.decode(parts[0]) else { throw .badKey }
        if parts.count == 2, !Self.isLifetime(parts[1]) { throw .badKey }
        try self.init(profile: profile, keyAndSalt: bytes)
    }

    /// `inline:<base64 of key||salt>`, without lifetime or MKI.
    ///
    /// Thread safety: a value type; safe to use from any thread.
    public var sdesKeyParameters: String { "inline:" + Base64.encode(keyAndSalt) }

    /// RFC 4568's lifetime: decimal digits, or `2^` and decimal digits.
    private static func isLifetime(_ text: Substring) -> Bool {
        let digits = text.hasPrefix("2^") ? text.dropFirst(2) : text
        return !digits.isEmpty && digits.count <= 20 && digits.allSatisfy { $0.isASCII && $0.isNumber }
    }
}
