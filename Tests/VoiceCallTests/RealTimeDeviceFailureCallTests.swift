import Platform
import AudioIO
import AudioSession
import Foundation
import Testing
import TestSupport
import VoiceCall

/// A call on a sound server that stalls or dies: the call must end with a reason an
/// application can show, within a second, and the session must be inactive again. These
/// tests stop and kill the testbed's server, so `Tools/test` runs them with the other
/// device-failure suite, alone and last.
@Suite("Real-time device failure in a call", .serialized)
struct RealTimeDeviceFailureCallTests {
    /// A softphone whose receiver, speaker and microphone are the ALSA PCM `pcm`.
    static func hardwarePhone(_ pcm: String) throws -> (AudioSession, CallController) {
        let map = RouteMap(ports: [
            .init(device: "builtIn", port: .builtInReceiver, name: "Receiver", playback: pcm),
            .init(device: "builtIn", port: .builtInSpeaker, name: "Speaker", playback: pcm),
            .init(device: "builtIn", port: .builtInMic, name: "Microphone", capture: pcm),
        ])
        let system = AudioSystem(hardware: ALSAAudioHardware(routeMap: map))
        let session = system.makeSession(name: "alice")
        var configuration = CallConfiguration(sipAddress: "127.0.0.1:0", userName: "alice", audio: .hardware)
        configuration.preferredSampleRate = 16000
        return (session, try CallController(configuration: configuration, session: session))
    }

    enum Harm: String, CaseIterable { case stall, kill }

    @Test("The server stalls or dies mid-call: the call ends with the device's reason (measured 0.6 s and 30 ms)",
          arguments: Harm.allCases)
    func callEndsWithDeviceReason(harm: Harm) async throws {
        try Testbed.start()
        guard Testbed.hasPipeWire else { return }
        let (session, alice) = try Self.hardwarePhone("pipewire")
        let bob = try Phone("bob")
        let (call, _) = try await Phone.call(bob, from: alice)
        try await Task.sleep(for: .seconds(1))
        #expect(session.isActive)

        let pid = try Testbed.serverPID()
        let harmed = ContinuousClock.now
        kill(pid, harm == .stall ? SIGSTOP : SIGKILL)
        defer {
            if harm == .stall { kill(pid, SIGCONT) }
            try? Testbed.restart()
        }
        #expect(await eventually(timeout: .seconds(5)) { call.state.isEnded })
        let took = harmed.duration(to: .now)
        let reason = await call.ended()
        print("device \(harm): the call ended after \(took): \(reason)")
        guard case .deviceFailed = reason else {
            Issue.record("ended \(reason), not for the device")
            return
        }
        // Detection (0.3 s for a stall), one attempt to open the device again (which stalls too), and the hang-up.
        #expect(took <= .milliseconds(1500))  // measured 0.6 s (stall) and 30 ms (kill); room for a loaded machine
        #expect(!session.isActive)
        await alice.shutdown()
        await bob.shutdown()
    }
}
