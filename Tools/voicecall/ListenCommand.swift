import ArgumentParser
import Foundation
import VoiceCall

/// `voicecall listen`: waits for one SIP call, answers it, talks until it ends.
struct ListenCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "listen",
        abstract: "Answer one SIP call (Opus over RTP) on a sound card or WAV files.",
        discussion: """
            Listens for an INVITE on --sip, answers the first call with Opus, runs the call with \
            voice processing until the caller hangs up, --seconds pass, q is pressed or Ctrl-C; \
            then the audio session deactivates. Audio: --device ALSA_PCM (default: ALSA's default), \
            --route-map FILE, or --input/--output WAV files on a simulated phone.
            """
    )

    @OptionGroup var phone: PhoneOptions
    @Option(help: "Give up when no call has come within this many seconds (default: wait for ever).") var wait: Double?

    func validate() throws {
        if let wait { guard wait > 0 else { throw ValidationError("--wait must be > 0") } }
    }

    func run() async throws {
        // The devices are opened once before we listen: a missing device or sound server is
        // reported now, not when a call arrives.
        let endpoint = try PhoneEndpoint.checked(options: phone, defaultSIP: "0.0.0.0:5060")
        await endpoint.controller.start()
        try await endpoint.registerIfAsked(phone)
        print("listening on sip:\(phone.user)@\(endpoint.controller.sipAddress)")
        fflush(nil)  // scripts wait for this line
        guard let call = await Self.firstCall(endpoint.controller, within: wait) else {
            await endpoint.controller.shutdown()
            throw CommandFailure("no call came within \(wait ?? 0) s", json: phone.json)
        }
        print("answering \(call.remoteURI)")
        try await call.answer()
        let report = await PhoneCall.talk(call, on: endpoint, options: phone)
        report.print(json: phone.json)
    }

    /// The first incoming call, or nil after `seconds`.
    private static func firstCall(_ controller: CallController, within seconds: Double?) async -> Call? {
        await withTaskGroup(of: Call?.self) { group in
            group.addTask {
                for await call in controller.incomingCalls { return call }
                return nil
            }
            if let seconds {
                group.addTask {
                    try? await Task.sleep(for: .seconds(seconds))
                    return nil
                }
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
    }
}
