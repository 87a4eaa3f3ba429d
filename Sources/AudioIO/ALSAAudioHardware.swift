public import AudioSession
import ALSA

public import Logging
import Synchronization

/// The session's `AudioSession/AudioHardware` on ALSA: ports from a ``RouteMap``,
/// jack plug events from ALSA control devices, USB audio devices as they are plugged in and
/// out (a ``SoundCardSource``), proximity from a ``ProximitySensor``, volume
/// and gain from the route's mixer elements, and route changes applied by moving a running
/// ``AudioIOEngine`` to the route's PCMs without ending its stream.
///
/// Thread safety: safe from any thread. Events reach the session's system on the jack
/// poller's, the card watcher's, the mixer watcher's or the proximity sensor's thread.
public final class ALSAAudioHardware: AudioHardware, AudioDeviceProvider, @unchecked Sendable {
    // @unchecked: all mutable state is in `state` (a mutex); the watchers are set once in init.
    struct State {
        var handler: (@Sendable (AudioHardwareEvent) -> Void)?
        /// Ports present now, by UID.
        var present: Set<String> = []
        /// Device ids in connection order (last in wins).
        var order: [String] = []
        /// The USB audio cards present, by device id (``usbDeviceID(_:)``).
        var usbCards: [String: SoundCard] = [:]
        var capture: PCMSource?
        var playback: PCMSource?
        var engine: AudioIOEngine?
        var lastSwitchGapSeconds: Double?
        /// The device last opened for an engine, while something still holds it.
        var opened: OpenedDevice?
        /// The volume controls of the route last applied (before one is: the first ports').
        var outputControl: MixerControl?
        var inputControl: MixerControl?
        var outputVolume: Float = 1
        /// Whether the built-in microphone's switch is off (nil: it has none).
        var micMuted: Bool?
    }

    /// A device this hardware opened and the PCMs it has open, held weakly: while its owner
    /// (a call's media) keeps it, negotiating a route on the same PCMs reads its granted values
    /// instead of opening them a second time; a blocking open of an exclusive `hw:` PCM would
    /// wait until the call ends.
    struct OpenedDevice {
        let capture: PCMSource?
        let playback: PCMSource?
        weak var device: ALSADuplexDevice?
    }

    /// The map of ports to PCMs and jacks.
    public let routeMap: RouteMap
    private let proximitySensor: (any ProximitySensor)?
    private let logger: Logger
    let state = Mutex(State())
    private let jackPoller: JackPoller?
    private let cardWatcher: SoundCardWatcher?
    private let mixerWatcher: MixerWatcher
    /// The built-in microphone's mixer element, whose switch turned off is a hardware mute.
    private let micControl: MixerControl?

    /// Discovers the ports and USB audio devices present now and starts watching jacks,
    /// cards and proximity.
    ///
    /// - Parameter routeMap: the ports, their PCMs and jacks.
    /// - Parameter proximitySensor: the proximity sensor, if the machine has one.
    /// - Parameter soundCards: where USB audio devices are found (nil: none are followed).
    /// - Parameter logger: where route changes and device errors are logged.
    public init(routeMap: RouteMap = .laptop, proximitySensor: (any ProximitySensor)? = nil,
                soundCards: (any SoundCardSource)? = ALSASoundCards(),
                logger: Logger = Logger(label: "callaudio.audioio.routes")) {
        self.routeMap = routeMap
        self.proximitySensor = proximitySensor
        self.logger = logger
        var present = Set<String>()
        for entry in routeMap.ports where Self.isPresent(entry, routeMap) { present.insert(entry.uid) }
        var order: [String] = []
        for entry in routeMap.ports where present.contains(entry.uid) && !order.contains(entry.device) { order.append(entry.device) }
        let output = routeMap.ports.first { present.contains($0.uid) && $0.playback != nil }?.volumeControl
        let input = routeMap.ports.first { present.contains($0.uid) && $0.capture != nil }?.volumeControl
        let volume = output?.read() ?? 1
        micControl = routeMap.ports.first { $0.portType == .builtInMic }?.volumeControl
        let micMuted = micControl?.readSwitch().map(!)
        let initialCards = soundCards?.cards() ?? []
        let usb = Self.usbCards(in: initialCards)
        state.withLock {
            $0.present = present
            $0.order = order + usb.keys.sorted()
            $0.usbCards = usb
            ($0.outputControl, $0.inputControl, $0.outputVolume, $0.micMuted) = (output, input, volume, micMuted)
        }
        mixerWatcher = MixerWatcher(controls: routeMap.ports.compactMap(\.volumeControl), logger: logger)
        let jacks = routeMap.ports.filter { $0.jack != nil }
        jackPoller = jacks.isEmpty ? nil : JackPoller(entries: jacks, logger: logger)
        cardWatcher = soundCards.map { SoundCardWatcher(source: $0, logger: logger) }
        jackPoller?.start { [weak self] jack, control, plugged in self?.jackChanged(jack, control: control, plugged: plugged) }
        cardWatcher?.start(initial: initialCards) { [weak self] cards in self?.cardsChanged(cards) }
        mixerWatcher.start { [weak self] mixer in self?.mixerChanged(mixer) }
        proximitySensor?.setHandler { [weak self] value in self?.emit(.proximityChanged(value)) }
    }

    deinit {
        jackPoller?.stop()
        cardWatcher?.stop()
        mixerWatcher.stop()
        proximitySensor?.setHandler(nil)
    }

    // MARK: AudioHardware

    public var devices: [AudioDevice] {
        let (present, order, usb) = state.withLock { ($0.present, $0.order, $0.usbCards) }
        return order.compactMap { id in usb[id].map(Self.usbDevice) ?? device(id: id, present: present) }
    }

    public var proximity: AudioSession.Proximity { proximitySensor?.proximity ?? .unknown }

    public func setEventHandler(_ handler: (@Sendable (AudioHardwareEvent) -> Void)?) {
        state.withLock { $0.handler = handler }
    }

    public func apply(route: AudioSessionRouteDescription) {
        followVolume(of: route)
        let (capture, playback) = sources(of: route)
        let (changed, engine) = state.withLock { s -> (Bool, AudioIOEngine?) in
            let changed = s.playback != playback || s.capture != capture
            s.playback = playback
            s.capture = capture
            return (changed, s.engine)
        }
        guard changed, let engine, engine.isRunning, playback != nil || capture != nil else { return }
        do {
            let device = try makeDevice(preferred: engine.format)
            let gap = try engine.switchDevice(to: device)
            state.withLock { $0.lastSwitchGapSeconds = gap }
            logger.info("route \(route): I/O moved to \(device.name), gap \(Int(gap * 1000)) ms")
        } catch {
            logger.error("route \(route): cannot move I/O: \(error)")
        }
    }

    public func negotiate(_ preferred: PreferredHardwareValues, for route: AudioSessionRouteDescription) -> HardwareValues {
        let rate = Int(preferred.sampleRate ?? 48000)
        let request = IOFormat(sampleRate: rate, ioBufferDuration: preferred.ioBufferDuration ?? 0.02)
        let (capture, playback) = sources(of: route)
        // The device decides: the one already open on these PCMs, or open them with the preferred
        // values and read back what they grant.
        let held = state.withLock { s in
            s.opened.flatMap { $0.capture == capture && $0.playback == playback ? $0.device : nil }
        }
        if let device = held ?? (try? ALSADuplexDevice(capture: capture ?? .named("null"), playback: playback ?? .named("null"),
                                                       preferred: request)) {
            let f = device.format
            return HardwareValues(
                sampleRate: Double(f.sampleRate), ioBufferDuration: f.periodDuration,
                inputNumberOfChannels: capture == nil ? 0 : 1, outputNumberOfChannels: playback == nil ? 0 : 1,
                maximumInputNumberOfChannels: capture == nil ? 0 : device.captureParameters.channels,
                maximumOutputNumberOfChannels: playback == nil ? 0 : device.playbackParameters.channels,
                inputLatency: Double(f.periodFrames) / Double(f.sampleRate),
                outputLatency: Double(f.bufferFrames) / Double(f.sampleRate))
        }
        logger.warning("cannot open the PCMs of route \(route) to negotiate; reporting the preferred values")
        let f = request
        return HardwareValues(sampleRate: Double(f.sampleRate), ioBufferDuration: f.periodDuration,
                              inputNumberOfChannels: capture == nil ? 0 : 1, outputNumberOfChannels: playback == nil ? 0 : 1,
                              maximumInputNumberOfChannels: 1, maximumOutputNumberOfChannels: 1,
                              inputLatency: f.periodDuration, outputLatency: Double(f.bufferFrames) / Double(f.sampleRate))
    }

    /// The capture and playback PCMs of a route's first input and output, as the map says.
    func sources(of route: AudioSessionRouteDescription) -> (capture: PCMSource?, playback: PCMSource?) {
        (route.inputs.first.flatMap { usbSource(uid: $0.uid) ?? routeMap.entry(uid: $0.uid)?.capture.map(routeMap.source) },
         route.outputs.first.flatMap { usbSource(uid: $0.uid) ?? routeMap.entry(uid: $0.uid)?.playback.map(routeMap.source) })
    }

    // MARK: Volume and gain

    public var outputVolume: Float { state.withLock { $0.outputVolume } }

    public var inputGain: Float { state.withLock { $0.inputControl }?.read() ?? 1 }

    public var isInputGainSettable: Bool { state.withLock { $0.inputControl }?.read() != nil }

    public func setInputGain(_ gain: Float) {
        guard let control = state.withLock({ $0.inputControl }) else { return }
        do { try control.write(gain) } catch { logger.warning("cannot set the input gain on \(control): \(error)") }
    }

    /// The volume follows the route's output (an empty route, no session active, keeps the last).
    private func followVolume(of route: AudioSessionRouteDescription) {
        let output = route.outputs.first.map { routeMap.entry(uid: $0.uid)?.volumeControl }
        let input = route.inputs.first.map { routeMap.entry(uid: $0.uid)?.volumeControl }
        state.withLock { s in
            if let output { s.outputControl = output }
            if let input { s.inputControl = input }
        }
        readVolume()
    }

    private func mixerChanged(_ mixer: String) {
        if state.withLock({ $0.outputControl?.mixer == mixer }) { readVolume() }
        if micControl?.mixer == mixer { readMicSwitch() }
    }

    /// Reads the built-in microphone's switch and reports a mute or an unmute.
    private func readMicSwitch() {
        guard let muted = micControl?.readSwitch().map(!) else { return }
        let changed = state.withLock { s in
            guard s.micMuted != muted else { return false }
            s.micMuted = muted
            return true
        }
        if changed { emit(.builtInMicMuteChanged(muted)) }
    }

    /// Reads the output's volume and reports it if it changed.
    private func readVolume() {
        guard let control = state.withLock({ $0.outputControl }), let volume = control.read() else { return }
        let changed = state.withLock { s in
            guard s.outputControl == control, s.outputVolume != volume else { return false }
            s.outputVolume = volume
            return true
        }
        if changed { emit(.outputVolumeChanged(volume)) }
    }

    // MARK: Engine

    /// The duplex device for the current route (as last applied), opened and configured.
    /// - Throws: ``IOError/invalidState(_:)`` when no route has been applied.
    public func makeDevice(preferred: IOFormat) throws(IOError) -> ALSADuplexDevice {
        let (capture, playback) = state.withLock { ($0.capture, $0.playback) }
        guard capture != nil || playback != nil else { throw .invalidState("no route applied: activate a session first") }
        let device = try ALSADuplexDevice(capture: capture ?? .named("null"), playback: playback ?? .named("null"), preferred: preferred)
        state.withLock { $0.opened = OpenedDevice(capture: capture, playback: playback, device: device) }
        return device
    }

    /// Opens and closes every PCM of the route map once, as a call would (non-blocking, in
    /// `format`), so that a tool learns at start, not when a call arrives, that a device or its
    /// sound server is missing.
    /// - Throws: the first failure, as ``IOError/explained(forPCM:)`` words it.
    public func checkDevices(_ format: IOFormat) throws(DeviceCheckError) {
        for entry in routeMap.ports {
            for (name, stream) in [(entry.capture, PCMStream.capture), (entry.playback, .playback)] {
                guard let name else { continue }
                let source = routeMap.source(name)
                do {
                    try Self.check(source, stream, format)
                } catch {
                    throw DeviceCheckError(port: entry.uid, pcm: source.name, message: error.explained(forPCM: source.name))
                }
            }
        }
    }

    private static func check(_ source: PCMSource, _ stream: PCMStream, _ format: IOFormat) throws(IOError) {
        var pcm = try source.open(stream, nonBlocking: true)
        do {
            try pcm.configure(PCMParameters(sampleRate: format.sampleRate, channels: 1, format: .int16,
                                            periodFrames: format.periodFrames, bufferFrames: format.bufferFrames))
        } catch {
            throw IOError(error)
        }
    }

    /// ``makeDevice(preferred:)`` as the ``AudioDeviceProvider`` it is.
    public func openDevice(preferred: IOFormat) throws(IOError) -> any DuplexDevice { try makeDevice(preferred: preferred) }

    /// The engine that route changes move; nil to stop moving one.
    public func attach(_ engine: AudioIOEngine?) { state.withLock { $0.engine = engine } }

    /// The stream gap of the last route switch, in seconds.
    public var lastSwitchGapSeconds: Double? { state.withLock { $0.lastSwitchGapSeconds } }

    // MARK: Ports

    private func device(id: String, present: Set<String>) -> AudioDevice? {
        let entries = routeMap.ports.filter { $0.device == id && present.contains($0.uid) }
        guard let first = entries.first else { return nil }
        func port(_ e: RouteMap.Entry) -> AudioSessionPortDescription {
            AudioSessionPortDescription(portType: e.portType, portName: e.name ?? e.port, uid: e.uid,
                                        dataSources: e.portType == .builtInMic ? AudioDevice.builtInMicDataSources : [])
        }
        return AudioDevice(id: id, name: first.name ?? id,
                           inputs: entries.filter { $0.capture != nil }.map(port),
                           outputs: entries.filter { $0.playback != nil }.map(port))
    }

    /// A jack of the map switched (on the jack poller's thread). A device with two jacks (a
    /// headset's headphone and microphone jacks) is one device: the second jack changes it, it
    /// neither leaves nor comes back.
    func jackChanged(_ jack: String, control: String, plugged: Bool) {
        let affected = routeMap.ports.filter { $0.jack == jack && $0.control == control }
        guard let id = affected.first?.device else { return }
        let (before, after) = state.withLock { s -> (AudioDevice?, AudioDevice?) in
            let before = device(id: id, present: s.present)
            for e in affected { if plugged { s.present.insert(e.uid) } else { s.present.remove(e.uid) } }
            let after = device(id: id, present: s.present)
            if after == nil { s.order.removeAll { $0 == id } } else if before == nil { s.order.append(id) }
            return (before, after)
        }
        guard before != after else { return }
        switch (before, after) {
        case let (nil, device?): emit(.deviceConnected(device))
        case (_?, nil): emit(.deviceDisconnected(deviceID: id))
        case let (_?, device?): emit(.deviceChanged(device))
        case (nil, nil): break
        }
    }

    func emit(_ event: AudioHardwareEvent) {
        let handler = state.withLock { $0.handler }
        handler?(event)
    }

    /// Whether a port is there now: its jack is on, its PCM opens (probe), or it is built in.
    static func isPresent(_ entry: RouteMap.Entry, _ map: RouteMap) -> Bool {
        if let jack = entry.jack, let control = entry.control {
            guard let ctl = try? ControlDevice(name: control) else { return false }
            return (try? ctl.readSwitch(jack)) ?? false
        }
        if entry.probe == true {
            if let name = entry.playback, (try? map.source(name).open(.playback)) == nil { return false }
            if let name = entry.capture, (try? map.source(name).open(.capture)) == nil { return false }
        }
        return true
    }
}
