import ToolSupport
import Platform
import ArgumentParser
import RTP
import SIP
import AudioIO
import AudioSession
import Simulation
import Synchronization
import VoiceCall
import Opus
import VoiceProcessing
import WAV

/// Something the person at the phone does during a call (keys on a terminal, Ctrl-C).
enum PhoneAction: Sendable {
    case toggleSpeaker, toggleProximity, toggleHeadset, hangUp
    /// Hold or resume, mute or unmute (the call loop does them: they are asynchronous).
    case toggleHold, toggleMute
    /// Send a DTMF key (the call loop does it: it is asynchronous).
    case dtmf(Character)
}

/// One softphone for `voicecall listen` and `voicecall call`: an audio system over a sound card
/// (ALSA, the session's routes moving the running stream between PCMs) or over WAV files
/// (a simulated phone: receiver, speaker and a headset that can be plugged in), its session,
/// and a call controller.
///
/// Thread safety: safe from any thread.
final class PhoneEndpoint: Sendable {
    let session: AudioSession
    let controller: CallController
    let route: RouteChoice
    /// With WAV files, the simulated phone's ports; nil on a sound card.
    private let simulated: SimulatedAudioHardware?
    /// A proximity sensor the keys drive (no IIO sensor was asked for); nil otherwise.
    private let simulatedSensor: SimulatedProximitySensor?
    private let timeline = PhoneTimeline()
    private let output: String?
    private let speakerOverride = Mutex(false)

    init(options: PhoneOptions, defaultSIP: String, acceptsCallsFrom: (@Sendable (SocketAddress) -> Bool)? = nil) throws {
        route = options.route
        output = options.output
        var configuration = CallConfiguration(sipAddress: options.sip ?? defaultSIP, userName: options.user)
        configuration.preferredSampleRate = Double(options.rate)
        configuration.codec.bitrate = options.bitrate
        if options.noVoiceProcessing { configuration.voiceProcessing.mode = .other }
        configuration.credentials = try options.credentials()
        try options.apply(to: &configuration)
        configuration.acceptsCallsFrom = acceptsCallsFrom
        let hardware: any AudioHardware
        if let map = try options.soundCardPorts() {
            let sensor: any ProximitySensor
            if let threshold = options.proximityThreshold {
                sensor = try IIOProximitySensor(nearThreshold: threshold)
                simulatedSensor = nil
            } else {
                let simulatedSensor = SimulatedProximitySensor(.unknown)
                (sensor, self.simulatedSensor) = (simulatedSensor, simulatedSensor)
            }
            hardware = ALSAAudioHardware(routeMap: map, proximitySensor: sensor)
            simulated = nil
            configuration.audio = .hardware
        } else {
            let phone = SimulatedAudioHardware(devices: options.route == .headset ? [.builtIn(), .wiredHeadset()] : [.builtIn()],
                                               proximity: .unknown)
            (hardware, simulated, simulatedSensor) = (phone, phone, nil)
            configuration.audio = Self.fileDevice(input: options.input, room: options.room, seconds: options.seconds, on: timeline)
        }
        let system = AudioSystem(hardware: hardware)
        session = system.makeSession(name: "voicecall")
        if options.route == .headset, !hardware.devices.contains(where: { $0.ports.contains { $0.portType == .headphones || $0.portType == .headsetMic } }) {
            throw ValidationError("--route headset: no headset is plugged in (the route map's jacks are all off)")
        }
        // Raise to ear, as phone apps do: near the ear the receiver, away from it the speaker.
        session.isProximityRoutingEnabled = options.route == .auto
        controller = try CallController(configuration: configuration, session: session)
    }

    /// An endpoint whose audio is known to work: the input file reads, the sound card's PCMs
    /// open (each in the call's format), or the failure is thrown in words a user can act on.
    static func checked(options: PhoneOptions, defaultSIP: String,
                        acceptsCallsFrom: (@Sendable (SocketAddress) -> Bool)? = nil) throws -> PhoneEndpoint {
        do {
            if let input = options.input { _ = try SpeechFiles.load(input, sampleRate: options.rate) }
            if let map = try options.soundCardPorts() {
                try ALSAAudioHardware(routeMap: map).checkDevices(
                    IOFormat(sampleRate: options.rate, ioBufferDuration: CallConfiguration(sipAddress: defaultSIP).preferredIOBufferDuration))
            }
            return try PhoneEndpoint(options: options, defaultSIP: defaultSIP, acceptsCallsFrom: acceptsCallsFrom)
        } catch let error as ValidationError {
            throw error
        } catch {
            throw CommandFailure("\(error)", json: options.json)
        }
    }

    /// Registers at `--registrar` when one is given, as `--user` and each `--account` (the
    /// controller must be started).
    func registerIfAsked(_ options: PhoneOptions) async throws {
        guard let registrar = options.registrar else {
            guard options.accounts.isEmpty else { throw ValidationError("--account needs --registrar") }
            return
        }
        let host = SIPURI(registrar)?.host ?? registrar
        var user = options.user
        do {
            let granted = try await controller.register(at: registrar)
            print("registered sip:\(user)@\(host) at \(registrar) for \(granted) s")
            for extra in try options.extraAccounts() {
                user = extra.user
                let account = try await controller.addAccount(user: extra.user, credentials: extra.credentials)
                guard let uri = SIPURI(registrar) else { throw CallError.invalidTarget(registrar) }
                let granted = try await account.register(at: uri)
                print("registered sip:\(extra.user)@\(host) at \(registrar) for \(granted) s")
            }
        } catch {
            await controller.shutdown()
            throw CommandFailure("cannot register \(user) at \(registrar): \(error)", json: options.json)
        }
    }

    /// A sound card with one PCM for everything: the receiver and the speaker are the same
    /// loudspeaker (a laptop, a USB speakerphone), so a route change is reported but moves nothing.
    /// Volume and gain are the "Master" and "Capture" elements of the PCM's mixer, if it has one.
    static func singlePCM(_ pcm: String) -> RouteMap {
        let mixer = mixer(ofPCM: pcm)
        let (master, capture) = mixer == nil ? (nil, nil) : ("Master", "Capture")
        return RouteMap(ports: [
            .init(device: "builtIn", port: .builtInReceiver, name: "Receiver", playback: pcm, volume: master, mixer: mixer),
            .init(device: "builtIn", port: .builtInSpeaker, name: "Speaker", playback: pcm, volume: master, mixer: mixer),
            .init(device: "builtIn", port: .builtInMic, name: "Microphone", capture: pcm, volume: capture, mixer: mixer),
        ])
    }

    /// The control device beside a PCM: the sound servers' plugins and `default` by name, a
    /// card's (`hw:1,0`, `plughw:1`) by its card.
    static func mixer(ofPCM pcm: String) -> String? {
        if ["default", "pulse", "pipewire"].contains(pcm) { return pcm }
        for prefix in ["hw:", "plughw:"] where pcm.hasPrefix(prefix) {
            return "hw:" + (pcm.dropFirst(prefix.count).split(separator: ",").first ?? "0")
        }
        return nil
    }

    /// A paced device over WAV files: the input is the talker at the microphone (in an anechoic
    /// room, or a speakerphone's room with its echo), what is played is recorded for the output;
    /// a device opened later goes on where the talker is by then.
    private static func fileDevice(input: String?, room: PhoneOptions.FileRoom, seconds: Double?,
                                   on timeline: PhoneTimeline) -> CallConfiguration.Audio {
        // The output keeps the device's first 10 minutes without --seconds, its first hour at
        // most (the buffer is made when the call takes the audio, and memory grows with it).
        let recordSeconds = min((seconds ?? 600) + 30, 3600)
        return .device { format in
            let start = timeline.now()
            let skipped = Int(Double(format.sampleRate) * PhoneTimeline.seconds(start))
            let speech = try input.map { try SpeechFiles.load($0, sampleRate: format.sampleRate).dropFirst(skipped) } ?? []
            let echo = room == .speakerphone ? SpeakerphoneRoom.echoPath(sampleRate: format.sampleRate)
                : EchoPathConfiguration(sampleRate: format.sampleRate, impulseResponse: [0])
            // 20 ms periods, the codec's frame, as a sound card asked for them would give.
            let device = try SimulatedRoomDevice(.init(
                sampleRate: format.sampleRate, periodFrames: format.sampleRate / 50, prefillPeriods: 2, echoPath: echo,
                nearSpeech: Array(speech), loopNearSpeech: false, noiseRMS: room == .none ? 0 : 0.0005, paced: true,
                recordSeconds: recordSeconds), name: "WAV files")
            timeline.add(device, openedAt: start)
            return device
        }
    }

    /// Puts the connected call on the route asked for (`auto`, `receiver` and `headset` are the
    /// session's own choice: proximity routing, or no override with the headset plugged in).
    func applyRoute() throws {
        guard route == .speaker else { return }
        try session.overrideOutputAudioPort(.speaker)
        speakerOverride.withLock { $0 = true }
    }

    /// Does what a key asks; returns a line saying what happened.
    func perform(_ action: PhoneAction) -> String {
        switch action {
        case .toggleSpeaker:
            let on = !speakerOverride.withLock { $0 }
            do {
                try session.overrideOutputAudioPort(on ? .speaker : .none)
                speakerOverride.withLock { $0 = on }
                return "speaker override \(on ? "on" : "off")"
            } catch {
                return "speaker override: \(error)"
            }
        case .toggleProximity:
            let near = session.proximity != .near
            if let simulated {
                simulated.setProximity(near ? .near : .far)
            } else if let simulatedSensor {
                simulatedSensor.set(near ? .near : .far)
            } else {
                return "proximity comes from the IIO sensor"
            }
            return "proximity \(near ? "near (at the ear)" : "far")" + (session.isProximityRoutingEnabled ? "" : " (proximity routing is off: --route auto)")
        case .toggleHeadset:
            guard let simulated else { return "a headset is plugged in by hand on a sound card (its jack is watched)" }
            if simulated.devices.contains(where: { $0.id == "wired-headset" }) {
                simulated.disconnect(deviceID: "wired-headset")
                return "headset unplugged"
            }
            simulated.connect(.wiredHeadset())
            return "headset plugged in"
        case .hangUp:
            return "hanging up"
        case .dtmf(let key):
            return "DTMF \(key)"
        case .toggleHold, .toggleMute:
            return ""
        }
    }

    /// Writes what was played (the peer's voice) to the output file, if one was asked for.
    func writeOutput() throws -> String? {
        guard let output, let played = timeline.played() else { return nil }
        try WAV.write(played, to: output)
        return output
    }
}
