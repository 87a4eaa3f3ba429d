import AudioAnalysis
import AudioSession
import Foundation
import MediaNegotiation
import Opus
import Platform
import RTP
import SDP
import SIP
import Simulation
import Testing
import TestSupport
import VoiceCall

/// What the caller hears while a call rings: the local ringback when the peer sends 180
/// without SDP, the peer's early media when it sends 183 with SDP.
@Suite("Ringback and early media", .serialized)
struct EarlyMediaTests {
    @Test("A call ringing without early media plays the ringback on our loudspeaker until it is answered")
    func localRingback() async throws {
        let alice = try Phone("alice"), bob = try Phone("bob")
        await alice.controller.start(); await bob.controller.start()
        let call = try await alice.controller.dial("sip:bob@\(bob.controller.sipAddress)")
        var incoming = bob.controller.incomingCalls.makeAsyncIterator()
        let theirs = try #require(await incoming.next())
        #expect(await eventually { alice.newestDevice != nil })
        let ringback = try #require(alice.newestDevice)
        #expect(alice.session.isActive, "the ringback is part of the call")
        try await Task.sleep(for: .milliseconds(900))
        let played = ringback.recording.played
        try await theirs.answer()
        #expect(await call.connected() == .active)
        let afterAnswer = ringback.recording.played.count
        try await Task.sleep(for: .milliseconds(300))
        #expect(ringback.recording.played.count == afterAnswer, "the ringback stopped at the answer")
        #expect(alice.newestDevice !== ringback, "the call's media has a device of its own")
        await call.hangUp()
        await alice.shutdown(); await bob.shutdown()
        // 425 Hz at -13 dBFS peak (-16 dBFS RMS), after the device's two periods of prefill.
        let tone = Array(played.dropFirst(1280).prefix(8000))
        #expect(tone.count == 8000, "\(played.count) samples played")
        #expect(abs(Tone.dominantFrequency(tone, sampleRate: 16000) - 425) < 10)
        #expect(abs(Levels.dBFS(tone) + 16) < 0.5, "\(Levels.dBFS(tone)) dBFS")
    }

    @Test("Without a ringback configured, a ringing call opens no device and leaves the session inactive")
    func noRingback() async throws {
        let alice = try Phone("alice") { $0.ringback = nil }, bob = try Phone("bob")
        await alice.controller.start(); await bob.controller.start()
        let call = try await alice.controller.dial("sip:bob@\(bob.controller.sipAddress)")
        var incoming = bob.controller.incomingCalls.makeAsyncIterator()
        _ = try #require(await incoming.next())
        try await Task.sleep(for: .milliseconds(300))
        #expect(alice.newestDevice == nil)
        #expect(!alice.session.isActive)
        await call.hangUp()
        #expect(!alice.session.isActive)
        await alice.shutdown(); await bob.shutdown()
    }

    @Test("A 183 with SDP is played; we send once the peer's first packet comes; the 2xx keeps the same media")
    func earlyMediaIsPlayed() async throws {
        let alice = try Phone("alice"), callee = RawCallee()
        await alice.controller.start()
        let call = try await alice.controller.dial("sip:raw@127.0.0.1:\(callee.peer.port)")
        let invite = try await callee.invite()
        callee.respond(to: invite, 183, "Session Progress", body: try callee.sdp(answering: invite))
        #expect(await eventually { alice.newestDevice != nil })
        let device = try #require(alice.newestDevice)
        #expect(await callee.packets(for: 0.3).isEmpty, "no RTP from us before the peer's first packet")

        // The peer's announcement: a 300 Hz tone, while the call still rings (sent in real time
        // until the test has heard it: a loaded machine may start the playout late).
        let announcement = Task { [callee, invite] in
            var sender = try callee.sender(toward: invite)
            let tone = Tone.sine(frequency: 300, sampleRate: 16000, seconds: 0.02, amplitude: 0.1).map { Int16($0 * 32767) }
            for k in 0..<250 where !Task.isCancelled {
                tone.withUnsafeBufferPointer { _ = sender.send($0, now: UInt64(k) * 20_000_000) }
                try? await Task.sleep(for: .milliseconds(20))
            }
        }
        let played = await eventually(timeout: .seconds(5)) {
            abs(Tone.dominantFrequency(Array(device.recording.played.suffix(4000)), sampleRate: 16000) - 300) < 10
        }
        #expect(played, "the early media is played")
        #expect(call.state == .outgoingRinging)
        #expect(await eventually(timeout: .seconds(3)) { await callee.packets(for: 0.3).count > 5 }, "our RTP once the peer consented")
        announcement.cancel()
        try await announcement.value

        callee.respond(to: invite, 200, "OK", body: try callee.sdp(answering: invite))
        #expect(await call.connected() == .active)
        #expect(alice.newestDevice === device, "the 2xx keeps the early media's device and stream")
        await call.hangUp()
        await alice.shutdown()
    }
}

/// A callee written by hand: answers our INVITE with what a gateway sends.
struct RawCallee {
    let peer = try! RawPeer()
    let media = try! UDPSocket(bindingTo: SocketAddress(host: "127.0.0.1", port: 0))

    /// The answer to `invite`: Opus at our media socket, in the payload type the offer gave it.
    func sdp(answering invite: SIPRequest) throws -> String {
        let pt = try offer(in: invite).payloadType
        return "v=0\r\no=raw 1 1 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\n"
            + "m=audio \(media.localAddress.port) RTP/AVP \(pt)\r\na=rtpmap:\(pt) opus/48000/2\r\na=sendrecv\r\n"
    }

    private func offer(in invite: SIPRequest) throws -> AudioStreamDescription {
        try AudioSDP.stream(in: SessionDescription.parse(String(decoding: invite.body, as: UTF8.self)), codecs: [.opus])
    }

    /// Our INVITE, within the patient wait.
    func invite() async throws -> SIPRequest {
        for _ in 0..<5 {
            if case let .request(request)? = await peer.receiveMessage(), request.method == .invite { return request }
        }
        throw CallError.signalling("no INVITE came")
    }

    /// A response to `invite` with the dialog's headers copied, our tag, and `body` as SDP.
    func respond(to invite: SIPRequest, _ status: Int, _ reason: String, body: String = "") {
        let copied = invite.headers.filter { ["via", "from", "call-id", "cseq"].contains($0.name.lowercased()) }
        let to = invite.headers["To"] ?? ""
        let source = invite.headers["Via"].flatMap { via -> SocketAddress? in
            let sentBy = via.split(separator: " ").last?.split(separator: ";").first ?? ""
            let parts = sentBy.split(separator: ":")
            return try? SocketAddress(host: String(parts[0]), port: UInt16(parts[1]) ?? 5060)
        }
        let lines = ["SIP/2.0 \(status) \(reason)"] + copied.map { "\($0.name): \($0.value)" }
            + ["To: \(to);tag=rawcallee", "Contact: <sip:raw@127.0.0.1:\(peer.port)>"]
            + (body.isEmpty ? [] : ["Content-Type: application/sdp"])
        if let source { peer.send(sipText(lines, body: body), to: source) }
    }

    /// An Opus sender from our media socket toward the stream `invite` offers.
    func sender(toward invite: SIPRequest) throws -> RTPSender {
        let offer = try offer(in: invite)
        let destination = try SocketAddress(host: offer.address, port: UInt16(offer.port))
        return RTPSender(encoder: try RTPAudioEncoder(configuration: OpusCallConfiguration(),
                                                      packetizer: RTPPacketizer(payloadType: offer.payloadType)),
                         socket: media, destination: destination)
    }

    /// The RTP packets that reach the media socket within `seconds`.
    func packets(for seconds: Double) async -> [RTPHeader] { await receivedRTP(at: media, for: seconds) }
}
