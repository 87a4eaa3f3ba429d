import MediaNegotiation
import SDP
import Platform
import Foundation
import Opus
import RTP
import Testing

@Suite("SDP offers and answers for Opus (RFC 4566, 3264, 7587)")
struct SDPTests {
    static let local = try! SocketAddress(host: "127.0.0.1", port: 5004)

    @Test("The SDP ffmpeg's own RTP muxer writes parses, CRLF or LF")
    func parseFFmpeg() throws {
        let text = """
            v=0
            o=- 0 0 IN IP4 127.0.0.1
            s=No Name
            c=IN IP4 127.0.0.1
            t=0 0
            a=tool:libavformat 59.27.100
            m=audio 5008 RTP/AVP 96
            b=AS:32
            a=rtpmap:96 opus/48000/2
            a=fmtp:96 sprop-stereo=0

            """
        for separator in ["\n", "\r\n"] {
            let sdp = try SessionDescription.parse(text.replacingOccurrences(of: "\n", with: separator))
            #expect(sdp.sessionName == "No Name")
            #expect(sdp.media.count == 1 && sdp.media[0].bandwidths == ["AS:32"])
            let stream = try AudioSDP.stream(in: sdp)
            #expect(stream.address == "127.0.0.1" && stream.port == 5008 && stream.payloadType == 96)
            #expect(stream.parameters.spropStereo == false && stream.parameters.useInbandFEC == nil)
            #expect(stream.direction == .sendrecv)
        }
    }

    @Test("An offer round-trips through text")
    func offerRoundTrip() throws {
        let offer = AudioSDP.offer(address: Self.local, sessionID: 42,
                                  parameters: .init(useInbandFEC: true, useDTX: true, maxAverageBitrate: 24000,
                                                    stereo: false, spropStereo: false),
                                  direction: .sendonly, rtcpMux: true)
        let text = offer.text
        #expect(text.contains("a=rtpmap:96 opus/48000/2\r\n"))
        #expect(text.contains("a=fmtp:96 stereo=0; sprop-stereo=0; maxaveragebitrate=24000; useinbandfec=1; usedtx=1\r\n"))
        #expect(text.contains("a=ptime:20\r\na=maxptime:120\r\n"))
        let parsed = try SessionDescription.parse(text)
        #expect(parsed == offer)
        let stream = try AudioSDP.stream(in: parsed)
        #expect(stream.direction == .sendonly && stream.rtcpMux && stream.ptime == 20 && stream.maxptime == 120)
        #expect(stream.parameters.useDTX == true && stream.parameters.maxAverageBitrate == 24000)
    }

    @Test("The answer keeps the offerer's payload type, reverses direction and rejects other streams")
    func answer() throws {
        let offer = try SessionDescription.parse("""
            v=0\r
            o=alice 2890844526 2890844526 IN IP6 ::1\r
            s=-\r
            c=IN IP6 ::1\r
            t=0 0\r
            m=audio 49170 RTP/AVP 0 111\r
            a=rtpmap:0 PCMU/8000\r
            a=rtpmap:111 OPUS/48000/2\r
            a=fmtp:111 useinbandfec=1;usedtx=0; maxaveragebitrate=20000\r
            a=ptime:40\r
            a=rtcp:49200\r
            a=sendonly\r
            m=video 51372 RTP/AVP 99\r
            a=rtpmap:99 h263-1998/90000\r

            """)
        let (answer, remote) = try AudioSDP.answer(offer, address: Self.local, sessionID: 7,
                                                  parameters: .init(useInbandFEC: true), rtcpMux: true)
        #expect(remote.payloadType == 111 && remote.port == 49170 && remote.address == "::1" && remote.rtcpPort == 49200)
        #expect(answer.media.count == 2)
        let audio = answer.media[0]
        #expect(audio.formats == ["111"] && audio.port == 5004)
        #expect(audio.direction == .recvonly)
        #expect(!audio.has("rtcp-mux"))  // not offered
        #expect(audio.payloadType(for: "opus/48000/2") == "111")
        #expect(answer.media[1].port == 0 && answer.media[1].media == "video")
        // What to send the offerer: FEC yes, DTX no, at most 20 kb/s, 40 ms packets.
        let send = AudioSDP.sendConfiguration(OpusCallConfiguration(), for: remote)
        #expect(send.inbandFEC && !send.dtx && send.bitrate == 20000 && send.frameMilliseconds == 40 && send.channels == 1)
    }

    @Test("A re-offer that holds or resumes gets the reverse direction and a new version; any other change is refused")
    func reanswer() throws {
        func offer(_ direction: String?, port: Int = 6000, version: Int = 1, sessionLevel: Bool = false) throws -> SessionDescription {
            let line = direction.map { "a=\($0)\r\n" } ?? ""
            return try SessionDescription.parse("""
                v=0\r
                o=peer 42 \(version) IN IP4 127.0.0.1\r
                s=-\r
                c=IN IP4 127.0.0.1\r
                t=0 0\r
                \(sessionLevel ? line : "")m=audio \(port) RTP/AVP 111 0\r
                a=rtpmap:111 opus/48000/2\r
                a=rtpmap:0 PCMU/8000\r
                \(sessionLevel ? "" : line)
                """)
        }
        let first = try offer(nil)
        let (ours, _) = try AudioSDP.answer(first, address: Self.local, sessionID: 7, parameters: .init(useInbandFEC: true))
        // Hold: the peer only sends, we only receive; the version moves on.
        let (held, remote) = try AudioSDP.reanswer(try offer("sendonly", version: 2), peerPrevious: first, ours: ours)
        #expect(remote.direction == .sendonly && !remote.direction.receives)
        #expect(held.media[0].direction == .recvonly)
        #expect(held.origin.sessionVersion == "2" && held.origin.sessionID == ours.origin.sessionID)
        #expect(held.media[0].formats == ours.media[0].formats && held.media[0].port == ours.media[0].port)
        // A session-level attribute counts too (RFC 4566 section 6), and inactive answers inactive.
        let (quiet, quietRemote) = try AudioSDP.reanswer(try offer("inactive", version: 3, sessionLevel: true),
                                                        peerPrevious: first, ours: held)
        #expect(quietRemote.direction == .inactive && quiet.media[0].direction == .inactive)
        #expect(quiet.origin.sessionVersion == "3")
        // Resume: sendrecv again, one attribute, not two.
        let (resumed, _) = try AudioSDP.reanswer(try offer("sendrecv", version: 4), peerPrevious: first, ours: quiet)
        #expect(resumed.media[0].direction == .sendrecv)
        #expect(resumed.media[0].attributes.filter { MediaDirection(rawValue: $0.name) != nil }.count == 1)
        // While we hold the call, a peer's sendrecv offer is answered inactive: still held.
        let (stillHeld, _) = try AudioSDP.reanswer(try offer("sendrecv", version: 4), peerPrevious: first, ours: quiet, wanting: .inactive)
        #expect(stillHeld.media[0].direction == .inactive && stillHeld.origin.sessionVersion == quiet.origin.sessionVersion)
        // Unchanged answer, unchanged version.
        let (same, _) = try AudioSDP.reanswer(try offer("sendrecv", version: 5), peerPrevious: first, ours: resumed)
        #expect(same == resumed)
        // The peer moves its media (a PBX leaving the path): the stream says where to send now,
        // and our answer, with its address and port, stays as it was.
        let (moved, movedRemote) = try AudioSDP.reanswer(try offer("sendrecv", port: 6002, version: 6), peerPrevious: first, ours: resumed)
        #expect(movedRemote.port == 6002 && movedRemote.address == "127.0.0.1")
        #expect(moved == resumed)
        // rtcp-mux: we offered it, the peer's answer did not take it, its re-offer now has it. It
        // is not in use, so the answer declines it; in use, a re-offer cannot drop it.
        let ourOffer = AudioSDP.offer(address: Self.local, sessionID: 9, rtcpMux: true)
        let muxOffer = try SessionDescription.parse(try offer("sendonly", version: 7).text + "a=rtcp-mux\r\n")
        let (declined, _) = try AudioSDP.reanswer(muxOffer, peerPrevious: first, ours: ourOffer)
        #expect(!declined.media[0].has("rtcp-mux") && declined.media[0].direction == .recvonly)
        #expect(throws: SDPError.unsupportedChange("rtcp-mux")) {
            try AudioSDP.reanswer(try offer("sendonly", version: 8), peerPrevious: muxOffer, ours: ourOffer)
        }
        // Another address family (our socket is IPv4), or no Opus: refused, so the caller declines with 488.
        let v6 = try SessionDescription.parse(try offer("sendrecv").text.replacingOccurrences(of: "IN IP4 127.0.0.1", with: "IN IP6 ::1"))
        #expect(throws: SDPError.unsupportedChange("the address family")) {
            try AudioSDP.reanswer(v6, peerPrevious: first, ours: ours)
        }
        #expect(throws: SDPError.noCommonCodec) {
            try AudioSDP.reanswer(try SessionDescription.parse("v=0\no=- 1 2 IN IP4 127.0.0.1\ns=-\nc=IN IP4 127.0.0.1\nt=0 0\nm=audio 6000 RTP/AVP 0\n"),
                                 peerPrevious: first, ours: ours)
        }
    }

    @Test("An answer's direction mirrors the offer's within what the answerer wants (RFC 3264 section 6.1)")
    func answerDirections() {
        // offer -> wanted -> answer, the whole table.
        let table: [(MediaDirection, MediaDirection, MediaDirection)] = [
            (.sendrecv, .sendrecv, .sendrecv), (.sendrecv, .sendonly, .sendonly), (.sendrecv, .recvonly, .recvonly),
            (.sendrecv, .inactive, .inactive),
            (.sendonly, .sendrecv, .recvonly), (.sendonly, .sendonly, .inactive), (.sendonly, .recvonly, .recvonly),
            (.sendonly, .inactive, .inactive),
            (.recvonly, .sendrecv, .sendonly), (.recvonly, .sendonly, .sendonly), (.recvonly, .recvonly, .inactive),
            (.recvonly, .inactive, .inactive),
            (.inactive, .sendrecv, .inactive), (.inactive, .sendonly, .inactive), (.inactive, .recvonly, .inactive),
            (.inactive, .inactive, .inactive),
        ]
        for (offer, wanted, answer) in table {
            #expect(offer.answer(wanting: wanted) == answer, "offer \(offer), wanting \(wanted)")
        }
        #expect(MediaDirection.sendonly.answer() == .recvonly)
    }

    @Test("Our re-offer changes only the Opus stream's direction and the origin's version")
    func reoffer() throws {
        let ours = AudioSDP.offer(address: try SocketAddress(host: "127.0.0.1", port: 5000), sessionID: 7)
        let held = try AudioSDP.reoffer(ours, direction: .inactive)
        #expect(try AudioSDP.stream(in: held).direction == .inactive)
        #expect(held.origin.sessionVersion == "\((UInt64(ours.origin.sessionVersion) ?? 0) + 1)")
        #expect(held.media[0].attributes.count(where: { MediaDirection(rawValue: $0.name) != nil }) == 1)
        var back = try AudioSDP.reoffer(held, direction: .sendrecv)
        #expect(try AudioSDP.stream(in: back).direction == .sendrecv)
        back.origin.sessionVersion = ours.origin.sessionVersion
        back.media[0].setDirection(ours.direction(of: ours.media[0]))
        #expect(try AudioSDP.stream(in: back) == AudioSDP.stream(in: ours))
        var noAudio = ours
        noAudio.media[0].port = 0
        #expect(throws: SDPError.noCommonCodec) { try AudioSDP.reoffer(noAudio, direction: .inactive) }
    }

    @Test("Offers without a codec we take and broken descriptions are refused with a reason")
    func errors() {
        #expect(throws: SDPError.noCommonCodec) {
            try AudioSDP.stream(in: SessionDescription.parse("v=0\no=- 1 1 IN IP4 1.2.3.4\ns=-\nc=IN IP4 1.2.3.4\nt=0 0\nm=audio 1 RTP/AVP 18\n"))
        }
        #expect(throws: SDPError.noCommonCodec) {
            try AudioSDP.stream(in: SessionDescription.parse("v=0\no=- 1 1 IN IP4 1.2.3.4\ns=-\nc=IN IP4 1.2.3.4\nt=0 0\nm=audio 1 RTP/AVP 0\n"),
                                codecs: [.opus])
        }
        #expect(throws: SDPError.missingVersion) { try SessionDescription.parse("o=- 1 1 IN IP4 1.2.3.4\n") }
        #expect(throws: SDPError.missingOrigin) { try SessionDescription.parse("v=0\no=- 1\n") }
        #expect(throws: SDPError.missingSessionName) { try SessionDescription.parse("v=0\no=- 1 1 IN IP4 h\n") }
        #expect(throws: SDPError.badLine(3)) { try SessionDescription.parse("v=0\no=- 1 1 IN IP4 h\nx=1\n") }
        #expect(throws: SDPError.badMedia(4)) { try SessionDescription.parse("v=0\no=- 1 1 IN IP4 h\ns=-\nm=audio 99999 RTP/AVP 96\n") }
        #expect(throws: SDPError.badConnection(4)) { try SessionDescription.parse("v=0\no=- 1 1 IN IP4 h\ns=-\nc=IN IP4\n") }
    }

    @Test("fmtp values out of range are ignored, unknown ones kept")
    func formatParameters() {
        let p = OpusFormatParameters(parsing: "maxaveragebitrate=1000; stereo=2; useinbandfec=1; x-foo=bar; maxplaybackrate=16000")
        #expect(p.maxAverageBitrate == nil && p.stereo == nil && p.useInbandFEC == true && p.maxPlaybackRate == 16000)
        #expect(p.other == ["x-foo=bar"])
    }

    @Test("The receiver's SDP file has what ffmpeg needs")
    func receiverFile() throws {
        let destination = try SocketAddress(host: "127.0.0.1", port: 5006)
        let sdp = AudioSDP.receiverDescription(destination: destination, configuration: OpusCallConfiguration())
        let text = sdp.text
        for line in ["v=0", "c=IN IP4 127.0.0.1", "t=0 0", "m=audio 5006 RTP/AVP 96", "a=rtpmap:96 opus/48000/2"] {
            #expect(text.contains(line + "\r\n"))
        }
        #expect(try AudioSDP.stream(in: SessionDescription.parse(text)).port == 5006)
        let v6 = AudioSDP.receiverDescription(destination: try SocketAddress(host: "::1", port: 7000),
                                             configuration: OpusCallConfiguration())
        #expect(v6.text.contains("c=IN IP6 ::1\r\n"))
    }
}
