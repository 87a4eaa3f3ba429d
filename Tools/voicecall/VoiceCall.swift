import ArgumentParser

@main
struct VoiceCall: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "voicecall",
        abstract: "CallAudio's command-line call tool.",
        subcommands: [DemoCommand.self, ListenCommand.self, CallCommand.self, PhoneCommand.self, DevicesCommand.self, RTPCommand.self]
    )
}
