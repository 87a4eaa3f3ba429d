/// A master key and master salt for one direction of one profile: what SDES carries in
/// `a=crypto` and what DTLS-SRTP exports.
///
/// Secret: ``description``, ``debugDescription`` and the reflection `dump` uses show the profile
/// and `redacted`, never a byte. Equality takes the same time whichever byte differs.
///
/// Thread safety: a value type; safe to use from any thread.
public struct SRTPMasterKey: Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The profile the key is for; its ``SRTPProfile/masterLength`` is the key's length.
    ///
    /// Thread safety: a value type; safe to use from any thread.
    public let profile: SRTPProfile
    /// Key then salt, as libsrtp2 takes them (`srtp_policy_t.key`).
    let keyAndSalt: [UInt8]

    /// A key from its bytes: the master key, then the master salt.
    ///
    /// - Throws: ``SRTPError/badKey`` unless `keyAndSalt` is ``SRTPProfile/masterLength`` bytes.
    ///
    /// Thread safety: a value type; safe to use from any thread.
    public init(profile: SRTPProfile, keyAndSalt: [UInt8]) throws(SRTPError) {
        guard keyAndSalt.count == profile.masterLength else { throw .badKey }
        self.profile = profile
        self.keyAndSalt = keyAndSalt
    }

    /// A fresh key from the system's cryptographically secure generator (`getrandom` on Linux,
    /// through `SystemRandomNumberGenerator`): for SDES, one per direction and per offer.
    ///
    /// Thread safety: safe to call from any thread.
    public static func random(profile: SRTPProfile) -> SRTPMasterKey {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<profile.masterLength).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        return SRTPMasterKey(checked: profile, bytes)
    }

    /// RFC 5764 section 4.2: the exported keying material is the client's key, the server's key,
    /// the client's salt, the server's salt. The client sends with the client's, so its local key
    /// is the client's and its remote key the server's; the server the other way round.
    ///
    /// - Parameters:
    ///   - exported: ``dtlsExportLength(profile:)`` bytes exported with the label
    ///     `EXTRACTOR-dtls_srtp` and no context.
    ///   - profile: the profile the handshake selected.
    ///   - isClient: whether we were the DTLS client.
    /// - Returns: the key we protect with (`local`) and the key we unprotect with (`remote`).
    /// - Throws: ``SRTPError/badKey`` for material of another length.
    ///
    /// Thread safety: safe to call from any thread.
    public static func fromDTLS(exported: [UInt8], profile: SRTPProfile,
                                isClient: Bool) throws(SRTPError) -> (local: SRTPMasterKey, remote: SRTPMasterKey) {
        guard exported.count == dtlsExportLength(profile: profile) else { throw .badKey }
        let k = profile.keyLength, s = profile.saltLength
        let client = SRTPMasterKey(checked: profile, Array(exported[0..<k] + exported[(2 * k)..<(2 * k + s)]))
        let server = SRTPMasterKey(checked: profile, Array(exported[k..<(2 * k)] + exported[(2 * k + s)..<(2 * k + 2 * s)]))
        return isClient ? (client, server) : (server, client)
    }

    /// Bytes to export from DTLS for a profile: a key and a salt for each side.
    ///
    /// Thread safety: safe to call from any thread.
    public static func dtlsExportLength(profile: SRTPProfile) -> Int { 2 * profile.masterLength }

    /// `SRTPMasterKey(AES_CM_128_HMAC_SHA1_80, redacted)`: logs may carry it, so no byte shows.
    ///
    /// Thread safety: a value type; safe to use from any thread.
    public var description: String { "SRTPMasterKey(\(profile.rawValue), redacted)" }

    /// The same as ``description``.
    ///
    /// Thread safety: a value type; safe to use from any thread.
    public var debugDescription: String { description }

    /// The profile only, so `dump` and debuggers' reflection do not show the bytes.
    ///
    /// Thread safety: a value type; safe to use from any thread.
    public var customMirror: Mirror { Mirror(self, children: ["profile": profile], displayStyle: .struct) }

    /// Whether two keys are the same; the time does not depend on where they differ.
    ///
    /// Thread safety: a value type; safe to use from any thread.
    public static func == (a: SRTPMasterKey, b: SRTPMasterKey) -> Bool {
        guard a.profile == b.profile, a.keyAndSalt.count == b.keyAndSalt.count else { return false }
        var difference: UInt8 = 0
        for i in a.keyAndSalt.indices { difference |= a.keyAndSalt[i] ^ b.keyAndSalt[i] }
        return difference == 0
    }

    /// A key whose length the caller has already made right.
    init(checked profile: SRTPProfile, _ keyAndSalt: [UInt8]) {
        precondition(keyAndSalt.count == profile.masterLength)
        self.profile = profile
        self.keyAndSalt = keyAndSalt
    }
}
