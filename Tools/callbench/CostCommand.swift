import ToolSupport
import ArgumentParser
import AudioIO
import AudioSession
import Foundation
import MediaNegotiation
import Opus
import RTP
import Simulation
import Synchronization
import VoiceCall

/// Issue 7's cost per call: many concurrent calls in one process, as fast as the CPU allows,
/// against the same work done by bare library calls in the same run.
struct CostCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cost",
        abstract: "CPU per call: concurrent calls on unpaced simulated rooms, against the bare library calls.",
        discussion: """
            Runs --calls two-endpoint calls at once in this process (SIP on 127.0.0.1, Opus over RTP/UDP, \
            echo cancellation, noise suppression and AGC, jitter buffer), each endpoint on a simulated room \
            that is not paced (unless --paced), until every endpoint has processed --seconds of audio. CPU is \
            the process's (getrusage: every thread, control and network included); the rooms' own CPU, which \
            stands in for a sound card, is measured per thread and reported apart. The same per-frame library \
            calls (SpeexDSP canceller and preprocessor, Opus encode and decode) then run alone on the same kind \
            of audio, half before and half after the calls, coding in-band FEC for the same share of frames as \
            the calls did before their first receiver report; the ratio of the two is the stack's overhead.
            """
    )

    @Option(help: "Concurrent calls (two endpoints each).") var calls = 10
    @Option(help: "Seconds of audio each endpoint processes.") var seconds = 20.0
    @Option(help: "Sample rate of the devices and the codec (an Opus rate).") var rate = 16000
    @Flag(help: "Run the rooms and the bare calls in real time (a check of the unpaced method; takes twice --seconds).")
    var paced = false
    @Option(help: "Repeat the whole measurement (bare half, calls, bare half) this many times and report the run with the median ratio: the machine's speed changes from one minute to the next.")
    var runs = 5
    @Flag(help: "Also run the bare frames through VoiceProcessingUnit (the library's own processing around SpeexDSP), in the same halves.")
    var breakdown = false
    @Option(name: .customLong("media-encryption"), help: "Media encryption of the calls: off, sdes (SRTP keyed in the SDP; keys allowed over the UDP signalling) or dtls (DTLS-SRTP).")
    var mediaEncryption = "off"
    @Option(help: "The calls' codec: opus, g722, pcmu or pcma.") var codec = "opus"
    @Option(help: "Instead of SIP calls, every endpoint joins one room of this Janus (http://HOST:8088/janus) as a conference leg: 2 x --calls legs. Use with --paced: Janus mixes in real time.")
    var janus: String?
    @Flag(help: "Print one JSON object as the last line.") var json = false

    func validate() throws {
        guard MediaEncryption(rawValue: mediaEncryption) != nil else { throw ValidationError("--media-encryption: off, sdes or dtls") }
        guard AudioCodec(name: codec) != nil else { throw ValidationError("--codec: opus, g722, pcmu or pcma") }
        guard (1...100).contains(calls) else { throw ValidationError("--calls must be in 1...100") }
        guard seconds >= 1, seconds <= 600 else { throw ValidationError("--seconds must be in 1...600") }
        guard (1...20).contains(runs) else { throw ValidationError("--runs must be in 1...20") }
        try OpusOptions.check(OpusCallConfiguration(sampleRate: rate))
    }

    func run() async throws {
        let periods = Int(seconds * 50)  // 20 ms periods per endpoint
        let security = MediaSecurityPolicy(encryption: MediaEncryption(rawValue: mediaEncryption)!, requirement: .mandatory,
                                           allowsClearKeys: true)
        // The demo's conversation (2 s turns, looped after at most a minute) and room (a phone in
        // speaker mode, the echo as loud as the talker).
        let room = SpeakerphoneRoom.echoPath(sampleRate: rate)
        let length = (min(Int(seconds), 60) / 4 + 1) * 4 * rate
        let speech = try [(SpeechFiles.defaultNear, true), (SpeechFiles.defaultFar, false)].map { file, first in
            Conversation.turns(try SpeechFiles.load(file, sampleRate: rate), length: length, turn: 2 * rate,
                               pause: rate * 2 / 5, speaksFirst: first)
        }
        let frames = min(periods, 3000)
        let sides = try [(speech[0], speech[1], UInt64(1)), (speech[1], speech[0], UInt64(2))].map { near, far, seed in
            try CostBaseline.Signals(near: near, far: far, room: room, rate: rate, frames: frames, seed: seed)
        }
        var reports: [CostReport] = []
        for n in 1...runs {
            let report = try await measure(sides: sides, setup: CostSetup(speech: speech, room: room, rate: rate, periods: periods, paced: paced,
                                                                       security: security, codec: AudioCodec(name: codec)!))
            if runs > 1 {
                print(String(format: "run %d of %d: %.2f %% per endpoint, bare %.2f %%, ratio %.3f, %.1fx real time", n, runs,
                             report.cpuPerCallPercent, report.bareCPUPerCallPercent, report.ratio, report.speed))
            }
            reports.append(report)
        }
        var median = reports.sorted { $0.ratio < $1.ratio }[(runs - 1) / 2]
        median.runRatios = reports.map(\.ratio)
        median.runCPUPerCallPercent = reports.map(\.cpuPerCallPercent)
        if runs > 1 { print("the run with the median ratio:") }
        median.print(json: json)
    }

    /// One measurement: half the bare frames, the calls, the other half.
    private func measure(sides: [CostBaseline.Signals], setup: CostSetup) async throws -> CostReport {
        let periods = setup.periods
        // The bare calls run half before and half after the calls, so that a change in the machine's
        // speed during the run (other work on the host) weighs on both alike.
        var report = CostReport(calls: calls, seconds: seconds, rate: rate, paced: paced)
        func bare(_ frames: Range<Int>, fecFrames: Int) throws {
            let streams = 2 * calls
            let used = try CostBaseline.measure(sides, streams: streams, frames: frames, fecFrames: fecFrames, rate: rate, paced: paced)
            report.bareCPUSeconds += used.seconds
            report.bareContextSwitches += used.switches
            report.barePreemptions += used.preemptions
            report.bareFramesEncodedWithFEC += streams * fecFrames
            if breakdown {
                let unit = try CostBaseline.measure(sides, streams: streams, frames: frames, fecFrames: fecFrames, rate: rate,
                                                    paced: paced, throughUnit: true)
                report.unitCPUSeconds = (report.unitCPUSeconds ?? 0) + unit.seconds
            }
        }
        try bare(0..<(periods / 2), fecFrames: 0)
        try await runCalls(setup, into: &report)
        // Coding FEC costs the encoder about an eighth more. The calls code it until the first receiver
        // report, which comes after 1 to 3 s of wall time, so for a larger share of the audio when
        // unpaced; the second half codes the same share of the bare frames with FEC.
        let fecShare = Double(report.framesEncodedWithFEC) / (50 * report.audioSeconds)
        try bare((periods / 2)..<periods, fecFrames: min(periods - periods / 2, Int((fecShare * Double(periods)).rounded())))
        report.bareAudioSeconds = Double(2 * calls * periods) / 50
        report.finish()
        return report
    }

    /// Sets up every call, lets the rooms run until each endpoint has done its periods, hangs up,
    /// and measures the process's CPU over all of it.
    private func runCalls(_ setup: CostSetup, into report: inout CostReport) async throws {
        let before = CostClock.process(), started = ContinuousClock.now
        let endpoints = try (0..<(2 * calls)).map { i in
            try CostEndpoint(name: i % 2 == 0 ? "caller\(i / 2)" : "callee\(i / 2)", side: i % 2, seed: UInt64(i + 1), setup)
        }
        var connected: [(Call, Call)] = []
        // Every leg of --janus joins one room; else each pair is a SIP call.
        let room = janus.map { ConferenceRoom(server: $0, room: UInt64.random(in: 100_000...999_999_999), createsRoom: true) }
        for i in 0..<calls { connected.append(try await connect(endpoints[2 * i], endpoints[2 * i + 1], number: i, in: room)) }
        report.setupCPUSeconds = CostClock.process().seconds - before.seconds
        setup.gate.open()
        var progress = (periods: 0, at: ContinuousClock.now)
        while !endpoints.allSatisfy({ $0.room?.isDone ?? false }) {
            let processed = endpoints.compactMap(\.room).map(\.periods).reduce(0, +)
            if processed != progress.periods { progress = (processed, .now) }
            if let ended = connected.first(where: { $0.0.state.isEnded || $0.1.state.isEnded }) {
                throw CostError("a call ended early: \(ended.0.state), \(ended.1.state)")
            }
            guard progress.at.duration(to: .now) < .seconds(10) else { throw CostError("the calls stopped processing audio") }
            try await Task.sleep(for: .milliseconds(10))
        }
        let finished = CostClock.process()
        for (call, answered) in connected {
            await call.hangUp()
            if janus != nil { await answered.hangUp() }
            _ = await answered.ended()
            for s in [await call.statistics, await answered.statistics] {
                report.maxConcealedPercent = max(report.maxConcealedPercent, s.concealedMs / (10 * seconds))
                report.packetsSent += s.packetsSent
                report.packetsReceived += s.packetsReceived
                report.packetsLost += s.packetsLost
                report.fecRecovered += s.fecRecovered
                report.framesEncodedWithFEC += s.framesEncodedWithFEC
                report.concealedMs += s.concealedMs
            }
        }
        for endpoint in endpoints { await endpoint.controller.shutdown() }
        let used = CostClock.process() - before, wall = started.duration(to: .now)
        report.cpuSeconds = used.seconds
        report.contextSwitches = used.switches
        report.preemptions = used.preemptions
        report.hangUpCPUSeconds = used.seconds - (finished - before).seconds
        report.wallSeconds = wall.seconds
        let rooms = endpoints.compactMap(\.room)
        report.audioSeconds = Double(rooms.map(\.periods).reduce(0, +)) / 50
        report.roomCPUSeconds = rooms.map(\.roomSeconds).reduce(0, +)
        report.ioThreadCPUSeconds = rooms.map(\.threadSeconds).reduce(0, +)
    }

    /// Pair `number`: two legs in `room`, or `first` calling `second`; both ends once active.
    private func connect(_ first: CostEndpoint, _ second: CostEndpoint, number i: Int, in room: ConferenceRoom?) async throws -> (Call, Call) {
        let (caller, callee) = (first.controller, second.controller)
        await caller.start()
        await callee.start()
        if let room { return (try await caller.join(room), try await callee.join(room)) }
        let answering = Task { () -> Call? in
            for await call in callee.incomingCalls { try? await call.answer(); return call }
            return nil
        }
        let call = try await caller.dial("sip:callee@\(callee.sipAddress)")
        guard await call.connected() == .active, let answered = await answering.value, answered.state == .active else {
            throw CostError("call \(i) did not connect: \(call.state)")
        }
        return (call, answered)
    }
}

/// What every endpoint's room is made of, and the gate that holds the rooms back (in real time)
/// until all calls are connected, so that the calls run together.
struct CostSetup: Sendable {
    let speech: [[Float]], room: EchoPathConfiguration, rate: Int, periods: Int, paced: Bool
    let security: MediaSecurityPolicy
    let codec: AudioCodec
    let gate = CostGate()
}

/// Opened once, when every call is connected.
final class CostGate: Sendable {
    private let flag = Atomic<Bool>(false)
    func open() { flag.store(true, ordering: .releasing) }
    var isOpen: Bool { flag.load(ordering: .acquiring) }
}

/// A ``SimulatedRoomDevice`` that runs `quota` periods once the gate opens, unpaced unless `paced`,
/// and in real time before and after (a finished endpoint idles until the call is hung up). It
/// counts every period, since the call processes each one, and the CPU time the room itself takes.
final class CostRoom: DuplexDevice, @unchecked Sendable {
    // @unchecked: `room` is used by the I/O thread only, between start() and stop(); the counters are atomics.
    private let room: SimulatedRoomDevice
    private let quota: Int
    private let gate: CostGate
    private let paced: Bool
    private let measured = Atomic<Int>(0)
    private let counted = Atomic<Int>(0)
    private let roomNanoseconds = Atomic<UInt64>(0)
    private let threadNanoseconds = Atomic<UInt64>(0)

    init(_ room: SimulatedRoomDevice, quota: Int, gate: CostGate, paced: Bool) {
        self.room = room
        self.quota = quota
        self.gate = gate
        self.paced = paced
    }

    var name: String { room.name }
    var format: IOFormat { room.format }
    var xrunCount: Int { room.xrunCount }
    var isDone: Bool { measured.load(ordering: .relaxed) >= quota }
    var periods: Int { counted.load(ordering: .relaxed) }
    var roomSeconds: Double { Double(roomNanoseconds.load(ordering: .relaxed)) / 1e9 }
    /// The I/O thread's CPU time up to its last period.
    var threadSeconds: Double { Double(threadNanoseconds.load(ordering: .relaxed)) / 1e9 }

    func start() throws(IOError) {
        // The engine asks for SCHED_FIFO; FIFO threads that never sleep would starve the network
        // threads and each other (FIFO does not share a core), so unpaced rooms run at normal priority.
        var normal = sched_param()
        if !paced { pthread_setschedparam(pthread_self(), SCHED_OTHER, &normal) }
        try room.start()
    }

    func readCapture(_ buffer: UnsafeMutableBufferPointer<Int16>) throws(IOError) -> Int {
        if gate.isOpen, measured.load(ordering: .relaxed) < quota {
            measured.wrappingAdd(1, ordering: .relaxed)
        } else if !paced {
            usleep(UInt32(format.periodDuration * 1e6))
        }
        counted.wrappingAdd(1, ordering: .relaxed)
        let before = CostClock.threadNanoseconds()
        threadNanoseconds.store(before, ordering: .relaxed)
        defer { roomNanoseconds.wrappingAdd(CostClock.threadNanoseconds() &- before, ordering: .relaxed) }
        return try room.readCapture(buffer)
    }

    func playbackDelay() -> Int { room.playbackDelay() }

    func writePlayback(_ buffer: UnsafeBufferPointer<Int16>) throws(IOError) {
        let before = CostClock.threadNanoseconds()
        defer { roomNanoseconds.wrappingAdd(CostClock.threadNanoseconds() &- before, ordering: .relaxed) }
        try room.writePlayback(buffer)
    }

    func stop() { room.stop() }
}

/// One endpoint: its own audio system and session, a call controller, and the room of its call.
final class CostEndpoint: Sendable {
    let system = AudioSystem(hardware: SimulatedAudioHardware())
    let controller: CallController
    private let made = CostRoomSlot()

    /// - Parameter side: which talker speaks in this room (0: the caller's, 1: the callee's).
    init(name: String, side: Int, seed: UInt64, _ setup: CostSetup) throws {
        let made = self.made
        var configuration = CallConfiguration(sipAddress: "127.0.0.1:0", userName: name, audio: .device { format in
            let device = try SimulatedRoomDevice(.init(
                sampleRate: format.sampleRate, periodFrames: format.sampleRate / 50, prefillPeriods: 1,
                echoPath: setup.room,
                nearSpeech: setup.speech[side], loopNearSpeech: true, noiseRMS: 0.0005, paced: setup.paced,
                recordSeconds: 1, seed: seed))
            return made.set(CostRoom(device, quota: setup.periods, gate: setup.gate, paced: setup.paced))
        })
        configuration.preferredSampleRate = Double(setup.rate)
        configuration.mediaSecurity = setup.security
        configuration.codecs = [setup.codec]
        controller = try CallController(configuration: configuration, session: system.makeSession(name: name))
    }

    /// The room of the endpoint's call, once the call has made it.
    var room: CostRoom? { made.room }
}

/// Where the device factory (run on the controller's task) leaves the room it made.
final class CostRoomSlot: Sendable {
    private let slot = Mutex<CostRoom?>(nil)
    func set(_ room: CostRoom) -> CostRoom { slot.withLock { $0 = room }; return room }
    var room: CostRoom? { slot.withLock { $0 } }
}
