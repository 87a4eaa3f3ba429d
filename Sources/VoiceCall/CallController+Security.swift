import Logging
import MediaNegotiation
import OpenSSL
import RTP
import SDP
import SRTP

/// Media encryption: our DTLS certificate, the keys a call's RTP session starts with, and the
/// peer's new SDES keys in a re-INVITE.
extension CallController {
    /// Our DTLS-SRTP certificate (the configured one, else a new self-signed ECDSA P-256 one)
    /// and the fingerprint our offers and answers carry; nil without DTLS.
    static func dtlsIdentity(_ configuration: CallConfiguration) throws(CallError) -> (TLSIdentity?, SDPFingerprint?) {
        guard configuration.mediaSecurity.encryption == .dtls else { return (nil, nil) }
        let identity: TLSIdentity
        if let given = configuration.dtlsIdentity {
            identity = given
        } else {
            do { identity = try TLSIdentity.generateSelfSigned(commonName: "callaudio", validityDays: 365) } catch {
                throw .mediaSecurity("cannot generate a DTLS certificate: \(error)")
            }
        }
        let fingerprint = SDPFingerprint(hashFunction: TLSFingerprintAlgorithm.sha256.rawValue, digest: identity.fingerprint(.sha256))
        return (identity, fingerprint)
    }

    /// How the RTP session protects its packets for what the call agreed.
    func protection(for security: NegotiatedMediaSecurity) throws(CallError) -> MediaProtection {
        switch security {
        case .clear:
            return .clear
        case let .sdes(keys):
            return .srtp(local: keys.local, remote: keys.remote)
        case let .dtls(parameters):
            guard let dtlsIdentity else { throw .mediaSecurity("DTLS-SRTP agreed without a certificate") }
            let fingerprints = parameters.remoteFingerprints.compactMap { line in
                TLSFingerprintAlgorithm(rawValue: line.hashFunction).map { DTLSFingerprint(algorithm: $0, digest: line.digest) }
            }
            guard !fingerprints.isEmpty else {
                throw .mediaSecurity("the peer's fingerprints use no hash function we know (sha-256, sha-384, sha-512)")
            }
            return .dtls(DTLSMediaSetup(isClient: parameters.isClient, identity: dtlsIdentity, remoteFingerprints: fingerprints,
                                        profiles: configuration.mediaSecurity.profiles))
        }
    }

    /// Follows the peer's new description's SDES key (a re-offer we answered, or its answer to
    /// ours): the network thread unprotects with it from its next turn. What the SIP thread
    /// declined never gets here; a key libsrtp refuses leaves the old one.
    func followKeys(_ description: SessionDescription, _ record: inout CallRecord) {
        guard case let .sdes(before) = record.security, let media = AudioSDP.streamMedia(in: description),
              let next = try? record.security.following(description, media: media), case let .sdes(after) = next,
              after.remote != before.remote, let rtp = record.media?.rtp else { return }
        do {
            try rtp.rekeyInbound(after.remote)
            record.security = next
            securities[record.call.id] = next
            logger.info("call \(record.call.id): the peer changed its SDES key")
        } catch {
            logger.error("call \(record.call.id): the peer's new SDES key was refused: \(error)")
        }
    }
}
