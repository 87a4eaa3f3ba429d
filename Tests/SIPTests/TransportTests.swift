import Foundation
import OpenSSL
import Platform
@testable import SIP
import Testing
import TestSupport

/// Calls between two agents over TCP and TLS on loopback: real sockets, real OpenSSL.
@Suite("SIP over TCP and TLS")
struct TransportTests {
    /// A self-signed identity for 127.0.0.1 written as PEM files: (certificate, key).
    static func identityFiles(name: String = "127.0.0.1") throws -> (String, String) {
        let identity = try TLSIdentity.generateSelfSigned(commonName: name, alternativeNames: ["localhost"])
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("sip-tls-\(UInt32.random(in: 0...UInt32.max))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let certificate = directory.appendingPathComponent("cert.pem").path, key = directory.appendingPathComponent("key.pem").path
        try identity.certificatePEM.write(toFile: certificate, atomically: true, encoding: .utf8)
        try identity.privateKeyPEM.write(toFile: key, atomically: true, encoding: .utf8)
        return (certificate, key)
    }

    static func agent(user: String, tcp: Bool = false, tls: SIPTLSConfiguration? = nil) throws -> SIPUserAgent {
        var configuration = SIPUserAgent.Configuration(localAddress: try SocketAddress(host: "127.0.0.1", port: 0), user: user,
                                                       timers: .fast)
        configuration.listensOnTCP = tcp
        configuration.tls = tls
        return try SIPUserAgent(configuration: configuration)
    }

    /// Calls `callee` at `target` from `caller`, answers, and hangs up from the caller.
    static func callAndHangUp(from caller: SIPUserAgent, to callee: SIPUserAgent, target: SIPURI) async throws {
        let incoming = Recorder(callee.incomingCalls)
        let call = try caller.invite(to: target, offer: opusSDP(port: 4000))
        let outgoing = Recorder(call.events)
        let answered = try #require(await incoming.element(0))
        let answeredEvents = Recorder(answered.events)
        try answered.accept(answer: opusSDP(port: 5000))
        #expect(await outgoing.wait { $0.contains(.answered(opusSDP(port: 5000))) })
        #expect(await answeredEvents.wait { $0.contains(.confirmed(nil)) })
        call.hangUp()
        #expect(await answeredEvents.endReason() == .hungUp(byRemote: true))
    }

    /// A call over TCP: the INVITE, its responses, the ACK and the BYE all travel on the one
    /// connection the caller opened (responses go back on the request's connection).
    @Test func aCallOverTCP() async throws {
        let callee = try Self.agent(user: "callee", tcp: true), caller = try Self.agent(user: "caller")
        defer { callee.close(); caller.close() }
        let port = try #require(callee.listeningAddress(for: .tcp)?.port)
        #expect(port == callee.localAddress.port)
        try await Self.callAndHangUp(from: caller, to: callee,
                                     target: SIPURI(user: "callee", host: "127.0.0.1", port: port, parameters: ["transport": "tcp"]))
        #expect(caller.connectionCount == 1 && callee.connectionCount == 1)
        #expect(callee.statistics.malformedDropped == 0)
    }

    /// A call to a `sips:` URI over TLS, the callee's certificate checked against a CA file.
    @Test func aCallOverTLS() async throws {
        let (certificate, key) = try Self.identityFiles()
        let callee = try Self.agent(user: "callee", tls: SIPTLSConfiguration(certificateFile: certificate, keyFile: key))
        let caller = try Self.agent(user: "caller", tls: SIPTLSConfiguration(caFile: certificate))
        defer { callee.close(); caller.close() }
        let port = try #require(callee.listeningAddress(for: .tls)?.port)
        try await Self.callAndHangUp(from: caller, to: callee, target: SIPURI(scheme: "sips", user: "callee", host: "127.0.0.1", port: port))
        #expect(caller.connectionCount == 1 && callee.connectionCount == 1)
    }

    /// A server whose certificate the caller's CA did not sign gets no INVITE: the handshake
    /// fails, the call fails at once as a transport error (503), and nothing reaches the callee's core.
    @Test func anUntrustedServerGetsNothing() async throws {
        let (certificate, key) = try Self.identityFiles(), (otherCA, _) = try Self.identityFiles()
        let callee = try Self.agent(user: "callee", tls: SIPTLSConfiguration(certificateFile: certificate, keyFile: key))
        let caller = try Self.agent(user: "caller", tls: SIPTLSConfiguration(caFile: otherCA))
        defer { callee.close(); caller.close() }
        let port = try #require(callee.listeningAddress(for: .tls)?.port)
        let call = try caller.invite(to: SIPURI(scheme: "sips", user: "callee", host: "127.0.0.1", port: port), offer: nil)
        let events = Recorder(call.events)
        #expect(await events.endReason(timeout: .seconds(2)) == .failed(status: 503, reason: "Service Unavailable"))
        #expect(callee.statistics.messagesReceived == 0)
    }

    /// A TCP target where nothing listens fails at once (503), without waiting for Timer B.
    @Test func aRefusedConnectionFailsTheCallAtOnce() async throws {
        let caller = try Self.agent(user: "caller")
        defer { caller.close() }
        let closed = try TCPListener(bindingTo: SocketAddress(host: "127.0.0.1", port: 0)).localAddress.port  // closed again
        let call = try caller.invite(to: SIPURI(user: "b", host: "127.0.0.1", port: closed, parameters: ["transport": "tcp"]), offer: nil)
        let events = Recorder(call.events)
        #expect(await events.endReason(timeout: .seconds(2)) == .failed(status: 503, reason: "Service Unavailable"))
    }

    /// Call setup over TLS on a new connection: from `invite` to the 2xx at the caller (connect,
    /// handshake, INVITE, 100, our accept, 200), the median of 10 calls, printed as `SIP TLS
    /// setup` (Docs/performance.md has the release build's). The bound here is only a sanity one.
    @Test func tlsCallSetupTime() async throws {
        let (certificate, key) = try Self.identityFiles()
        var setups: [Duration] = []
        for _ in 0..<10 {
            let callee = try Self.agent(user: "callee", tls: SIPTLSConfiguration(certificateFile: certificate, keyFile: key))
            let caller = try Self.agent(user: "caller", tls: SIPTLSConfiguration(caFile: certificate))
            let port = try #require(callee.listeningAddress(for: .tls)?.port)
            let incoming = Recorder(callee.incomingCalls)
            let start = ContinuousClock.now
            let call = try caller.invite(to: SIPURI(scheme: "sips", user: "callee", host: "127.0.0.1", port: port), offer: opusSDP(port: 4000))
            let events = Recorder(call.events)
            let answering = try #require(await incoming.element(0, timeout: .seconds(10)))
            try answering.accept(answer: opusSDP(port: 5000))
            #expect(await events.wait(timeout: .seconds(10)) { $0.contains(.answered(opusSDP(port: 5000))) })
            setups.append(ContinuousClock.now - start)
            call.hangUp()
            caller.close()
            callee.close()
        }
        let median = setups.sorted()[setups.count / 2]
        print("SIP TLS setup: INVITE to 2xx on a new connection, median of 10: \(median), max \(setups.max()!)")
        #expect(median < .seconds(1))
    }

    /// Bad TLS files are a typed error when the agent is made, and nothing is left listening.
    @Test func badTLSFilesAreAnError() throws {
        #expect(throws: SIPError.self) {
            try Self.agent(user: "x", tls: SIPTLSConfiguration(certificateFile: "/nonexistent.pem", keyFile: "/nonexistent.key"))
        }
    }
}

extension SIPUserAgent {
    /// TCP and TLS connections open now.
    var connectionCount: Int { (machinery.environment.network as! SIPTransports).connectionCount }
}

/// The outbound proxy (RFC 3261 section 8.1.2): every request outside a dialog goes to it, with
/// the proxy as a preloaded loose route and the target untouched in the Request-URI.
@Suite struct OutboundProxyTests {
    @Test func requestsGoThroughTheProxy() async throws {
        let proxy = try RawPeer()
        var configuration = SIPUserAgent.Configuration(localAddress: try SocketAddress(host: "127.0.0.1", port: 0), timers: .fast)
        configuration.outboundProxy = SIPURI(host: "127.0.0.1", port: proxy.port)
        let agent = try SIPUserAgent(configuration: configuration)
        defer { agent.close() }
        // The target's name is never looked up: only the proxy is.
        let call = try agent.invite(to: SIPURI(user: "bob", host: "provider.invalid"), offer: opusSDP(port: 4000))
        guard case .request(let invite)? = await proxy.receiveMessage() else { Issue.record("no INVITE at the proxy"); return }
        #expect(invite.uri.host == "provider.invalid")
        #expect(try invite.headers.routes().map(\.uri.description) == ["sip:127.0.0.1:\(proxy.port);lr"])
        call.hangUp()
    }
}
