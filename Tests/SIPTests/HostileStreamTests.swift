import Platform
@testable import SIP
import Testing
import TestSupport

/// Peers that abuse a TCP connection: one that never reads, too many connections, a message
/// that never ends. Each costs bounded memory and holds up nobody else.
@Suite("SIP streams against hostile peers")
struct HostileStreamTests {
    static func tcpAgent(limits: SIPLimits = .default) throws -> SIPUserAgent {
        var configuration = SIPUserAgent.Configuration(localAddress: try SocketAddress(host: "127.0.0.1", port: 0), user: "callee",
                                                       timers: .fast, limits: limits)
        configuration.listensOnTCP = true
        return try SIPUserAgent(configuration: configuration)
    }

    /// A connected TCP socket to `address` (waits for the non-blocking connect).
    static func connect(to address: SocketAddress) async throws -> TCPSocket {
        let socket = try TCPSocket.connect(to: address)
        var ready = PollSet()
        ready.entries = [PollEntry(descriptor: socket.descriptor, read: false, write: true)]
        _ = ready.wait(timeoutMs: 2_000)
        if let error = socket.finishConnect() { throw error }
        return socket
    }

    /// Writes all of `bytes`, waiting while the socket is full, for at most `timeout`; returns
    /// how many went.
    static func write(_ bytes: [UInt8], to socket: TCPSocket, timeout: Duration = .seconds(5)) async -> Int {
        var sent = 0
        let deadline = ContinuousClock.now + timeout
        while sent < bytes.count, ContinuousClock.now < deadline {
            switch bytes[sent...].withUnsafeBytes({ socket.send($0) }) {
            case .transferred(let count): sent += count
            case .wouldBlock: try? await Task.sleep(for: .milliseconds(2))
            case .closed, .failed: return sent
            }
        }
        return sent
    }

    static func options(_ id: Int, padding: Int = 0) -> [UInt8] {
        let via = "Via: SIP/2.0/TCP 127.0.0.1:9;branch=z9hG4bKs\(id)" + String(repeating: "x", count: padding)
        return Array(sipText(["OPTIONS sip:b@127.0.0.1 SIP/2.0", via, "f: <sip:a@h>;tag=1", "t: <sip:b@h>",
                              "i: s\(id)", "CSeq: 1 OPTIONS", "Max-Forwards: 70"]).utf8)
    }

    /// A peer that sends requests whose responses are large and never reads them: its queue
    /// fills up to the cap and the connection is closed, while another peer's OPTIONS over UDP is
    /// answered meanwhile.
    @Test func aPeerThatNeverReadsIsClosed() async throws {
        let agent = try Self.tcpAgent(limits: .unlimitedRate), other = try RawPeer()
        defer { agent.close() }
        let stalled = try await Self.connect(to: try #require(agent.listeningAddress(for: .tcp)))
        #expect(await eventually { agent.connectionCount == 1 })
        // Each 200 copies an 8 KB Via: 3,000 of them are 24 MB, past the kernel's buffers and the
        // cap. Written one at a time (a 24 MB array would weigh on the flood test's RSS beside it).
        var sent = 0
        let deadline = ContinuousClock.now + .seconds(20)
        for id in 0..<3_000 where ContinuousClock.now < deadline {
            let request = Self.options(id, padding: 8_000)
            let written = await Self.write(request, to: stalled, timeout: deadline - .now)
            sent += written
            if written < request.count { break }  // closed by the agent
        }
        other.send(HostilePeerTests.request("OPTIONS", port: other.port, branch: "z9hG4bKother"), to: agent.localAddress)
        #expect(await other.receiveResponse(to: .options)?.statusCode == 200)
        #expect(await eventually { agent.connectionCount == 0 }, "the stalled connection is closed (sent \(sent) bytes)")
        print("SIP stream stalled reader: \(sent) bytes sent, connection closed: \(agent.connectionCount == 0)")
    }

    /// Connections from one source beyond the limit are closed at once; the first ones stay.
    @Test func connectionsPerSourceAreCapped() async throws {
        let agent = try Self.tcpAgent(limits: SIPLimits(maximumConnectionsPerSource: 4))
        defer { agent.close() }
        let address = try #require(agent.listeningAddress(for: .tcp))
        var sockets: [TCPSocket] = []
        for _ in 0..<10 { sockets.append(try await Self.connect(to: address)) }
        #expect(await eventually { agent.connectionCount == 4 && (agent.machinery.environment.network as! SIPTransports).connectionsRefused == 6 })
        // A refused socket reads end-of-file; a kept one still gets answers.
        var buffer = [UInt8](repeating: 0, count: 4096)
        let refused = await eventually {
            buffer.withUnsafeMutableBytes { sockets[9].receive(into: $0) } == .closed
        }
        #expect(refused)
        _ = await Self.write(Self.options(1), to: sockets[0])
        let answered = await eventually {
            if case .transferred = buffer.withUnsafeMutableBytes({ sockets[0].receive(into: $0) }) { return true }
            return false
        }
        #expect(answered)
    }

    /// A message whose header section never ends is cut at 64 KiB: the connection closes, and
    /// nothing was buffered past the cap.
    @Test func anEndlessHeaderClosesTheConnection() async throws {
        let agent = try Self.tcpAgent(limits: .unlimitedRate)
        defer { agent.close() }
        let socket = try await Self.connect(to: try #require(agent.listeningAddress(for: .tcp)))
        #expect(await eventually { agent.connectionCount == 1 })
        let endless = Array("OPTIONS sip:b@h SIP/2.0\r\nX: ".utf8) + Array(repeating: UInt8(ascii: "x"), count: 70_000)
        _ = await Self.write(endless, to: socket)
        #expect(await eventually { agent.connectionCount == 0 })
        #expect(agent.statistics.messagesReceived == 0)
    }
}
