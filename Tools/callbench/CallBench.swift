import ArgumentParser

/// The benchmarks and measurements behind `Docs/performance.md`: what a call costs, the offline
/// uplink pipeline, received speech scored against its source, and the codec's own ceiling.
@main
struct CallBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "callbench",
        abstract: "CallAudio's benchmarks: call cost, the offline pipeline, speech comparison, the codec's ceiling, the G.711 and G.722 path.",
        subcommands: [CostCommand.self, PipelineCommand.self, CompareCommand.self, CeilingCommand.self, CodecPathCommand.self]
    )
}
