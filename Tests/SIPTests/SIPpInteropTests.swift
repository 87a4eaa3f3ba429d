import Foundation
import Platform
import SIP
import Testing
import TestSupport

/// Interoperability with SIPp (`sip-tester`), using its built-in `uac` and `uas` scenarios
/// (their SDP offers PCMU: fine for signalling).
@Suite("SIP interop with SIPp", .enabled(if: ChildProcess.isInstalled("sipp")))
struct SIPpInteropTests {
    /// SIPp calls us (INVITE, ACK, BYE); we ring, answer with an Opus SDP, and see the BYE.
    @Test func sippCallsTheUserAgent() async throws {
        let directory = TemporaryDirectory(prefix: "sip-sipp-uac")
        defer { directory.remove() }
        let agent = try makeAgent(user: "bob", timers: .rfc3261)
        let calls = Recorder(agent.incomingCalls)
        let sipp = try ExternalProcess("sipp", [
            "-sn", "uac", "127.0.0.1:\(agent.localAddress.port)", "-s", "bob", "-i", "127.0.0.1",
            "-p", String(try freeUDPPort()), "-m", "1", "-d", "200", "-timeout", "15s", "-nostdin", "-trace_err",
        ], directory: directory.path)
        let call = try #require(await calls.element(0, timeout: .seconds(10)), "no INVITE from SIPp:\n\(sipp.output)")
        let events = Recorder(call.events)
        #expect(call.remote.uri.user == "sipp")
        #expect(call.offer?.text.contains("m=audio") == true)
        try call.ringing()
        try call.accept(answer: opusSDP(port: 5000))
        #expect(await events.wait(timeout: .seconds(5)) { $0.first == .confirmed(nil) })
        #expect(await events.endReason(timeout: .seconds(10)) == .hungUp(byRemote: true))
        let status = await sipp.exitStatus(timeout: .seconds(15))
        #expect(status == 0, "SIPp exit \(String(describing: status)):\n\(sipp.output)")
        #expect(agent.statistics.malformedDropped == 0)
    }

    /// We call SIPp's UAS: 180, 200 with SDP, our ACK, our BYE, its 200.
    @Test func userAgentCallsSIPp() async throws {
        let directory = TemporaryDirectory(prefix: "sip-sipp-uas")
        defer { directory.remove() }
        let port = try freeUDPPort()
        let sipp = try ExternalProcess("sipp", [
            "-sn", "uas", "-i", "127.0.0.1", "-p", String(port), "-m", "1", "-timeout", "15s", "-nostdin", "-trace_err",
        ], directory: directory.path)
        let agent = try makeAgent(user: "alice", timers: .rfc3261)
        // SIPp may take a moment to bind; Timer A covers that.
        try await Task.sleep(for: .milliseconds(100))
        let call = try agent.invite(to: SIPURI(user: "service", host: "127.0.0.1", port: port), offer: opusSDP(port: 4000))
        let events = Recorder(call.events)
        #expect(await events.wait(timeout: .seconds(10)) { $0.contains { if case .answered = $0 { true } else { false } } },
                "\(events.all)\n\(sipp.output)")
        #expect(events.all.contains(.ringing(nil)))
        guard case .answered(let answer)? = events.all.last else {
            Issue.record("not answered: \(events.all)")
            return
        }
        #expect(answer?.text.contains("RTP/AVP 0") == true)
        try call.bye()
        // SIPp answers the BYE, waits 4 s for retransmissions, and exits 0 when the call succeeded.
        let status = await sipp.exitStatus(timeout: .seconds(15))
        #expect(status == 0, "SIPp exit \(String(describing: status)):\n\(sipp.output)")
    }
}
