import ArgumentParser

@main
struct VoiceCall: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "voicecall",
        abstract: "CallAudio's command-line call tool.",
        subcommands: [PipelineCommand.self, DevicesCommand.self]
    )
}
