import MediaNegotiation
import SDP
import Platform
import Opus
import RTP

/// SDP from a peer: the parser, then the offer/answer rules on what parsed, as the call setup
/// runs them (the codec choice, answer an offer, re-answer it, re-offer, the send
/// configuration), and the media-encryption rules (SDES and DTLS-SRTP offers and answers, re-offers).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    guard let description = try? SessionDescription.parse(text) else { return 0 }
    // What we write must parse again: a re-INVITE or an answer carries it.
    if (try? SessionDescription.parse(description.text)) == nil {
        fatalError("SDP written from \(text.debugDescription) does not parse again")
    }
    let stream = try? AudioSDP.stream(in: description)
    if let stream { _ = AudioSDP.sendConfiguration(OpusCallConfiguration(), for: stream) }
    _ = try? AudioSDP.stream(in: description, codecs: [.pcma, .g722], order: .theirs)
    for media in description.media {
        _ = CodecSelection.choose(in: media, from: AudioCodec.preference, order: .theirs)
        for attribute in media.attributes where attribute.name == "fmtp" {
            _ = OpusFormatParameters(parsing: attribute.value ?? "").text
        }
    }
    let ours = AudioSDP.offer(address: local, sessionID: 7, codecs: AudioCodec.preference, comfortNoise: 13, rtcpMux: true)
    if let answer = try? AudioSDP.answer(description, address: local, sessionID: 7, parameters: OpusFormatParameters()) {
        _ = try? AudioSDP.reanswer(description, peerPrevious: description, ours: answer.answer)
    }
    _ = try? AudioSDP.reanswer(description, peerPrevious: ours, ours: ours)
    _ = try? AudioSDP.reoffer(description, direction: .sendonly)
    // Media encryption: the peer's crypto and fingerprint lines, as an offer and as an answer.
    if let media = AudioSDP.streamMedia(in: description) {
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
