import ToolSupport
import ArgumentParser
import Foundation
import VoiceCall

/// `voicecall call sip:USER@HOST:PORT`: places one SIP call and talks until it ends.
struct CallCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "call",
        abstract: "Call a SIP address (Opus over RTP) on a sound card or WAV files.",
        discussion: """
            Sends an INVITE with an Opus offer to the target, runs the call with voice processing \
            once it is answered, until the peer hangs up, --seconds pass, q is pressed or Ctrl-C; \
            then the audio session deactivates. Audio: --device ALSA_PCM (default: ALSA's default), \
            --route-map FILE, or --input/--output WAV files on a simulated phone.
            """
    )

    @Argument(help: "Whom to call: sip:USER@HOST:PORT.") var target: String
    @OptionGroup var phone: PhoneOptions

    @OptionGroup var logging: LoggingOptions

    func run() async throws {
        logging.bootstrap()
        let endpoint = try PhoneEndpoint.checked(options: phone, defaultSIP: "0.0.0.0:0")
        await endpoint.controller.start()
        try await endpoint.registerIfAsked(phone)
        print("calling \(target) from sip:\(phone.user)@\(endpoint.controller.sipAddress)")
        fflush(nil)  // scripts wait for this line
        let call: Call
        do { call = try await endpoint.controller.dial(target) } catch {
            await endpoint.controller.shutdown()
            throw CommandFailure("cannot call \(target): \(error)", json: phone.json)
        }
        let state = await call.connected()
        guard state == .active else {
            await endpoint.controller.shutdown()
            throw CommandFailure("the call did not connect: \(state)", json: phone.json)
        }
        let report = await PhoneCall.talk(call, on: endpoint, options: phone)
        report.print(json: phone.json)
    }
}
