import Foundation

/// A fresh directory under the system's temporary folder, removed by `remove()`.
public struct TemporaryDirectory: Sendable {
    public let path: String

    public init(prefix: String = "callaudio-test") {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("\(prefix)-\(UUID().uuidString)")
        try! FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        path = url.path
    }

    /// A path inside the directory.
    public func file(_ name: String) -> String { "\(path)/\(name)" }

    /// Deletes the directory and its files.
    public func remove() { try? FileManager.default.removeItem(atPath: path) }
}
