import MediaNegotiation
import SDP
import Platform
import Opus

/// SDP from a peer: the parser, then the Opus offer/answer rules on what parsed, as the call
/// setup runs them (answer an offer, re-answer it, re-offer, the send configuration), and the
/// media-encryption rules (SDES and DTLS-SRTP offers and answers, re-offers).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    guard let description = try? SessionDescription.parse(text) else { return 0 }
    // What we write must parse again: a re-INVITE or an answer carries it.
    if (try? SessionDescription.parse(description.text)) == nil {
        fatalError("SDP written from \(text.debugDescription) does not parse again")
    }
    let stream = try? OpusSDP.stream(in: description)
    if let stream { _ = OpusSDP.sendConfiguration(OpusCallConfiguration(), for: stream) }
    for media in description.media {
        for attribute in media.attributes where attribute.name == "fmtp" {
            _ = OpusFormatParameters(parsing: attribute.value ?? "").text
        }
    }
    let ours = OpusSDP.offer(address: local, sessionID: 7, rtcpMux: true)
    if let answer = try? OpusSDP.answer(description, address: local, sessionID: 7, parameters: OpusFormatParameters()) {
        _ = try? OpusSDP.reanswer(description, peerPrevious: description, ours: answer.answer)
    }
    _ = try? OpusSDP.reanswer(description, peerPrevious: ours, ours: ours)
    _ = try? OpusSDP.reoffer(description, direction: .sendonly)
    // Media encryption: the peer's crypto and fingerprint lines, as an offer and as an answer.
    if let media = OpusSDP.streamMedia(in: description) {
        for policy in policies {
            _ = try? policy.answer(description, media: media, fingerprint: fingerprint, overSecureSignalling: true)
            _ = try? policy.acceptAnswer(description, media: media, offered: policy.makeOffer(fingerprint: fingerprint))
        }
        _ = try? NegotiatedMediaSecurity.clear.following(description, media: media)
        _ = media.cryptos.map(\.value)
        _ = description.fingerprints(of: media).map(\.value)
    }
    return 0
}

let policies = [MediaEncryption.sdes, .dtls].flatMap { encryption in
    [SRTPRequirement.optional, .mandatory].map { MediaSecurityPolicy(encryption: encryption, requirement: $0) }
}
let fingerprint = SDPFingerprint(hashFunction: "sha-256", digest: Array(repeating: 0xAB, count: 32))

let local = try! SocketAddress(host: "127.0.0.1", port: 5004)
