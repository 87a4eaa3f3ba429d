import Foundation
import Testing

/// The module graph as `Package.swift` declares it, held to the layering `Docs/architecture.md`
/// describes (and to that document's table, so the picture a newcomer reads is the real one).
@Suite("Module graph")
struct ModuleGraphTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// Library targets and their dependencies (`logging` is swift-log's `Logging`, a product is
    /// named by its product name), however the declaration is laid out across lines.
    static func declared() throws -> [String: Set<String>] {
        let text = try String(contentsOf: root.appendingPathComponent("Package.swift"), encoding: .utf8)
        let target = try Regex(#"\.target\(\s*name: "(\w+)"(?:,\s*dependencies: \[([^\]]*)\])?"#)
        let dependency = try Regex(#"\.product\(name: "(\w+)"[^)]*\)|"(\w+)"|\b(logging)\b"#)
        var graph: [String: Set<String>] = [:]
        for match in text.matches(of: target) {
            let name = String(match.output[1].substring!)
            let list = match.output.count > 2 ? match.output[2].substring.map(String.init) ?? "" : ""
            graph[name] = Set(list.matches(of: dependency).compactMap { item in
                (1...3).lazy.compactMap { item.output[$0].substring }.first.map { $0 == "logging" ? "Logging" : String($0) }
            })
        }
        return graph
    }

    /// The table under the module-graph marker in `Docs/architecture.md`.
    static func documented() throws -> [String: Set<String>] {
        let text = try String(contentsOf: root.appendingPathComponent("Docs/architecture.md"), encoding: .utf8)
        let lines = text.components(separatedBy: "\n")
        guard let marker = lines.firstIndex(where: { $0.contains("module graph: checked against Package.swift") }) else { return [:] }
        var graph: [String: Set<String>] = [:]
        for line in lines[(marker + 3)...] {
            guard line.hasPrefix("|") else { break }
            let cells = line.split(separator: "|", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
            let name = cells[1].trimmingCharacters(in: CharacterSet(charactersIn: "`"))
            graph[name] = Set(cells[2].split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty })
        }
        return graph
    }

    static let libraries: Set<String> = ["Platform", "DSP", "ALSA", "Opus", "SpeexDSP", "AudioSession", "AudioIO",
                                         "VoiceProcessing", "SDP", "RTP", "SIP", "MediaNegotiation", "VoiceCall", "OpenSSL", "DNS",
                                         "SRTP", "SpanDSP", "WAV"]

    @Test("The documented graph is the declared one")
    func documentedIsDeclared() throws {
        let declared = try Self.declared(), documented = try Self.documented()
        #expect(!documented.isEmpty, "no module table under the marker in Docs/architecture.md")
        for (name, dependencies) in declared where !["CAllocationCounter", "TestSupport"].contains(name) {
            #expect(documented[name] == dependencies, "\(name): Package.swift says \(dependencies.sorted()), the doc \(documented[name].map { $0.sorted() } ?? [])")
        }
        #expect(Set(documented.keys).isSubset(of: Set(declared.keys)))
    }

    @Test("No library module depends on simulation, the embedded network or measurement")
    func libraryStaysClean() throws {
        let declared = try Self.declared()
        for name in Self.libraries {
            let dependencies = try #require(declared[name], "\(name) is not a target")
            #expect(dependencies.isDisjoint(with: ["Simulation", "SIPEmbedded", "AudioAnalysis", "TestSupport"]), "\(name) depends on \(dependencies)")
        }
    }

    @Test("Sibling protocol and audio modules import no sibling")
    func siblingsAreApart() throws {
        let declared = try Self.declared()
        let siblings: Set<String> = ["SIP", "RTP", "SDP", "VoiceProcessing", "AudioIO"]
        for name in siblings {
            #expect(try #require(declared[name]).isDisjoint(with: siblings), "\(name) depends on a sibling")
        }
    }

    @Test("No library source file is over 400 lines")
    func filesAreSmall() throws {
        var long: [String] = []
        for name in Self.libraries {
            let folder = Self.root.appendingPathComponent("Sources/\(name)")
            let files = FileManager.default.enumerator(at: folder, includingPropertiesForKeys: nil)?
                .compactMap { $0 as? URL }.filter { $0.pathExtension == "swift" } ?? []
            for file in files {
                let lines = try String(contentsOf: file, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false).count
                if lines > 400 { long.append("\(name)/\(file.lastPathComponent): \(lines)") }
            }
        }
        #expect(long.isEmpty, "over 400 lines: \(long)")
    }
}
