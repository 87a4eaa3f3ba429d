import AudioIO
import AudioSession
import Foundation
import Synchronization
import Testing
import TestSupport

/// The session's volume and gain are the sound server's: a sink volume turned with the server's
/// own tools reaches `outputVolume` with one notification, and `setInputGain` sets the source's
/// volume. Its own run in Tools/test: it turns the default sink that the loopback suites play to.
@Suite("Volume, gain and mute through the sound server's mixer", .serialized)
struct VolumeTestsWithTestbed {
    /// The control devices over the testbed's server: the `pulse` plugin, and `default` (the
    /// `pipewire` plugin on PipeWire).
    static var mixers: [String] { Testbed.hasPipeWire ? ["pulse", "default"] : ["pulse"] }

    static func map(_ mixer: String) -> RouteMap {
        RouteMap(ports: [
            .init(device: "builtIn", port: .builtInSpeaker, name: "Speaker", playback: "null", volume: "Master", mixer: mixer),
            .init(device: "builtIn", port: .builtInMic, name: "Microphone", capture: "null", volume: "Capture", mixer: mixer),
        ])
    }

    struct ToolFailure: Error { let message: String }

    static func pactl(_ arguments: String...) throws -> String {
        let result = try ChildProcess.run(["pactl"] + arguments)
        guard result.status == 0 else { throw ToolFailure(message: "pactl \(arguments): \(result.errors)") }
        return result.output
    }

    /// The first channel's volume in `pactl get-*-volume` output ("Volume: mono: 32768 /  50% / ..."), 0 to 1.
    static func volume(of output: String) -> Double? {
        output.split(whereSeparator: \.isWhitespace).lazy.compactMap { Int($0) }.first.map { Double($0) / 65536 }
    }

    /// Sets the default sink's volume with `tool` (pactl, or PipeWire's wpctl).
    static func setSinkVolume(_ volume: Double, with tool: String) throws {
        let arguments = tool == "wpctl" ? ["wpctl", "set-volume", "@DEFAULT_AUDIO_SINK@", "\(volume)"]
            : ["pactl", "set-sink-volume", "@DEFAULT_SINK@", "\(Int((volume * 100).rounded()))%"]
        let result = try ChildProcess.run(arguments)
        guard result.status == 0 else { throw ToolFailure(message: "\(arguments): \(result.errors)") }
    }

    @Test("A sink volume turned with the server's tool reaches outputVolume with one notification",
          arguments: mixers)
    func sinkVolumeReachesTheSession(mixer: String) async throws {
        try Testbed.start()
        defer { try? Self.setSinkVolume(1, with: "pactl") }
        try Self.setSinkVolume(1, with: "pactl")
        let hardware = ALSAAudioHardware(routeMap: Self.map(mixer))
        let system = AudioSystem(hardware: hardware)
        let session = system.makeSession(name: "call")
        try session.setCategory(.playAndRecord)
        try session.setActive(true)
        #expect(abs(session.outputVolume - 1) <= 0.01)
        let heard = Mutex<[(volume: Float, at: ContinuousClock.Instant)]>([])
        let token = session.addObserver { note in
            if case let .outputVolumeChanged(volume) = note { heard.withLock { $0.append((volume, .now)) } }
        }
        defer { session.removeObserver(token) }
        let tools = Testbed.hasPipeWire && ChildProcess.isInstalled("wpctl") ? ["pactl", "wpctl"] : ["pactl"]
        for (turn, tool) in tools.enumerated() {
            let target = [0.37, 0.62][turn]
            heard.withLock { $0.removeAll() }
            try Self.setSinkVolume(target, with: tool)
            let set = ContinuousClock.now
            while heard.withLock({ $0.isEmpty }), ContinuousClock.now - set < .seconds(2) { try await Task.sleep(for: .milliseconds(5)) }
            try await Task.sleep(for: .milliseconds(300))  // any second notification has come by now
            let seen = heard.withLock { $0 }
            #expect(seen.count == 1, "\(tool): \(seen.map(\.volume))")
            #expect(abs(Double(session.outputVolume) - target) <= 0.01, "\(tool) set \(target), the session reads \(session.outputVolume)")
            if let first = seen.first {
                print("volume through \(mixer) on \(Testbed.server): \(tool) set \(target), the session read \(first.volume) \(first.at - set) after the tool returned")
                #expect(first.at - set < .milliseconds(500))
            }
        }
        try session.setActive(false)
    }

    /// Through the `pulse` plugin only: the `pipewire` plugin's "Capture" left the testbed's
    /// source as it was, a sink's monitor or a virtual source set as the default alike.
    @Test("setInputGain sets the default source's volume, as the server's tool reads it")
    func inputGainSetsTheSource() throws {
        let mixer = "pulse"
        try Testbed.start()
        defer { _ = try? Self.pactl("set-source-volume", "@DEFAULT_SOURCE@", "100%") }
        let hardware = ALSAAudioHardware(routeMap: Self.map(mixer))
        let session = AudioSystem(hardware: hardware).makeSession(name: "call")
        try session.setCategory(.playAndRecord)
        try session.setActive(true)
        #expect(session.isInputGainSettable)
        try session.setInputGain(0.5)
        // The plugin's write returns before the server applied it.
        var read = Self.volume(of: try Self.pactl("get-source-volume", "@DEFAULT_SOURCE@"))
        let set = ContinuousClock.now
        while read.map({ abs($0 - 0.5) > 0.01 }) ?? true, ContinuousClock.now - set < .seconds(2) {
            Thread.sleep(forTimeInterval: 0.01)
            read = Self.volume(of: try Self.pactl("get-source-volume", "@DEFAULT_SOURCE@"))
        }
        print("input gain through \(mixer) on \(Testbed.server): pactl read \(String(describing: read)) \(ContinuousClock.now - set) after setInputGain(0.5)")
        #expect(read.map { abs($0 - 0.5) <= 0.01 } == true, "pactl reads \(String(describing: read))")
        #expect(session.inputGain == 0.5)
        try session.setActive(false)
    }

    @Test("The source muted with the server's tool interrupts a session recording from the built-in mic (builtInMicMuted), unless it overrides that",
          arguments: [false, true])
    func sourceMuteIsAMicrophoneMute(overrides: Bool) async throws {
        try Testbed.start()
        defer { _ = try? Self.pactl("set-source-mute", "@DEFAULT_SOURCE@", "0") }
        let hardware = ALSAAudioHardware(routeMap: Self.map("pulse"))
        let session = AudioSystem(hardware: hardware).makeSession(name: "call")
        try session.setCategory(.playAndRecord, options: overrides ? [.overrideMutedMicrophoneInterruption] : [])
        try session.setActive(true)
        let interruptions = Mutex<[AudioSession.Interruption]>([])
        let token = session.addObserver { note in
            if let interruption = note.interruption { interruptions.withLock { $0.append(interruption) } }
        }
        defer { session.removeObserver(token) }
        _ = try Self.pactl("set-source-mute", "@DEFAULT_SOURCE@", "1")
        try await Self.waitUntil { session.capturesSilence }
        #expect(session.capturesSilence)
        #expect(session.isActive == overrides)
        _ = try Self.pactl("set-source-mute", "@DEFAULT_SOURCE@", "0")
        // The notification is posted after the state changes: wait for both.
        let expected: [AudioSession.Interruption] = overrides ? [] : [.init(type: .began, reason: .builtInMicMuted), .init(type: .ended, options: .shouldResume)]
        try await Self.waitUntil { !session.capturesSilence && interruptions.withLock { $0.count } >= expected.count }
        #expect(!session.capturesSilence)
        #expect(interruptions.withLock { $0 } == expected)
        try? session.setActive(false)
    }

    /// Waits up to 2 s for `condition`.
    static func waitUntil(_ condition: () -> Bool) async throws {
        let start = ContinuousClock.now
        while !condition(), ContinuousClock.now - start < .seconds(2) { try await Task.sleep(for: .milliseconds(5)) }
    }
}
