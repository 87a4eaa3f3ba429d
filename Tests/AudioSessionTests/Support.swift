@testable import AudioSession
import Synchronization

/// Records a session's notifications through an observer closure. Delivery is synchronous on the
/// thread that caused the change, so a test can check what arrived right after its call returns.
final class NotificationRecorder: Sendable {
    private let storage = Mutex<[AudioSessionNotification]>([])

    init(_ session: AudioSession) {
        // The closure captures the recorder, never the session (no reference cycle).
        _ = session.addObserver { [self] notification in storage.withLock { $0.append(notification) } }
    }

    var all: [AudioSessionNotification] { storage.withLock { $0 } }
    var interruptions: [AudioSession.Interruption] { all.compactMap(\.interruption) }
    var routeChanges: [AudioSession.RouteChange] { all.compactMap(\.routeChange) }
    var hints: [AudioSession.SilenceSecondaryAudioHintType] { all.compactMap(\.silenceSecondaryAudioHint) }

    func clear() { storage.withLock { $0.removeAll() } }
}

/// A system over simulated hardware, private to one test.
func makeSystem(
    devices: [AudioDevice] = [.builtIn()],
    proximity: AudioSession.Proximity = .far,
    supportedSampleRates: [Double] = [8_000, 16_000, 24_000, 44_100, 48_000],
    recordPermissionPolicy: RecordPermissionPolicy = .alwaysGrant
) -> (AudioSystem, SimulatedAudioHardware) {
    let hardware = SimulatedAudioHardware(devices: devices, proximity: proximity, supportedSampleRates: supportedSampleRates)
    // Warnings go to a sink rather than the log, to keep test output readable; tests that check
    // warnings make their own sink (CommonMistakeWarningTests).
    let system = AudioSystem(hardware: hardware, recordPermissionPolicy: recordPermissionPolicy, warningSink: { _ in })
    return (system, hardware)
}

/// A VoIP call session: playAndRecord with the given mode and options, active.
func makeActiveCall(
    in system: AudioSystem, mode: AudioSession.Mode = .default, options: AudioSession.CategoryOptions = [],
    name: String = "call"
) throws -> AudioSession {
    let session = system.makeSession(name: name)
    try session.setCategory(.playAndRecord, mode: mode, options: options)
    try session.setActive(true)
    return session
}

/// Route shorthand: the port types of inputs and outputs.
struct Ports: Equatable, CustomStringConvertible {
    var inputs: [AudioSession.Port]
    var outputs: [AudioSession.Port]

    init(in inputs: [AudioSession.Port], out outputs: [AudioSession.Port]) {
        self.inputs = inputs
        self.outputs = outputs
    }

    init(_ route: AudioSessionRouteDescription) {
        self.init(in: route.inputTypes, out: route.outputTypes)
    }

    var description: String { "in: \(inputs.map(\.rawValue)) out: \(outputs.map(\.rawValue))" }
}

extension AudioSessionRouteDescription {
    var ports: Ports { Ports(self) }
}

/// Collects messages from any thread (warnings, stop-handler calls, ...).
final class MessageLog: Sendable {
    private let storage = Mutex<[String]>([])
    func append(_ message: String) { storage.withLock { $0.append(message) } }
    var messages: [String] { storage.withLock { $0 } }
}
