import ArgumentParser
import ToolSupport

@main
struct VoiceCall: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "voicecall",
        abstract: "CallAudio's command-line call tool.",
        version: callAudioVersion,
        subcommands: [DemoCommand.self, ListenCommand.self, CallCommand.self, ConferenceCommand.self, PhoneCommand.self, DevicesCommand.self, RTPCommand.self]
    )
}
