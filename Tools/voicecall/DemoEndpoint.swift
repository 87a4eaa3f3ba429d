import Platform
import AudioAnalysis
import AudioIO
import AudioSession
import Simulation
import RTP
import Synchronization
import VoiceCall
import VoiceProcessing

/// One end of the demo: its own audio system (simulated hardware), session, call
/// controller, and a simulated room whose talker is `speech`.
final class DemoEndpoint: Sendable {
    let name: String
    let system: AudioSystem
    let session: AudioSession
    let controller: CallController
    private let devices = DeviceList()

    /// - Parameter speech: what the talker says, silent where the other side has the turn.
    init(name: String, speech: [Float], sampleRate: Int, seed: UInt64,
         mediaPath: (@Sendable (SocketAddress) -> SocketAddress)?) throws {
        self.name = name
        system = AudioSystem(hardware: SimulatedAudioHardware())
        session = system.makeSession(name: name)
        let talker = speech
        let devices = self.devices
        var configuration = CallConfiguration(sipAddress: "127.0.0.1:0", userName: name, audio: .device { format in
            // The room runs 10 ms periods, as a phone's voice I/O does, and one period of playback
            // is queued ahead of the loudspeaker.
            let device = try SimulatedRoomDevice(.init(
                sampleRate: format.sampleRate, periodFrames: format.sampleRate / 100, prefillPeriods: 1,
                echoPath: SpeakerphoneRoom.echoPath(sampleRate: format.sampleRate),
                nearSpeech: talker, loopNearSpeech: false, noiseRMS: 0.0005, paced: true, recordSeconds: 620, seed: seed))
            devices.append(device)
            return device
        })
        configuration.preferredSampleRate = Double(sampleRate)
        configuration.preferredIOBufferDuration = 0.01
        configuration.mediaPath = mediaPath
        configuration.recordUplinkSeconds = 620
        controller = try CallController(configuration: configuration, session: session)
    }

    /// The room device of the last call.
    var device: SimulatedRoomDevice? { devices.last }
}

/// The room an endpoint's calls made last (the device factory runs on the controller's task);
/// earlier ones are let go, since a call opens a new device each time it takes the audio back.
final class DeviceList: Sendable {
    private let newest = Mutex<SimulatedRoomDevice?>(nil)
    func append(_ device: SimulatedRoomDevice) { newest.withLock { $0 = device } }
    var last: SimulatedRoomDevice? { newest.withLock { $0 } }
}
