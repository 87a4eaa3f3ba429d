import AudioAnalysis
import AudioIO
import AudioSession
import Simulation
import Foundation
import Testing
import TestSupport
import VoiceCall
import VoiceProcessing

/// A local three-way conference: each party hears the other two and not itself.
@Suite("Three-way conference", .serialized)
struct ConferenceCallTests {
    /// The level of `frequency` in `x` (a Goertzel filter), in dBFS of a sine's RMS.
    static func level(of frequency: Double, in x: ArraySlice<Float>, sampleRate: Int) -> Double {
        let w = 2 * Double.pi * frequency / Double(sampleRate)
        var s1 = 0.0, s2 = 0.0
        for sample in x {
            let s0 = Double(sample) + 2 * cos(w) * s1 - s2
            (s2, s1) = (s1, s0)
        }
        let power = s1 * s1 + s2 * s2 - 2 * cos(w) * s1 * s2
        let amplitude = 2 * power.squareRoot() / Double(max(1, x.count))
        return 20 * log10(max(1e-9, amplitude / 2.squareRoot()))
    }

    /// The levels of the three talkers' tones over what `phone`'s loudspeaker played in the
    /// second before its call ended.
    static func heard(by phone: Phone) throws -> [Double: Double] {
        let device = try #require(phone.newestDevice)
        let played = device.recording.played
        let rate = device.format.sampleRate
        let window = played[max(0, played.count - rate - rate / 10)..<max(0, played.count - rate / 10)]
        return Dictionary(uniqueKeysWithValues: [300.0, 440, 550].map { ($0, level(of: $0, in: window, sampleRate: rate)) })
    }

    @Test("Alice holds a call with Bob and talks to Carol, then joins them: each hears the other two and not itself; Bob leaving leaves Alice and Carol talking")
    func threeWay() async throws {
        let plain: (inout CallConfiguration) -> Void = { $0.voiceProcessing.mode = .other }
        let alice = try Phone("alice", tone: 300, echo: 0, configure: plain)
        let bob = try Phone("bob", tone: 440, echo: 0, configure: plain)
        let carol = try Phone("carol", tone: 550, echo: 0, configure: plain)
        let (withBob, bobsCall) = try await alice.call(bob)
        let (withCarol, carolsCall) = try await alice.call(carol)
        #expect(withBob.state == .held(.local), "connecting Carol's call held Bob's")

        try await withCarol.conference(with: withBob)
        #expect(withBob.state == .active)
        #expect(withCarol.state == .active)
        #expect(await withBob.conferencePartnerID == withCarol.id)
        await #expect(throws: CallError.self) { try await withBob.conference(with: withCarol) }
        try await Task.sleep(for: .seconds(2.5))

        await bobsCall.hangUp()  // Bob leaves: Alice and Carol go on
        #expect(await withBob.ended() == .remoteHangUp)
        #expect(await withCarol.conferencePartnerID == nil)
        #expect(withCarol.state == .active)
        let sent = await withCarol.statistics.packetsSent
        try await Task.sleep(for: .milliseconds(300))
        #expect(await withCarol.statistics.packetsSent > sent + 5, "Alice's audio to Carol goes on after Bob left")
        await withCarol.hangUp()
        #expect(await carolsCall.ended() == .remoteHangUp)

        let (a, b, c) = (try Self.heard(by: alice), try Self.heard(by: bob), try Self.heard(by: carol))
        print("conference: alice hears \(a), bob \(b), carol \(c) (dBFS at 300, 440, 550 Hz)")
        // Bob's last second was all conference; Alice's and Carol's end a moment after he left.
        #expect(b[300]! > -40 && b[550]! > -40 && b[440]! < -50, "bob: \(b)")
        #expect(c[300]! > -40 && c[440]! > -46 && c[550]! < -50, "carol: \(c)")
        #expect(a[440]! > -46 && a[550]! > -40 && a[300]! < -50, "alice: \(a)")
        #expect(await eventually { !alice.session.isActive })
        await alice.shutdown(); await bob.shutdown(); await carol.shutdown()
    }
}
