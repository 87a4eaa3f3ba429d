import Platform
import AudioAnalysis
import AudioIO
import AudioSession
import Simulation
import Synchronization
import Testing
import TestSupport
import VoiceCall

/// One softphone of a test: its own audio system with simulated hardware, a session, a
/// controller, and a paced simulated room with a talker.
final class Phone: Sendable {
    let hardware = SimulatedAudioHardware()
    let system: AudioSystem
    let session: AudioSession
    let controller: CallController
    /// - Parameters: `tone`: the talker's frequency; `talker`: 16 kHz speech instead of the tone;
    ///   `echo`: how much of the loudspeaker the microphone hears.
    init(_ name: String, options: AudioSession.CategoryOptions = [], latching: MediaLatching = .whenUnreachable,
         tone: Double = 300, talker: [Float]? = nil, echo: Float = 0.3, configure: (inout CallConfiguration) -> Void = { _ in }) throws {
        system = AudioSystem(hardware: hardware)
        session = system.makeSession(name: name)
        let speech = talker ?? Tone.sine(frequency: tone, sampleRate: 16000, seconds: 1, amplitude: 0.05)
        let log = DeviceLog()
        var configuration = CallConfiguration(sipAddress: "127.0.0.1:0", userName: name, audio: .device { format in
            let device = try SimulatedRoomDevice(.init(sampleRate: format.sampleRate, periodFrames: format.sampleRate / 50,
                                                       echoPath: EchoPathConfiguration(sampleRate: format.sampleRate, impulseResponse: [0, echo]),
                                                       nearSpeech: speech, paced: true, recordSeconds: 30))
            log.append(device)
            return device
        }, categoryOptions: options)
        deviceLog = log
        configuration.preferredSampleRate = 16000
        configuration.mediaLatching = latching
        configure(&configuration)
        controller = try CallController(configuration: configuration, session: session)
    }

    /// Calls `other`, which answers; returns both ends once active.
    func call(_ other: Phone) async throws -> (Call, Call) {
        try await Self.call(other, from: controller)
    }

    /// `controller` (any endpoint, simulated or on a sound card) calls `other`, which answers;
    /// returns both ends once active.
    static func call(_ other: Phone, from controller: CallController) async throws -> (Call, Call) {
        await controller.start()
        await other.controller.start()
        let answered = Task { () -> Call? in
            for await call in other.controller.incomingCalls {
                try await call.answer()
                return call
            }
            return nil
        }
        let call = try await controller.dial("sip:\(other.session.name)@\(other.controller.sipAddress)")
        let state = await call.connected()
        let theirs = try #require(try await answered.value)
        #expect(state == .active)
        return (call, theirs)
    }

    func shutdown() async { await controller.shutdown() }

    private let deviceLog: DeviceLog
    /// The device of the newest call to open one.
    var newestDevice: SimulatedRoomDevice? { deviceLog.newest }
}

/// The devices a phone's calls opened (the factory runs on the controller's task).
final class DeviceLog: Sendable {
    private let list = Mutex<[SimulatedRoomDevice]>([])
    func append(_ device: SimulatedRoomDevice) { list.withLock { $0.append(device) } }
    var newest: SimulatedRoomDevice? { list.withLock { $0.last } }
}

@Suite("Call and session lifecycle", .serialized)
struct CallLifecycleTests {
    @Test("With no call the session is inactive; a call activates it; hang-up deactivates both ends")
    func sessionActiveOnlyDuringCall() async throws {
        let alice = try Phone("alice"), bob = try Phone("bob")
        #expect(!alice.session.isActive && !bob.session.isActive)
        let (call, theirs) = try await alice.call(bob)
        #expect(alice.session.isActive && bob.session.isActive)
        #expect(alice.session.category == .playAndRecord && alice.session.mode == .voiceChat)
        #expect(await eventually { await call.statistics.packetsReceived > 20 })
        await call.hangUp()
        #expect(await theirs.ended() == .remoteHangUp)   // a BYE from the other side ends the call
        #expect(await call.ended() == .localHangUp)
        #expect(await eventually { !alice.session.isActive && !bob.session.isActive })
        await alice.shutdown(); await bob.shutdown()
    }

    @Test("DTMF keys pressed on one end arrive once each at the other, in order; bad keys send nothing")
    func dtmfBetweenTwoEnds() async throws {
        let alice = try Phone("alice"), bob = try Phone("bob")
        let (call, theirs) = try await alice.call(bob)
        let heard = Mutex("")
        let listener = Task { for await key in theirs.dtmf { heard.withLock { $0.append(key) } } }
        defer { listener.cancel() }
        await #expect(throws: CallError.self) { try await call.sendDTMF("12x") }  // nothing queued
        try await call.sendDTMF("159")
        try await call.sendDTMF("*0#")
        // Six keys of 200 ms each; waited for, not slept, so a loaded machine only takes longer.
        #expect(await eventually { heard.withLock { $0 }.count >= 6 })
        try await Task.sleep(for: .milliseconds(300))  // room for a key that should not come
        let lost = await theirs.statistics.packetsLost
        await call.hangUp()
        #expect(heard.withLock { $0 } == "159*0#")
        #expect(lost == 0)  // the events' sequence numbers are not taken for lost audio
        await alice.shutdown(); await bob.shutdown()
    }

    @Test("A music player interrupted by the call resumes after hang-up (ended + shouldResume)")
    func musicResumesAfterCall() async throws {
        let alice = try Phone("alice"), bob = try Phone("bob")
        let music = alice.system.makeSession(name: "music")
        try music.setCategory(.playback)
        try music.setActive(true)
        let interruptions = Mutex<[AudioSession.Interruption]>([])
        let token = music.addObserver { note in
            if case let .interruption(i) = note { interruptions.withLock { $0.append(i) } }
        }
        defer { music.removeObserver(token) }
        let (call, _) = try await alice.call(bob)
        #expect(!music.isActive)
        #expect(interruptions.withLock { $0.first?.type } == .began)
        await call.hangUp()
        #expect(await eventually { interruptions.withLock { $0.count } >= 2 })
        let ended = try #require(interruptions.withLock { $0.last })
        #expect(ended.type == .ended && ended.options.contains(.shouldResume))
        await alice.shutdown(); await bob.shutdown()
    }

    @Test("A phone call puts the call on hold and its end resumes it; the peer is told both with re-INVITEs")
    func phoneCallHoldsAndResumes() async throws {
        let alice = try Phone("alice"), bob = try Phone("bob")
        let bobHolds = Mutex<[Bool]>([])
        let bobEvents = Task {
            for await event in bob.controller.events {
                if case let .peerHold(_, held) = event { bobHolds.withLock { $0.append(held) } }
            }
        }
        defer { bobEvents.cancel() }
        let (call, theirs) = try await alice.call(bob)
        let phone = alice.system.makeSession(name: "phone", priority: .phoneCall)
        try phone.setCategory(.playAndRecord, mode: .voiceChat)
        try phone.setActive(true)
        #expect(await eventually { call.state == .held(.interrupted) })
        #expect(!alice.session.isActive)
        // Bob got `a=inactive`: the call is held on his side too, and he stops sending.
        #expect(await eventually { bobHolds.withLock { $0 } == [true] })
        let before = await call.statistics
        let bobBefore = await theirs.statistics
        try await Task.sleep(for: .milliseconds(500))
        #expect(await call.statistics.packetsSent == before.packetsSent)  // no capture while held
        #expect(await theirs.statistics.packetsSent == bobBefore.packetsSent)
        try phone.setActive(false, options: .notifyOthersOnDeactivation)
        #expect(await eventually { call.state == .active })
        #expect(alice.session.isActive)
        #expect(await eventually { await call.statistics.packetsSent > before.packetsSent + 10 })
        // `a=sendrecv` takes it off hold: Bob sends again.
        #expect(await eventually { bobHolds.withLock { $0 } == [true, false] })
        #expect(await eventually { await theirs.statistics.packetsSent > bobBefore.packetsSent + 10 })
        await call.hangUp()
        await alice.shutdown(); await bob.shutdown()
    }

    @Test("A microphone muted by the hardware holds the call only without overrideMutedMicrophoneInterruption",
          arguments: [false, true])
    func microphoneMute(overrides: Bool) async throws {
        let alice = try Phone("alice", options: overrides ? [.overrideMutedMicrophoneInterruption] : []), bob = try Phone("bob")
        let (call, _) = try await alice.call(bob)
        alice.hardware.setBuiltInMicMuted(true)
        if overrides {
            try await Task.sleep(for: .milliseconds(200))
            #expect(call.state == .active)
            #expect(alice.session.capturesSilence)
        } else {
            #expect(await eventually { call.state == .held(.interrupted) })
        }
        alice.hardware.setBuiltInMicMuted(false)
        #expect(await eventually { call.state == .active })
        await call.hangUp()
        await alice.shutdown(); await bob.shutdown()
    }

    @Test("A call we hold stays held when the peer offers to resume it: the answer is inactive until our interruption ends")
    func ourHoldOutlastsThePeersResume() async throws {
        let alice = try Phone("alice"), bob = try Phone("bob")
        // The peer-hold events each side reports.
        let aliceHolds = Mutex<[Bool]>([]), bobHolds = Mutex<[Bool]>([])
        let aliceEvents = alice.controller.events, bobEvents = bob.controller.events
        let watchers = [
            Task { for await case let .peerHold(_, held) in aliceEvents { aliceHolds.withLock { $0.append(held) } } },
            Task { for await case let .peerHold(_, held) in bobEvents { bobHolds.withLock { $0.append(held) } } },
        ]
        defer { watchers.forEach { $0.cancel() } }
        let (call, theirs) = try await alice.call(bob)
        func interrupt(_ phone: Phone) throws -> AudioSession {
            let other = phone.system.makeSession(name: "phone", priority: .phoneCall)
            try other.setCategory(.playAndRecord, mode: .voiceChat)
            try other.setActive(true)
            return other
        }
        // Both are interrupted, Alice first; each tells the other with `a=inactive`.
        let alicePhone = try interrupt(alice)
        #expect(await eventually { bobHolds.withLock { $0 } == [true] })
        let bobPhone = try interrupt(bob)
        #expect(await eventually { theirs.state == .held(.interrupted) })
        // Bob's interruption ends first. His `a=sendrecv` reaches Alice, who still holds the call
        // and answers `inactive`: Bob's audio runs again but sends nothing.
        try bobPhone.setActive(false, options: .notifyOthersOnDeactivation)
        #expect(await eventually { theirs.state == .active })
        try await Task.sleep(for: .seconds(1))  // Bob's re-INVITE answered
        let bobResumed = await theirs.statistics
        try await Task.sleep(for: .milliseconds(500))
        #expect(await theirs.statistics.packetsSent == bobResumed.packetsSent)
        #expect(call.state == .held(.interrupted))
        // Alice's own hold is not announced to her as the peer's.
        #expect(aliceHolds.withLock { $0 }.isEmpty)
        // Alice's ends: her `a=sendrecv` takes the call off hold for both.
        try alicePhone.setActive(false, options: .notifyOthersOnDeactivation)
        #expect(await eventually { call.state == .active })
        #expect(await eventually { bobHolds.withLock { $0 } == [true, false] })
        #expect(await eventually { await theirs.statistics.packetsSent > bobResumed.packetsSent + 10 })
        await call.hangUp()
        await alice.shutdown(); await bob.shutdown()
    }

    @Test("Unplugging a headset mid-call moves audio to the receiver, or the speaker with defaultToSpeaker, and the call continues",
          arguments: [false, true])
    func headsetUnplugKeepsCall(defaultToSpeaker: Bool) async throws {
        let options: AudioSession.CategoryOptions = defaultToSpeaker ? [.defaultToSpeaker] : []
        let expected: AudioSession.Port = defaultToSpeaker ? .builtInSpeaker : .builtInReceiver
        let alice = try Phone("alice", options: options), bob = try Phone("bob")
        alice.hardware.connect(.wiredHeadset())
        let (call, _) = try await alice.call(bob)
        #expect(alice.session.currentRoute.outputs.first?.portType == .headphones)
        alice.hardware.disconnect(deviceID: "wired-headset")
        #expect(alice.session.currentRoute.outputs.first?.portType == expected)
        let before = await call.statistics
        #expect(await eventually { await call.statistics.packetsReceived > before.packetsReceived + 10 })
        #expect(call.state == .active)
        await call.hangUp()
        await alice.shutdown(); await bob.shutdown()
    }
}
