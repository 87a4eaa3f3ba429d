import Foundation
public import Platform

/// `Tools/interop/dns-testbed`: dnsmasq serving the zone `example.test` on 127.0.0.1 at a free
/// port, started for one test and stopped after it (parallel tests each get their own).
///
/// Where dnsmasq is not installed, suites are skipped as the SIPp and baresip suites are
/// (``isUsable``), except in CI-like runs (`CI` set, or `CALLAUDIO_WERROR=1` as `Tools/test`
/// exports), where `Tools/bootstrap --test` should have installed it: there the suites run and
/// ``start(_:)`` fails with a message that says so.
///
/// Thread safety: a value; `start` and `stop` may run on any thread.
public struct DNSTestbed: Sendable {
    public let port: UInt16
    public let directory: TemporaryDirectory

    /// Whether dnsmasq is on PATH (or in /usr/sbin, where Debian puts it).
    public static var isInstalled: Bool {
        ChildProcess.isInstalled("dnsmasq") || FileManager.default.isExecutableFile(atPath: "/usr/sbin/dnsmasq")
    }

    /// Whether a missing dnsmasq is a failure rather than a reason to skip.
    public static var isRequired: Bool {
        let environment = ProcessInfo.processInfo.environment
        return environment["CI"] != nil || environment["CALLAUDIO_WERROR"] == "1"
    }

    /// Whether suites that need the testbed should run.
    public static var isUsable: Bool { isInstalled || isRequired }

    /// Starts dnsmasq with the testbed's zone; `arguments` go to the script (`--srv ...`).
    public static func start(_ arguments: [String] = []) throws -> DNSTestbed {
        guard isInstalled else {
            throw TestbedError(message: "dnsmasq is not installed: the DNS tests need it (apt-get install dnsmasq-base, or Tools/bootstrap --test)")
        }
        var last = ""
        // A free port can be taken between our probe and dnsmasq's bind: try a few.
        for _ in 0..<3 {
            let port = try UDPSocket(bindingTo: SocketAddress(host: "127.0.0.1", port: 0)).localAddress.port
            let directory = TemporaryDirectory(prefix: "dns-testbed")
            let result = try ChildProcess.run(["\(Testbed.repositoryRoot)/Tools/interop/dns-testbed", "start",
                                               "--dir", directory.path, "--port", String(port)] + arguments)
            if result.status == 0 { return DNSTestbed(port: port, directory: directory) }
            last = "status \(result.status): \(result.errors)\(result.output)"
            directory.remove()
        }
        throw TestbedError(message: "Tools/interop/dns-testbed start failed: \(last)")
    }

    /// The server's address, for a resolver's configuration.
    public var address: SocketAddress { try! SocketAddress(host: "127.0.0.1", port: port) }

    /// What dnsmasq logged (the queries it got).
    public var log: String { (try? String(contentsOfFile: directory.file("dnsmasq.log"), encoding: .utf8)) ?? "" }

    /// Stops dnsmasq and removes its directory.
    public func stop() {
        _ = try? ChildProcess.run(["\(Testbed.repositoryRoot)/Tools/interop/dns-testbed", "stop", "--dir", directory.path])
        directory.remove()
    }
}
