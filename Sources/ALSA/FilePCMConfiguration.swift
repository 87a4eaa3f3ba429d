/// ALSA configuration text for the `file` plugin: a PCM backed by raw files
/// instead of a sound card, instant and byte-exact.
///
/// Capture reads `inputFile` (raw interleaved frames in the format the PCM is
/// configured with) and returns silence after its end; playback writes every
/// frame played to `outputFile`. The slave is the `null` PCM, so neither is paced
/// in real time.
///
/// ```swift
/// let cfg = FilePCMConfiguration(name: "mic", inputFile: "in.raw")
/// var pcm = try PCM(name: cfg.name, configuration: cfg.text, stream: .capture)
/// ```
///
/// Thread safety: a value type; safe to use from any thread.
public struct FilePCMConfiguration: Sendable, Equatable {
    /// The PCM name the text defines.
    public var name: String
    /// Raw file captured from, if any.
    public var inputFile: String?
    /// Raw file played to (`/dev/null` when none).
    public var outputFile: String

    public init(name: String = "callaudio_file", inputFile: String? = nil, outputFile: String? = nil) {
        self.name = name
        self.inputFile = inputFile
        self.outputFile = outputFile ?? "/dev/null"
    }

    /// The configuration text to pass to ``PCM/init(name:configuration:stream:nonBlocking:)``.
    public var text: String {
        var body = "type file slave.pcm { type null } file \(Self.quote(outputFile)) format \"raw\""
        if let inputFile { body += " infile \(Self.quote(inputFile))" }
        return "pcm.\(name) { \(body) }"
    }

    /// Quotes a path for ALSA's configuration syntax.
    static func quote(_ s: String) -> String {
        var quoted = "\""
        for c in s {
            if c == "\\" || c == "\"" { quoted.append("\\") }
            quoted.append(c)
        }
        return quoted + "\""
    }
}
