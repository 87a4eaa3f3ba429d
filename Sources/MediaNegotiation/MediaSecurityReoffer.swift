public import SDP
import SRTP

extension NegotiatedMediaSecurity {
    /// The encryption after the peer's new description of its stream (`media` in `description`:
    /// a re-offer, or the answer to our re-offer) in an established call. The mechanism, the SDES
    /// suite and tag, and the DTLS fingerprint stay; the peer's SDES key may change (RFC 4568
    /// section 7.1.4: the returned keys carry the new one).
    ///
    /// - Throws: ``MediaSecurityError/changed(_:)`` when the description drops, adds or switches
    ///   encryption, or changes the fingerprint; ``MediaSecurityError/badKey`` for a malformed
    ///   key. The caller declines (488) and the call goes on as it was.
    public func following(_ description: SessionDescription,
                          media: SessionDescription.Media) throws(MediaSecurityError) -> NegotiatedMediaSecurity {
        let profile = SecureProfile(media.proto)
        switch self {
        case .clear:
            guard profile == .plain else { throw .changed("encryption added") }
            return .clear
        case let .sdes(keys):
            guard profile == .plain || profile == .sdes else { throw .changed("the SDES profile") }
            guard let line = media.cryptos.first(where: { $0.tag == keys.tag && $0.suite == keys.profile.sdesName }) else {
                throw .changed("no SDES line with tag \(keys.tag) and suite \(keys.profile.sdesName)")
            }
            guard let remote = try? SRTPMasterKey(profile: keys.profile, sdesKeyParameters: line.keyParameters) else {
                throw .badKey
            }
            var next = keys
            next.remote = remote
            return .sdes(next)
        case let .dtls(parameters):
            guard profile == .dtls else { throw .changed("the DTLS-SRTP profile") }
            guard description.fingerprints(of: media) == parameters.remoteFingerprints else {
                throw .changed("the DTLS fingerprint")
            }
            return self
        }
    }
}
