import Synchronization

/// An ``AudioHardware`` that exists only in memory, for tests and demos.
///
/// Connect and disconnect devices (``connect(_:)``, ``disconnect(deviceID:)``), move the phone to
/// and from the ear (``setProximity(_:)``), mute the built-in microphone, lose and reset the media
/// services; each change is reported to the ``AudioSystem`` that uses the hardware, synchronously,
/// on the calling thread. It records every route the system applied (``appliedRoutes``) and
/// negotiates values from a configurable list of supported sample rates: a preferred rate it
/// cannot do yields the nearest one it can. A route through Bluetooth HFP runs at the HFP rates
/// (8 or 16 kHz). Buffer durations are rounded to a power-of-two number of frames (64 to 4096).
///
/// Thread safety: safe from any thread; its state is behind a `Mutex`, and events are sent after
/// the lock is released.
public final class SimulatedAudioHardware: AudioHardware {
    private struct State {
        var devices: [AudioDevice]
        var proximity: AudioSession.Proximity
        var handler: (@Sendable (AudioHardwareEvent) -> Void)?
        var supportedSampleRates: [Double]
        var bluetoothHFPSampleRates: [Double]
        var appliedRoutes: [AudioSessionRouteDescription] = []
        var negotiations: [PreferredHardwareValues] = []
        var isBuiltInMicMuted = false
        var outputVolume: Float = 1
        var inputGain: Float = 1
        var isInputGainSettable: Bool
    }

    private let state: Mutex<State>

    /// The rate used when a session has no preference, if supported (otherwise the highest supported rate).
    public let defaultSampleRate: Double
    /// The buffer duration used when a session has no preference.
    public let defaultIOBufferDuration: Double

    /// Creates simulated hardware.
    ///
    /// - Parameters:
    ///   - devices: The devices present at start, in connection order. Defaults to a phone's built-in device.
    ///   - proximity: The sensor's first reading.
    ///   - supportedSampleRates: The rates the device can run at.
    ///   - bluetoothHFPSampleRates: The rates of a route through Bluetooth HFP.
    ///   - defaultSampleRate: The rate without a preference.
    ///   - defaultIOBufferDuration: The buffer duration without a preference.
    ///   - isInputGainSettable: Whether the simulated capture mixer has a gain control.
    ///
    /// Thread safety: safe from any thread.
    public init(
        devices: [AudioDevice] = [.builtIn()],
        proximity: AudioSession.Proximity = .far,
        supportedSampleRates: [Double] = [8_000, 16_000, 24_000, 44_100, 48_000],
        bluetoothHFPSampleRates: [Double] = [8_000, 16_000],
        defaultSampleRate: Double = 48_000,
        defaultIOBufferDuration: Double = 0.02,
        isInputGainSettable: Bool = true
    ) {
        self.state = Mutex(State(
            devices: devices, proximity: proximity, handler: nil,
            supportedSampleRates: supportedSampleRates, bluetoothHFPSampleRates: bluetoothHFPSampleRates,
            isInputGainSettable: isInputGainSettable))
        self.defaultSampleRate = defaultSampleRate
        self.defaultIOBufferDuration = defaultIOBufferDuration
    }

    // MARK: AudioHardware

    /// The connected devices, in connection order.
    ///
    /// Thread safety: safe from any thread.
    public var devices: [AudioDevice] { state.withLock { $0.devices } }

    /// The simulated proximity sensor's reading.
    ///
    /// Thread safety: safe from any thread.
    public var proximity: AudioSession.Proximity { state.withLock { $0.proximity } }

    /// Installs the handler that receives this hardware's events.
    ///
    /// Thread safety: safe from any thread.
    public func setEventHandler(_ handler: (@Sendable (AudioHardwareEvent) -> Void)?) {
        let old = state.withLock { state in
            let old = state.handler
            state.handler = handler
            return old
        }
        _ = old  // released outside the lock
    }

    /// Records the route.
    ///
    /// Thread safety: safe from any thread.
    public func apply(route: AudioSessionRouteDescription) {
        state.withLock { $0.appliedRoutes.append(route) }
    }

    /// Works out the actual values: the nearest supported rate, a power-of-two buffer, channels
    /// within what the route's ports have, and per-port latencies.
    ///
    /// Thread safety: safe from any thread.
    public func negotiate(_ preferred: PreferredHardwareValues, for route: AudioSessionRouteDescription) -> HardwareValues {
        let (supported, hfpRates) = state.withLock { state in
            state.negotiations.append(preferred)
            return (state.supportedSampleRates, state.bluetoothHFPSampleRates)
        }
        let ports = route.inputs + route.outputs
        let rates = ports.contains { $0.portType == .bluetoothHFP } ? hfpRates : supported
        let fallbackRate = rates.contains(defaultSampleRate) ? defaultSampleRate : (rates.max() ?? defaultSampleRate)
        let sampleRate = Self.nearest(to: preferred.sampleRate ?? fallbackRate, in: rates) ?? fallbackRate

        let wantedFrames = (preferred.ioBufferDuration ?? defaultIOBufferDuration) * sampleRate
        let frames = (6...12).map { Double(1 << $0) }.min { abs($0 - wantedFrames) < abs($1 - wantedFrames) }!

        let maxIn = route.inputs.first?.channels.count ?? 0
        let maxOut = route.outputs.reduce(0) { $0 + $1.channels.count }
        let inputs = maxIn == 0 ? 0 : min(max(preferred.inputNumberOfChannels ?? 1, 1), maxIn)
        let outputs = maxOut == 0 ? 0 : min(max(preferred.outputNumberOfChannels ?? min(2, maxOut), 1), maxOut)

        return HardwareValues(
            sampleRate: sampleRate, ioBufferDuration: frames / sampleRate,
            inputNumberOfChannels: inputs, outputNumberOfChannels: outputs,
            maximumInputNumberOfChannels: maxIn, maximumOutputNumberOfChannels: maxOut,
            inputLatency: route.inputs.map { Self.latency(of: $0.portType) }.max() ?? 0,
            outputLatency: route.outputs.map { Self.latency(of: $0.portType) }.max() ?? 0)
    }

    /// The simulated output volume, from 0 to 1 (1 at start).
    ///
    /// Thread safety: safe from any thread.
    public var outputVolume: Float { state.withLock { $0.outputVolume } }

    /// The simulated input gain, from 0 to 1 (1 at start); the last value the system set.
    ///
    /// Thread safety: safe from any thread.
    public var inputGain: Float { state.withLock { $0.inputGain } }

    /// Whether the simulated capture mixer has a gain control (given to ``init(devices:proximity:supportedSampleRates:bluetoothHFPSampleRates:defaultSampleRate:defaultIOBufferDuration:isInputGainSettable:)``).
    ///
    /// Thread safety: safe from any thread.
    public var isInputGainSettable: Bool { state.withLock { $0.isInputGainSettable } }

    /// Records the gain (when settable).
    ///
    /// Thread safety: safe from any thread.
    public func setInputGain(_ gain: Float) {
        state.withLock { if $0.isInputGainSettable { $0.inputGain = gain } }
    }

    /// The nearest value (ties go to the higher one).
    static func nearest(to wanted: Double, in values: [Double]) -> Double? {
        values.min { a, b in
            let da = abs(a - wanted), db = abs(b - wanted)
            return da < db || (da == db && a > b)
        }
    }

    /// The simulated latency of a port, in seconds.
    ///
    /// Thread safety: safe from any thread.
    public static func latency(of port: AudioSession.Port) -> Double {
        switch port {
        case .builtInMic: 0.002
        case .builtInReceiver: 0.004
        case .builtInSpeaker: 0.006
        case .headphones, .headsetMic, .lineIn, .lineOut: 0.001
        case .bluetoothHFP: 0.030
        case .bluetoothLE: 0.040
        case .bluetoothA2DP: 0.150
        case .HDMI: 0.030
        case .carAudio: 0.050
        case .airPlay: 2.0
        default: 0.005
        }
    }

    // MARK: Simulation controls

    /// Connects a device: it becomes the newest in connection order. A device with the same
    /// identifier is first removed (a reconnection).
    ///
    /// Thread safety: safe from any thread; the system is told on the calling thread.
    public func connect(_ device: AudioDevice) {
        send(.deviceConnected(device)) { state in
            state.devices.removeAll { $0.id == device.id }
            state.devices.append(device)
            return true
        }
    }

    /// Disconnects a device. Nothing happens if it is not connected.
    ///
    /// Thread safety: safe from any thread; the system is told on the calling thread.
    public func disconnect(deviceID: String) {
        send(.deviceDisconnected(deviceID: deviceID)) { state in
            let before = state.devices.count
            state.devices.removeAll { $0.id == deviceID }
            return state.devices.count != before
        }
    }

    /// Disconnects a device. Nothing happens if it is not connected.
    ///
    /// Thread safety: safe from any thread; the system is told on the calling thread.
    public func disconnect(_ device: AudioDevice) {
        disconnect(deviceID: device.id)
    }

    /// Moves the phone to (``AudioSession/Proximity/near``) or from (``AudioSession/Proximity/far``) the ear.
    ///
    /// Thread safety: safe from any thread; the system is told on the calling thread.
    public func setProximity(_ proximity: AudioSession.Proximity) {
        send(.proximityChanged(proximity)) { state in
            defer { state.proximity = proximity }
            return state.proximity != proximity
        }
    }

    /// Mutes or unmutes the built-in microphone (a closed or opened cover).
    ///
    /// Thread safety: safe from any thread; the system is told on the calling thread.
    public func setBuiltInMicMuted(_ muted: Bool) {
        send(.builtInMicMuteChanged(muted)) { state in
            defer { state.isBuiltInMicMuted = muted }
            return state.isBuiltInMicMuted != muted
        }
    }

    /// Turns the volume control (0 to 1), as a user pressing the volume keys.
    ///
    /// Thread safety: safe from any thread; the system is told on the calling thread.
    public func setOutputVolume(_ volume: Float) {
        send(.outputVolumeChanged(volume)) { state in
            defer { state.outputVolume = volume }
            return state.outputVolume != volume
        }
    }

    /// Reports that the media services went away.
    ///
    /// Thread safety: safe from any thread; the system is told on the calling thread.
    public func loseMediaServices() {
        send(.mediaServicesLost) { _ in true }
    }

    /// Reports that the media services are back.
    ///
    /// Thread safety: safe from any thread; the system is told on the calling thread.
    public func resetMediaServices() {
        send(.mediaServicesReset) { _ in true }
    }

    /// The sample rates the device can run at; changing them affects the next negotiation.
    ///
    /// Thread safety: safe from any thread.
    public var supportedSampleRates: [Double] {
        get { state.withLock { $0.supportedSampleRates } }
        set { state.withLock { $0.supportedSampleRates = newValue } }
    }

    /// Every route the system applied, oldest first.
    ///
    /// Thread safety: safe from any thread.
    public var appliedRoutes: [AudioSessionRouteDescription] { state.withLock { $0.appliedRoutes } }

    /// The route the system applied last, if any.
    ///
    /// Thread safety: safe from any thread.
    public var lastAppliedRoute: AudioSessionRouteDescription? { state.withLock { $0.appliedRoutes.last } }

    /// The preferred values of every negotiation, oldest first.
    ///
    /// Thread safety: safe from any thread.
    public var negotiatedPreferences: [PreferredHardwareValues] { state.withLock { $0.negotiations } }

    /// Whether the built-in microphone is muted.
    ///
    /// Thread safety: safe from any thread.
    public var isBuiltInMicMuted: Bool { state.withLock { $0.isBuiltInMicMuted } }

    /// Applies a change under the lock, then reports the event outside it if the change happened.
    private func send(_ event: AudioHardwareEvent, change: (inout State) -> Bool) {
        let handler = state.withLock { state -> (@Sendable (AudioHardwareEvent) -> Void)? in
            change(&state) ? state.handler : nil
        }
        handler?(event)
    }
}
