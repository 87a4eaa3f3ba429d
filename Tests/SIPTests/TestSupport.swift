import Platform
import Foundation
import SIP
import Synchronization
import Testing
import TestSupport

/// Short RFC 3261 timers for loopback tests: T1 = 40 ms, so 64 × T1 = 2.56 s.
extension SIPTimers {
    static let fast = SIPTimers(t1: .milliseconds(40), t2: .milliseconds(320), t4: .milliseconds(400),
                                timerD: .milliseconds(400))
}

/// A user agent on 127.0.0.1 with a free port.
func makeAgent(user: String = "test", timers: SIPTimers = .fast, maximumCalls: Int? = nil,
               answerChangedOffer: SIPUserAgent.OfferAnswerer? = nil, credentials: SIPCredentials? = nil,
               limits: SIPLimits = .default) throws -> SIPUserAgent {
    try SIPUserAgent(configuration: .init(localAddress: SocketAddress(host: "127.0.0.1", port: 0), user: user,
                                          timers: timers, maximumCalls: maximumCalls, answerChangedOffer: answerChangedOffer,
                                          credentials: credentials, limits: limits))
}

extension SIPUserAgent {
    /// `sip:user@127.0.0.1:port` of this agent.
    func uri(user: String = "callee") -> SIPURI { SIPURI(user: user, host: "127.0.0.1", port: localAddress.port) }
}

/// An Opus offer/answer as a real endpoint would send it.
func opusSDP(port: Int, session: String = "1") -> SIPBody {
    .sdp("""
    v=0\r
    o=- \(session) 1 IN IP4 127.0.0.1\r
    s=CallAudio\r
    c=IN IP4 127.0.0.1\r
    t=0 0\r
    m=audio \(port) RTP/AVP 96\r
    a=rtpmap:96 opus/48000/2\r
    a=fmtp:96 useinbandfec=1\r
    a=ptime:20\r
    a=sendrecv\r

    """)
}

/// Collects what an async sequence yields, so a test can wait for a condition. Waiting does not
/// poll: it resumes when an element arrives. The timeout is only a bound for a test that fails
/// (on an embedded network every event is in the stream before the call that caused it returns).
final class Recorder<Element: Sendable>: Sendable {
    private struct State {
        var items: [Element] = []
        var finished = false
        /// Bumped by each element and by the end, so a waiter knows whether to look again.
        var version = 0
        var waiters: [(version: Int, continuation: CheckedContinuation<Void, Never>)] = []

        mutating func changed() {
            version += 1
            for waiter in waiters { waiter.continuation.resume() }
            waiters.removeAll()
        }
    }

    private let state = Mutex(State())

    init<S: AsyncSequence & Sendable>(_ sequence: S) where S.Element == Element {
        Task { [self] in
            do {
                for try await item in sequence {
                    state.withLock {
                        $0.items.append(item)
                        $0.changed()
                    }
                }
            } catch {}
            state.withLock {
                $0.finished = true
                $0.changed()
            }
        }
    }

    var all: [Element] { state.withLock { $0.items } }
    var isFinished: Bool { state.withLock { $0.finished } }

    /// Waits until `condition` holds for what has arrived, the sequence ends, or `timeout` passes.
    @discardableResult
    func wait(timeout: Duration = patientWait, until condition: ([Element]) -> Bool) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        let watchdog = Task { [self] in
            try? await Task.sleep(until: deadline)
            state.withLock { $0.changed() }
        }
        defer { watchdog.cancel() }
        while true {
            let (items, finished, version) = state.withLock { ($0.items, $0.finished, $0.version) }
            if condition(items) { return true }
            if finished || ContinuousClock.now >= deadline { return false }
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                state.withLock { state in
                    if state.version != version { continuation.resume() } else { state.waiters.append((version, continuation)) }
                }
            }
        }
    }

    /// Waits for the `index`-th element.
    func element(_ index: Int, timeout: Duration = patientWait) async -> Element? {
        await wait(timeout: timeout) { $0.count > index }
        let items = all
        return items.count > index ? items[index] : nil
    }
}

extension Recorder where Element == SIPCallEvent {
    /// Waits for the `ended` event and returns its reason.
    func endReason(timeout: Duration = patientWait) async -> SIPCallEndReason? {
        await wait(timeout: timeout) { $0.contains { if case .ended = $0 { true } else { false } } }
        for case .ended(let reason) in all { return reason }
        return nil
    }

    func contains(_ event: SIPCallEvent) -> Bool { all.contains(event) }

    /// Every event `call` has yielded so far, once this recorder has read them all: what a
    /// test on an embedded network checks for "nothing else happened".
    func settled(_ call: SIPCall) async -> [SIPCallEvent] {
        await wait { $0.count >= call.eventsYielded }
        return all
    }
}

/// An external program run by a test (SIPp, baresip): output goes to files, the process is
/// killed if it outlives its time, and always when the test lets go of it.
final class ExternalProcess: Sendable {
    let name: String
    let outputPath: String
    private let process: Process
    private let input: Pipe

    init(_ executable: String, _ arguments: [String], directory: String) throws {
        name = executable
        outputPath = "\(directory)/\(executable)-\(UInt32.random(in: 0...UInt32.max)).log"
        _ = FileManager.default.createFile(atPath: outputPath, contents: nil)
        let output = try FileHandle(forWritingTo: URL(fileURLWithPath: outputPath))
        process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [executable] + arguments
        process.currentDirectoryURL = URL(fileURLWithPath: directory)
        process.standardOutput = output
        process.standardError = output
        input = Pipe()
        process.standardInput = input
        try process.run()
    }

    deinit { stop() }

    var isRunning: Bool { process.isRunning }

    /// Writes a line to the program's standard input.
    func send(_ line: String) {
        try? input.fileHandleForWriting.write(contentsOf: Data((line + "\n").utf8))
    }

    /// Waits for the exit status, or nil when `timeout` passes first (then the process is stopped).
    func exitStatus(timeout: Duration) async -> Int32? {
        let deadline = ContinuousClock.now + timeout
        while process.isRunning, ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(20))
        }
        if process.isRunning {
            stop()
            return nil
        }
        return process.terminationStatus
    }

    /// SIGTERM, then SIGKILL if it is still there after a second.
    func stop() {
        guard process.isRunning else { return }
        process.terminate()
        for _ in 0..<50 where process.isRunning { usleep(20_000) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }

    /// What the program printed so far.
    var output: String { (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? "" }

    /// Waits until the output contains `text`.
    func waitForOutput(_ text: String, timeout: Duration) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if output.contains(text) { return true }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return output.contains(text)
    }
}

/// A UDP port on 127.0.0.1 that was free a moment ago (for programs that need a port number).
/// A UDP port pair held for a peer's RTP and RTCP (the port and the next one): bound (and never
/// read) for as long as this object lives, so no other socket of the test process, such as
/// another test's user agent, is given either while the peer still sends there (its packets
/// would reach that agent as malformed SIP).
final class HeldPort: Sendable {
    private let sockets: [UDPSocket]
    /// The RTP port; RTCP is the next one.
    var port: Int { Int(sockets[0].localAddress.port) }

    init() throws {
        for _ in 0..<50 {
            let rtp = try UDPSocket(bindingTo: SocketAddress(host: "127.0.0.1", port: 0))
            let next = rtp.localAddress.port &+ 1
            guard next > 1024, let rtcp = try? UDPSocket(bindingTo: SocketAddress(host: "127.0.0.1", port: next)) else { continue }
            sockets = [rtp, rtcp]
            return
        }
        throw SocketError(code: 98, detail: "no free pair of UDP ports")  // EADDRINUSE
    }
}

func freeUDPPort() throws -> UInt16 {
    try UDPSocket(bindingTo: SocketAddress(host: "127.0.0.1", port: 0)).localAddress.port
}

/// A port free for UDP and for TCP on 127.0.0.1 at this moment, for a client that listens on both
/// at the port it is given (baresip): a port free for UDP alone may be a TCP connection's local
/// port in a test running beside it ("SIP Transport failed: Address already in use").
func freeSIPPort() throws -> UInt16 {
    for _ in 0..<100 {
        let port = try freeUDPPort()
        if (try? TCPListener(bindingTo: SocketAddress(host: "127.0.0.1", port: port))) != nil { return port }
    }
    throw SocketError(code: 98, detail: "no port free for both UDP and TCP")  // EADDRINUSE
}
extension RawPeer: HandWrittenPeer {}
