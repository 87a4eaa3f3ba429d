import MediaNegotiation
import SDP
import Platform
import Foundation
import SIP
import Testing
import TestSupport

/// Interoperability with baresip (a real softphone): a signalling-level Opus call each way,
/// with the Opus offer/answer written by hand (media is the call engine's job).
@Suite("SIP interop with baresip", .enabled(if: ChildProcess.isInstalled("baresip")))
struct BaresipInteropTests {
    /// A baresip configuration folder: listening on `port`, Opus only, a sine source (no sound
    /// card needed), answering calls at once.
    static func configure(_ directory: TemporaryDirectory, user: String, port: UInt16) throws {
        try """
        sip_listen 127.0.0.1:\(port)
        net_interface 127.0.0.1
        audio_source ausine,440
        module_path /usr/lib/baresip/modules
        module stdio.so
        module opus.so
        module ausine.so
        module_app account.so
        module_app menu.so

        """.write(toFile: directory.file("config"), atomically: true, encoding: .utf8)
        try "<sip:\(user)@127.0.0.1:\(port)>;regint=0;answermode=auto\n"
            .write(toFile: directory.file("accounts"), atomically: true, encoding: .utf8)
    }

    /// baresip as alice, configured in `directory`, calling `agent` (bob) at once; it quits after `seconds`.
    static func dialing(_ agent: SIPUserAgent, from directory: TemporaryDirectory, seconds: Int) throws -> ExternalProcess {
        try configure(directory, user: "alice", port: try freeSIPPort())
        return try ExternalProcess("baresip", [
            "-f", directory.path, "-t", "\(seconds)", "-e", "/dial sip:bob@127.0.0.1:\(agent.localAddress.port)",
        ], directory: directory.path)
    }

    /// baresip calls us; we answer with Opus; baresip reports the call established; we hang up.
    @Test func baresipCallsTheUserAgent() async throws {
        let directory = TemporaryDirectory(prefix: "sip-baresip-caller")
        defer { directory.remove() }
        let media = try HeldPort()
        defer { withExtendedLifetime(media) {} }  // held until baresip is gone
        let agent = try makeAgent(user: "bob", timers: .rfc3261)
        let calls = Recorder(agent.incomingCalls)
        let baresip = try Self.dialing(agent, from: directory, seconds: 15)
        defer { baresip.stop() }

        let call = try #require(await calls.element(0, timeout: .seconds(10)), "no INVITE from baresip:\n\(baresip.output)")
        let events = Recorder(call.events)
        let offer = try #require(call.offer)
        #expect(offer.contentType == "application/sdp")
        #expect(offer.text.contains("opus/48000/2"))
        try call.ringing()
        try call.accept(answer: opusSDP(port: media.port))
        #expect(await events.wait(timeout: .seconds(5)) { $0.first == .confirmed(nil) }, "\(events.all)\n\(baresip.output)")
        #expect(await baresip.waitForOutput("Call established", timeout: .seconds(5)), "\(baresip.output)")
        try call.bye()
        // libre reports a BYE it received as the session closing with ECONNRESET.
        #expect(await baresip.waitForOutput("session closed: Connection reset by peer", timeout: .seconds(5)),
                "\(baresip.output)")
        #expect(agent.statistics.malformedDropped == 0)
        #expect(agent.statistics.unknownDialogRequests == 0)
    }

    /// A call from baresip (which quits after `seconds`) to `agent`, answered with Opus and
    /// established on both sides: the call, its events, baresip, and our answer.
    static func answeredCall(to agent: SIPUserAgent, from directory: TemporaryDirectory, seconds: Int, media: HeldPort) async throws
        -> (SIPCall, Recorder<SIPCallEvent>, ExternalProcess, SessionDescription) {
        let calls = Recorder(agent.incomingCalls)
        let baresip = try dialing(agent, from: directory, seconds: seconds)
        guard let call = await calls.element(0, timeout: .seconds(10)) else {
            baresip.stop()
            Issue.record("no INVITE from baresip:\n\(baresip.output)")
            throw CancellationError()
        }
        let events = Recorder(call.events)
        let offer = try SessionDescription.parse(try #require(call.offer).text)
        let (answer, _) = try AudioSDP.answer(offer, address: SocketAddress(host: "127.0.0.1", port: UInt16(media.port)), sessionID: 9,
                                             parameters: .init(useInbandFEC: true))
        try call.accept(answer: .sdp(answer.text))
        #expect(await baresip.waitForOutput("Call established", timeout: .seconds(5)), "\(baresip.output)")
        return (call, events, baresip, answer)
    }

    /// The Opus stream's direction in each session description that parses.
    static func directions(_ bodies: [SIPBody]) -> [MediaDirection] {
        bodies.compactMap { body in
            (try? SessionDescription.parse(body.text)).flatMap { try? AudioSDP.stream(in: $0) }?.direction
        }
    }

    /// baresip calls us, then holds and resumes the call (its `/hold` and `/resume` commands):
    /// each re-INVITE reaches the answerer, which answers with the reverse direction.
    @Test func baresipHoldsAndResumes() async throws {
        let directory = TemporaryDirectory(prefix: "sip-baresip-hold")
        defer { directory.remove() }
        let agent = try makeAgent(user: "bob", timers: .rfc3261) { _, offer, peerPrevious, ours in
            guard let new = try? SessionDescription.parse(offer.text), let previous = peerPrevious.flatMap({ try? SessionDescription.parse($0.text) }),
                  let last = try? SessionDescription.parse(ours.text),
                  let (answer, _) = try? AudioSDP.reanswer(new, peerPrevious: previous, ours: last) else { return nil }
            return .sdp(answer.text)
        }
        let media = try HeldPort()
        defer { withExtendedLifetime(media) {} }  // held until baresip is gone
        let (call, events, baresip, _) = try await Self.answeredCall(to: agent, from: directory, seconds: 20, media: media)
        defer { baresip.stop() }
        func reoffers() -> [MediaDirection] {
            Self.directions(events.all.compactMap { if case let .reoffered(body) = $0 { body } else { nil } })
        }
        baresip.send("/hold")
        #expect(await events.wait(timeout: .seconds(5)) { _ in reoffers().count == 1 }, "\(events.all)\n\(baresip.output)")
        baresip.send("/resume")
        #expect(await events.wait(timeout: .seconds(5)) { _ in reoffers().count == 2 }, "\(events.all)\n\(baresip.output)")
        #expect(reoffers() == [.sendonly, .sendrecv], "\(baresip.output)")
        #expect(call.state == .established)
        try call.bye()
        #expect(agent.statistics.malformedDropped == 0)
        #expect(agent.statistics.unknownDialogRequests == 0)
    }

    /// baresip calls us, and we hold and resume the call with our own re-INVITEs (`a=inactive`,
    /// then `a=sendrecv`): baresip answers each with the matching direction.
    @Test func weHoldAndResumeACallWithBaresip() async throws {
        let directory = TemporaryDirectory(prefix: "sip-baresip-held")
        defer { directory.remove() }
        let agent = try makeAgent(user: "bob", timers: .rfc3261)
        let media = try HeldPort()
        defer { withExtendedLifetime(media) {} }  // held until baresip is gone
        let (call, events, baresip, answer) = try await Self.answeredCall(to: agent, from: directory, seconds: 20, media: media)
        defer { baresip.stop() }
        func answers() -> [MediaDirection] {
            Self.directions(events.all.compactMap { if case let .reinviteAnswered(body?) = $0 { body } else { nil } })
        }
        try call.reinvite(offer: .sdp(try AudioSDP.reoffer(answer, direction: .inactive).text))
        #expect(await events.wait(timeout: .seconds(5)) { _ in answers().count == 1 }, "\(events.all)\n\(baresip.output)")
        let held = try SessionDescription.parse(try #require(call.localDescription).text)
        try call.reinvite(offer: .sdp(try AudioSDP.reoffer(held, direction: .sendrecv).text))
        #expect(await events.wait(timeout: .seconds(5)) { _ in answers().count == 2 }, "\(events.all)\n\(baresip.output)")
        #expect(answers() == [.inactive, .sendrecv], "\(baresip.output)")
        #expect(call.state == .established)
        try call.bye()
        #expect(agent.statistics.malformedDropped == 0)
        #expect(agent.statistics.strayResponses == 0)
    }

    /// We call baresip with an Opus offer; it answers with Opus; both see the call; we hang up.
    @Test func userAgentCallsBaresip() async throws {
        let directory = TemporaryDirectory(prefix: "sip-baresip-callee")
        defer { directory.remove() }
        let media = try HeldPort()
        defer { withExtendedLifetime(media) {} }  // held until baresip is gone
        let port = try freeSIPPort()
        try Self.configure(directory, user: "carol", port: port)
        let baresip = try ExternalProcess("baresip", ["-f", directory.path, "-t", "15"], directory: directory.path)
        defer { baresip.stop() }
        #expect(await baresip.waitForOutput("baresip is ready", timeout: .seconds(10)), "\(baresip.output)")

        let agent = try makeAgent(user: "alice", timers: .rfc3261)
        let call = try agent.invite(to: SIPURI(user: "carol", host: "127.0.0.1", port: port), offer: opusSDP(port: media.port))
        let events = Recorder(call.events)
        #expect(await events.wait(timeout: .seconds(10)) { $0.contains { if case .answered = $0 { true } else { false } } },
                "\(events.all)\n\(baresip.output)")
        guard case .answered(let answer)? = events.all.last else {
            Issue.record("not answered: \(events.all)")
            return
        }
        #expect(answer?.text.contains("opus/48000/2") == true, "\(answer?.text ?? "no answer")")
        #expect(await baresip.waitForOutput("Call established", timeout: .seconds(5)), "\(baresip.output)")
        try call.bye()
        // libre reports a BYE it received as the session closing with ECONNRESET.
        #expect(await baresip.waitForOutput("session closed: Connection reset by peer", timeout: .seconds(5)),
                "\(baresip.output)")
        #expect(agent.statistics.strayResponses == 0)
    }
}
