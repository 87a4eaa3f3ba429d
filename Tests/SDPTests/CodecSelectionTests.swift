import MediaNegotiation
import Opus
import Platform
import RTP
import SDP
import Testing

@Suite("Codec selection: Opus, G.722 and G.711 in offers and answers")
struct CodecSelectionTests {
    static func description(_ media: String, _ attributes: String = "") throws -> SessionDescription {
        try SessionDescription.parse("v=0\no=- 1 1 IN IP4 10.0.0.1\ns=-\nc=IN IP4 10.0.0.1\nt=0 0\nm=audio 4000 RTP/AVP \(media)\n\(attributes)")
    }

    @Test("Static payload types count without an rtpmap; a remapped number does not; G722/8000/1 is G.722")
    func staticTypes() throws {
        let bare = try Self.description("0 8 9")
        #expect(CodecSelection.choose(in: bare.media[0], from: AudioCodec.preference)! == (.g722, 9))
        let remapped = try Self.description("0", "a=rtpmap:0 G729/8000\n")
        #expect(CodecSelection.choose(in: remapped.media[0], from: AudioCodec.preference) == nil)
        let channels = try Self.description("9", "a=rtpmap:9 G722/8000/1\n")
        #expect(CodecSelection.choose(in: channels.media[0], from: [.g722])! == (.g722, 9))
    }

    @Test("An offer is answered in our order, an answer read in its author's")
    func order() throws {
        let offer = try Self.description("8 0 96 101", "a=rtpmap:96 opus/48000/2\na=rtpmap:101 telephone-event/8000\n")
        #expect(try AudioSDP.stream(in: offer, codecs: [.pcmu, .opus]).codec == .pcmu)
        #expect(try AudioSDP.stream(in: offer, codecs: [.pcmu, .pcma], order: .theirs).codec == .pcma)
        #expect(try AudioSDP.stream(in: offer).codec == .opus)
        // Events on the codec's clock: PCMU takes the 8 kHz ones.
        #expect(try AudioSDP.stream(in: offer, codecs: [.pcmu]).telephoneEvents == TelephoneEventFormat(payloadType: 101, clockRate: 8000))
    }

    @Test("Our offer lists the codecs best first, Opus dynamic and the others static, and answers keep one")
    func offerAndAnswer() throws {
        let address = try SocketAddress(parsing: "10.0.0.2:5000")
        let offer = AudioSDP.offer(address: address, sessionID: 1, codecs: AudioCodec.preference,
                                   telephoneEvents: AudioSDP.telephoneEventFormats)
        #expect(offer.media[0].formats == ["96", "9", "0", "8", "101", "102"])
        #expect(offer.media[0].attributes.contains(.init("rtpmap", "9 G722/8000")))
        let reparsed = try SessionDescription.parse(offer.text)
        let (answer, remote) = try AudioSDP.answer(reparsed, address: address, sessionID: 2, parameters: .init(), codecs: [.pcma, .g722])
        #expect(remote.codec == .g722 || remote.codec == .pcma)
        #expect(remote.codec == .pcma && remote.payloadType == 8)
        #expect(answer.media[0].formats == ["8", "102"])  // PCMA and 8 kHz events
        #expect(throws: SDPError.noCommonCodec) {
            try AudioSDP.answer(try Self.description("18"), address: address, sessionID: 3, parameters: .init())
        }
    }

    @Test("A re-offer keeps the codec in use; one that drops it is refused")
    func reoffer() throws {
        let address = try SocketAddress(parsing: "10.0.0.2:5000")
        let offer = try Self.description("0 8")
        let (answer, _) = try AudioSDP.answer(offer, address: address, sessionID: 2, parameters: .init(), codecs: [.pcma, .pcmu])
        let same = try Self.description("8 0")
        #expect(try AudioSDP.reanswer(same, peerPrevious: offer, ours: answer).remote.codec == .pcma)
        let dropped = try Self.description("0")
        #expect(throws: SDPError.noCommonCodec) { try AudioSDP.reanswer(dropped, peerPrevious: offer, ours: answer) }
    }

    @Test("Comfort noise: offered with 8 kHz codecs, answered when offered, read from the peer's stream")
    func comfortNoise() throws {
        let address = try SocketAddress(parsing: "10.0.0.2:5000")
        let offer = AudioSDP.offer(address: address, sessionID: 1, codecs: [.opus, .pcmu], comfortNoise: 13)
        #expect(offer.media[0].formats == ["96", "0", "13"])
        #expect(AudioSDP.offer(address: address, sessionID: 1, codecs: [.opus], comfortNoise: 13).media[0].formats == ["96"])
        let theirs = try Self.description("8 13 101", "a=rtpmap:13 CN/8000\na=rtpmap:101 telephone-event/8000\n")
        #expect(try AudioSDP.stream(in: theirs).comfortNoise == 13)
        let (answer, remote) = try AudioSDP.answer(theirs, address: address, sessionID: 2, parameters: .init())
        #expect(remote.codec == .pcma && answer.media[0].formats == ["8", "13", "101"])
        let (plain, _) = try AudioSDP.answer(theirs, address: address, sessionID: 2, parameters: .init(), comfortNoise: false)
        #expect(plain.media[0].formats == ["8", "101"])
        #expect(try AudioSDP.stream(in: try Self.description("8")).comfortNoise == nil)
    }

    @Test("G.711 and G.722 send configurations: mono, no FEC, DTX only with the peer's comfort noise, the peer's packet time")
    func sendConfiguration() throws {
        let remote = try AudioSDP.stream(in: try Self.description("0", "a=ptime:40\n"))
        let c = AudioSDP.sendConfiguration(OpusCallConfiguration(channels: 2, dtx: true), for: remote)
        #expect(c.channels == 1 && !c.inbandFEC && !c.dtx && c.frameMilliseconds == 40)
        let noise = try AudioSDP.stream(in: try Self.description("0 13"))
        #expect(noise.comfortNoise == 13)
        #expect(AudioSDP.sendConfiguration(OpusCallConfiguration(dtx: true), for: noise).dtx)
        #expect(!AudioSDP.sendConfiguration(OpusCallConfiguration(dtx: false), for: noise).dtx)
    }
}
