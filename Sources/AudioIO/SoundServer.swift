import ALSA
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The sound server an ALSA PCM reaches, and whether it is running: what a user needs to know
/// when a device will not open on a desktop, where ALSA's `default` is PipeWire or PulseAudio.
///
/// Thread safety: a value type; its functions are safe from any thread except the I/O thread
/// (they read the ALSA configuration and the file system).
public struct SoundServer: Sendable, Equatable, CustomStringConvertible {
    public enum Kind: String, Sendable {
        /// PipeWire, through its own ALSA plugin (the `pipewire` PCM, Debian's pipewire-alsa).
        case pipewire = "PipeWire"
        /// The PulseAudio protocol (PulseAudio itself, or pipewire-pulse), through the `pulse` PCM.
        case pulseaudio = "PulseAudio"
    }

    public let kind: Kind
    /// The server's socket this process would use.
    public let socketPath: String
    /// Whether something accepts connections on that socket now.
    public let isRunning: Bool

    public var description: String {
        "\(kind.rawValue) at \(socketPath) (\(isRunning ? "running" : "not running"))"
    }

    /// Whether PipeWire runs for this user too: then the PulseAudio protocol is most likely served
    /// by pipewire-pulse, whose timing through the `pulse` plugin is too loose for echo
    /// cancellation (`Docs/performance.md`); the `pipewire` PCM reaches the same devices.
    public static var pipeWireIsRunning: Bool { accepts(pipewireSocket()) }

    /// The server that ALSA PCM `pcm` reaches, or nil for a PCM that is no sound server's
    /// (a card, a file, `null`) or that is not defined.
    public static func reached(by pcm: String) -> SoundServer? {
        switch ALSALibrary.pcmType(named: pcm) {
        case "pipewire": return SoundServer(kind: .pipewire, socketPath: pipewireSocket())
        case "pulse": return SoundServer(kind: .pulseaudio, socketPath: pulseSocket())
        default: return nil
        }
    }

    init(kind: Kind, socketPath: String) {
        self.kind = kind
        self.socketPath = socketPath
        isRunning = Self.accepts(socketPath)
    }

    private static var environment: [String: String] { ProcessInfo.processInfo.environment }

    /// Where libpipewire connects: `$PIPEWIRE_RUNTIME_DIR`, else `$XDG_RUNTIME_DIR`, then `pipewire-0`.
    static func pipewireSocket() -> String {
        let dir = environment["PIPEWIRE_RUNTIME_DIR"] ?? environment["XDG_RUNTIME_DIR"] ?? "/run/user/\(getuid())"
        return dir + "/" + (environment["PIPEWIRE_REMOTE"] ?? "pipewire-0")
    }

    /// Where libpulse connects: `$PULSE_SERVER` (a `unix:` path), else `$XDG_RUNTIME_DIR/pulse/native`.
    static func pulseSocket() -> String {
        if let server = environment["PULSE_SERVER"], server.hasPrefix("unix:") { return String(server.dropFirst(5)) }
        let dir = environment["PULSE_RUNTIME_PATH"] ?? (environment["XDG_RUNTIME_DIR"] ?? "/run/user/\(getuid())") + "/pulse"
        return dir + "/native"
    }

    /// Whether a Unix socket at `path` accepts a connection.
    static func accepts(_ path: String) -> Bool {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { return false }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) == 0
            }
        }
    }
}

extension IOError {
    /// What went wrong with PCM `pcm` in words a user can act on: the sound server that is not
    /// running, or the plugin package that is missing, before ALSA's own code and message.
    public func explained(forPCM pcm: String) -> String {
        if let server = SoundServer.reached(by: pcm), !server.isRunning {
            return "the ALSA PCM '\(pcm)' plays through \(server.kind.rawValue), but no \(server.kind.rawValue) server "
                + "is running for this user (no socket at \(server.socketPath)): start it (Tools/testbed start on a "
                + "machine without a desktop session), or pick another PCM with --device (\(self))"
        }
        if case let .noSuchPCM(name, _) = self, let package = Self.pluginPackages[name] {
            return "no ALSA PCM named '\(name)': its plugin is not installed (Debian: \(package))"
        }
        if case let .alsa(code, _, _) = self, code == -ENOENT,
           let type = ALSALibrary.pcmType(named: pcm), let package = Self.pluginPackages[type] {
            return "the ALSA PCM '\(pcm)' is of type '\(type)', whose plugin is not installed (Debian: \(package)) (\(self))"
        }
        return description
    }

    private static let pluginPackages = ["pipewire": "pipewire-alsa", "pulse": "libasound2-plugins"]
}

/// A PCM of a route map that would not open: which port, which PCM, and why in words a user can act on.
///
/// Thread safety: a value type; safe to use from any thread.
public struct DeviceCheckError: Error, Sendable, Equatable, CustomStringConvertible {
    public let port: String
    public let pcm: String
    public let message: String
    public var description: String { "\(port) (ALSA PCM '\(pcm)'): \(message)" }
}
