import ToolSupport
import ArgumentParser
import Foundation
import VoiceCall

/// `voicecall conference --janus URL --room N`: joins a Janus AudioBridge room and talks until
/// the leg ends.
struct ConferenceCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "conference",
        abstract: "Join a Janus AudioBridge room (Opus over plain RTP) on a sound card or WAV files.",
        discussion: """
            Creates a Janus session over its HTTP API, joins the room as a plain-RTP participant and \
            runs the leg with voice processing, as a call, until the room or Janus goes away, \
            --seconds pass, q is pressed or Ctrl-C; then it leaves the room and the audio session \
            deactivates. Keys: m mute/unmute (the room sees it), k hold (muted in the room), q leave. \
            Audio options are the ones of `call`.
            """
    )

    @Option(help: "Janus's HTTP API: http://HOST:8088/janus.") var janus: String
    @Option(help: "The AudioBridge room's number.") var room: UInt64
    @Flag(help: "Create the room (16 kHz, plain-RTP participants allowed) when it does not exist.") var create = false
    @Option(help: "The name the others in the room see.") var display: String?
    @Option(name: .customLong("expected-loss"), help: "The loss Janus should expect towards us, 0 to 20 %: Janus then sends FEC.")
    var expectedLoss = 0
    @OptionGroup var phone: PhoneOptions

    @OptionGroup var logging: LoggingOptions

    func validate() throws {
        guard (0...20).contains(expectedLoss) else { throw ValidationError("--expected-loss is 0 to 20, not \(expectedLoss)") }
    }

    func run() async throws {
        logging.bootstrap()
        let endpoint = try PhoneEndpoint.checked(options: phone, defaultSIP: "127.0.0.1:0")
        await endpoint.controller.start()
        print("joining room \(room) on \(janus)")
        fflush(nil)
        let call: Call
        do {
            call = try await endpoint.controller.join(ConferenceRoom(server: janus, room: room, createsRoom: create, display: display,
                                                                     expectedLoss: expectedLoss))
        } catch {
            await endpoint.controller.shutdown()
            throw CommandFailure("cannot join room \(room): \(error)", json: phone.json)
        }
        print("joined room \(room) (\(call.id))")
        fflush(nil)  // scripts wait for this line
        let report = await PhoneCall.talk(call, on: endpoint, options: phone)
        report.print(json: phone.json)
    }
}
