import AudioIO
import AudioSession
import Foundation
import Simulation
import Synchronization
import VoiceCall
import WAV

/// The softphone of Docs/embedding.md as a program: Bob answers every call, Alice dials him,
/// talks while printing statistics, mutes, holds and resumes him, takes a second call from
/// Carol (which holds Bob), swaps back, and hangs up. All three run in this process on
/// loopback, each on its own simulated phone (a paced room device: a talker at the
/// microphone, the loudspeaker's echo), so it runs on a machine without a sound card.
///
///     swift run --package-path Examples/Softphone softphone [--seconds S] [--input TALKER.wav] [--output HEARD.wav]
///
/// `--input` is Alice's talker (a 16 kHz WAV file; a tone otherwise), `--output` gets what Bob
/// heard. Exits 0 when audio went both ways and both ends saw the call end as they should.
@main
struct Softphone {
    static func main() async {
        do {
            let options = try Options(CommandLine.arguments.dropFirst())
            // A call that has not finished by then is a failure, not a hang.
            Task {
                try await Task.sleep(for: .seconds(options.seconds + 10))
                fail("the call did not end within \(Int(options.seconds + 10)) s")
            }
            try await run(options)
        } catch {
            fail("\(error)")
        }
    }

    static func run(_ options: Options) async throws {
        let aliceSpeech = try options.input.map(Phone.speech(from:)) ?? Phone.tone(frequency: 300)
        let alice = try Phone(name: "alice", speech: aliceSpeech)
        let bob = try Phone(name: "bob", speech: Phone.tone(frequency: 440))
        await alice.controller.start()
        await bob.controller.start()
        // Bob is told of Alice's holds (re-INVITEs with a=inactive, then a=sendrecv).
        let bobsHolds = Mutex<[Bool]>([])
        Task {
            for await event in bob.controller.events {
                if case let .peerHold(_, held) = event { bobsHolds.withLock { $0.append(held) } }
            }
        }

        // Bob answers every incoming call.
        let (answered, answeredContinuation) = AsyncStream.makeStream(of: Call.self)
        Task {
            for await call in bob.controller.incomingCalls {
                print("bob: call from \(call.remoteURI)")
                try? await call.answer()
                Task { for await state in call.states { print("bob:", state) } }
                answeredContinuation.yield(call)
            }
        }

        // Alice dials, talks while printing statistics, hangs up.
        let call = try await alice.controller.dial("sip:bob@\(bob.controller.sipAddress)")
        Task { for await state in call.states { print("alice:", state) } }
        guard await call.connected() == .active else { throw Failure("the call did not connect: \(call.state)") }
        var bobsCalls = answered.makeAsyncIterator()
        guard let bobsCall = await bobsCalls.next() else { throw Failure("bob answered nothing") }
        for second in 1...max(1, Int(options.seconds.rounded())) {
            try await Task.sleep(for: .seconds(1))
            let s = await call.statistics
            print("alice \(second) s: sent \(s.packetsSent) received \(s.packetsReceived) lost \(s.packetsLost) "
                  + "jitter \(format(s.jitterMs)) ms RTT \(s.rttMs.map(format) ?? "-") ms "
                  + "ERLE \(s.erleDB.map(format) ?? "-") dB route \(s.route)")
        }
        try await callControl(alice: alice, bob: call)
        await call.hangUp()  // stops the I/O, deactivates the session with notifyOthersOnDeactivation
        let aliceEnd = await call.ended()
        let bobEnd = await bobsCall.ended()
        let (mine, theirs) = (await call.statistics, await bobsCall.statistics)
        print("alice: ended (\(aliceEnd)): sent \(mine.packetsSent), received \(mine.packetsReceived), lost \(mine.packetsLost)")
        print("bob: ended (\(bobEnd)): sent \(theirs.packetsSent), received \(theirs.packetsReceived), lost \(theirs.packetsLost)")
        if let output = options.output { try bob.writeHeard(to: output) }
        await alice.controller.shutdown()
        await bob.controller.shutdown()

        guard aliceEnd == .localHangUp, bobEnd == .remoteHangUp else { throw Failure("the call ended wrongly") }
        let holds = bobsHolds.withLock { $0 }
        guard holds == [true, false, true, false] else { throw Failure("bob was told of holds \(holds), not two holds and resumes") }
        guard mine.packetsReceived > 0, theirs.packetsReceived > 0 else { throw Failure("no audio went one of the ways") }
        guard !alice.session.isActive, !bob.session.isActive else { throw Failure("a session is still active") }
        print("softphone: ok")
    }

    /// Mute, hold and resume, then a second call: Carol rings while Alice talks with Bob;
    /// answering her holds Bob, and resuming Bob holds Carol (a swap) before she is hung up.
    static func callControl(alice: Phone, bob call: Call) async throws {
        await call.setMuted(true)  // silence instead of the microphone; packets still flow
        print("alice: muted")
        try await Task.sleep(for: .milliseconds(500))
        await call.setMuted(false)
        try await call.hold()
        print("alice: bob \(call.state)")
        try await Task.sleep(for: .milliseconds(500))
        try await call.resume()
        print("alice: bob \(call.state)")

        let carol = try Phone(name: "carol", speech: Phone.tone(frequency: 550))
        await carol.controller.start()
        var incoming = alice.controller.incomingCalls.makeAsyncIterator()
        _ = try await carol.controller.dial("sip:alice@\(alice.controller.sipAddress)")
        guard let waiting = await incoming.next() else { throw Failure("carol's call did not ring") }
        print("alice: call waiting from \(waiting.remoteURI)")
        try await waiting.answer()
        guard call.state == .held(.local) else { throw Failure("answering carol left bob \(call.state)") }
        print("alice: carol \(waiting.state), bob \(call.state)")
        try await Task.sleep(for: .milliseconds(500))
        try await call.resume()
        guard waiting.state == .held(.local) else { throw Failure("taking bob back left carol \(waiting.state)") }
        print("alice: bob \(call.state), carol \(waiting.state)")
        await waiting.hangUp()
        guard await waiting.ended() == .localHangUp else { throw Failure("carol's call ended as \(waiting.state)") }
        await carol.controller.shutdown()
        guard !carol.session.isActive else { throw Failure("carol's session is still active") }
    }

    static func format(_ x: Double) -> String { String(format: "%.1f", x) }

    static func fail(_ message: String) -> Never {
        FileHandle.standardError.write(Data("softphone: \(message)\n".utf8))
        exit(1)
    }
}

/// One end of the call: its own simulated phone, audio session and call controller. Each end
/// has its own audio system, as two phones would: in one system the second call's
/// activation would interrupt the first.
///
/// Thread safety: safe from any thread.
final class Phone: Sendable {
    static let sampleRate = 16000
    let session: AudioSession
    let controller: CallController
    private let devices = Devices()

    init(name: String, speech: [Float]) throws {
        session = AudioSystem(hardware: SimulatedAudioHardware()).makeSession(name: name)
        let devices = self.devices
        var configuration = CallConfiguration(sipAddress: "127.0.0.1:0", userName: name, audio: .device { format in
            // 20 ms periods, paced in real time; a little of the loudspeaker echoes into the microphone.
            let device = try SimulatedRoomDevice(.init(
                sampleRate: format.sampleRate, periodFrames: format.sampleRate / 50,
                echoPath: EchoPathConfiguration(sampleRate: format.sampleRate, impulseResponse: [0, 0.3]),
                nearSpeech: speech, paced: true, recordSeconds: 60))
            devices.list.withLock { $0.append(device) }
            return device
        })
        configuration.preferredSampleRate = Double(Self.sampleRate)
        controller = try CallController(configuration: configuration, session: session)
    }

    /// What this end's loudspeaker played (the other end's voice), to a WAV file.
    func writeHeard(to path: String) throws {
        guard let device = devices.list.withLock({ $0.last }) else { return }
        try WAV.write(WAVAudio(sampleRate: device.format.sampleRate, samples: device.recording.played), to: path)
    }

    /// A talker: a tone in bursts of half a second.
    static func tone(frequency: Double) -> [Float] {
        (0..<sampleRate).map { i in
            i < sampleRate / 2 ? 0.1 * Float(sin(2 * Double.pi * frequency * Double(i) / Double(sampleRate))) : 0
        }
    }

    /// A talker from a WAV file, mono at the call's rate.
    static func speech(from path: String) throws -> [Float] {
        let audio = try WAV.read(path)
        guard audio.sampleRate == sampleRate else { throw Failure("\(path): \(audio.sampleRate) Hz, not \(sampleRate)") }
        return audio.mono
    }
}

/// The devices made for a phone's calls (on the controller's thread), kept to read their recordings.
///
/// Thread safety: safe from any thread (a lock).
final class Devices: Sendable {
    let list = Mutex<[SimulatedRoomDevice]>([])
}

/// The command line.
struct Options {
    var seconds = 3.0
    var input: String?
    var output: String?

    init(_ arguments: ArraySlice<String>) throws {
        var rest = arguments
        while let flag = rest.popFirst() {
            guard let value = rest.popFirst() else { throw Failure("\(flag) needs a value") }
            switch flag {
            case "--seconds":
                guard let s = Double(value), s > 0, s <= 60 else { throw Failure("--seconds must be in (0, 60]") }
                seconds = s
            case "--input": input = value
            case "--output": output = value
            default: throw Failure("unknown option \(flag) (--seconds S, --input FILE, --output FILE)")
            }
        }
    }
}

struct Failure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
