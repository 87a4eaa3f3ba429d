import Foundation
import MediaNegotiation
import SDP
import Platform
import SIP
import SIPEmbedded
import Synchronization

/// A source of the fuzzed messages: a peer on the embedded network, which remembers what the
/// agent sent it last for the `$` names.
final class Driver: @unchecked Sendable {
    let peer: EmbeddedSIPPeer
    /// What the agent sent last: `$B`, `$C`, `$F`, `$N`, `$T`.
    private var values: [UInt8: [UInt8]] = [:]

    init(host: String, port: UInt16) {
        peer = try! network.makePeer(at: SocketAddress(host: host, port: port))
    }

    var uri: SIPURI { SIPURI(user: "peer", host: peer.address.host, port: peer.port) }

    /// Takes what the agent sent and records its names.
    func read() {
        while let (bytes, _) = peer.receive() {
            switch try? SIPMessage(parsing: bytes) {
            case .request(let request):
                let headers = request.headers
                values[UInt8(ascii: "B")] = (try? headers.topVia().branch).flatMap { $0 }.map { Array($0.utf8) }
                values[UInt8(ascii: "C")] = (try? headers.callID()).map { Array($0.utf8) }
                values[UInt8(ascii: "F")] = (try? headers.from().tag).flatMap { $0 }.map { Array($0.utf8) }
                values[UInt8(ascii: "N")] = (try? headers.cseq()).map { Array(String($0.sequence).utf8) }
            case .response(let response):
                if let tag = (try? response.headers.to().tag).flatMap({ $0 }) { values[UInt8(ascii: "T")] = Array(tag.utf8) }
            case nil:
                break
            }
        }
    }

    /// The message with `$X` replaced by what the agent sent last (unknown names stay).
    func substitute(_ message: ArraySlice<UInt8>) -> [UInt8] {
        guard message.contains(UInt8(ascii: "$")) else { return Array(message) }
        var out: [UInt8] = []
        out.reserveCapacity(message.count)
        var i = message.startIndex
        while i < message.endIndex {
            if message[i] == UInt8(ascii: "$"), i + 1 < message.endIndex, let value = value(message[i + 1]) {
                out += value
                i += 2
            } else {
                out.append(message[i])
                i += 1
            }
        }
        return out
    }

    private func value(_ name: UInt8) -> [UInt8]? {
        switch name {
        case UInt8(ascii: "P"): Array(String(agent.localAddress.port).utf8)
        case UInt8(ascii: "D"): Array(String(peer.port).utf8)
        default: values[name]
        }
    }
}

extension EmbeddedSIPPeer {
    /// `waitForDatagram` from synchronous code: the request an async API sends from its task.
    func waitForDatagram(timeout: Duration) -> Bool {
        let arrived = Atomic<Bool>(false), done = DispatchSemaphore(value: 0)
        Task {
            arrived.store(await waitForDatagram(timeout: timeout), ordering: .releasing)
            done.signal()
        }
        done.wait()
        return arrived.load(ordering: .acquiring)
    }
}

/// What the application's own requests and answers may add per call it acts on in an input
/// (an INVITE or 2xx with SDP, a re-INVITE or BYE, and their retransmissions over 64 × T1).
let allowancePerAction = 16_384
/// The CPU one input may cost, the agent's handling of up to 64 KB of messages included
/// (a release build with the address sanitizer).
let cpuBudget = Duration.milliseconds(200)
nonisolated(unsafe) var totals = (received: 0, sent: 0, inputs: 0, worstCPU: Duration.zero)

/// The input's budget: the agent sent at most 11 times what it received plus the allowance for
/// the application's actions, at most that allowance to addresses that sent nothing (in-dialog
/// requests go to the target a dialog's peer named), and the input cost at most `cpuBudget`.
func checkBudget(received: Int, actions: Int, before: EmbeddedSIPTraffic, cpu: Duration) {
    let after = network.traffic, us = agent.localAddress
    let sent = after.bytes(from: us) - before.bytes(from: us)
    let toDrivers = drivers.reduce(0) { $0 + after.bytes(from: us, to: $1.peer.address) - before.bytes(from: us, to: $1.peer.address) }
    let allowance = allowancePerAction * actions
    totals.received += received
    totals.sent += sent
    totals.inputs += 1
    totals.worstCPU = max(totals.worstCPU, cpu)
    guard sent <= 11 * received + allowance else {
        fatalError("reflection budget: \(sent) bytes sent for \(received) received and \(actions) actions")
    }
    guard sent - toDrivers <= allowance else { fatalError("addresses that sent nothing got \(sent - toDrivers) bytes") }
    guard cpu <= cpuBudget else { fatalError("one input cost \(cpu) of CPU") }
    if totals.inputs.isMultiple(of: 100_000) {
        // On standard error: Tools/fuzz closes standard output (-close_fd_mask=1).
        let line = "fuzz-user-agent: \(totals.inputs) inputs, \(totals.sent) bytes sent for \(totals.received) received, worst CPU \(totals.worstCPU)\n"
        FileHandle.standardError.write(Data(line.utf8))
    }
}

/// The calling thread's CPU time.
func threadCPUTime() -> Duration {
    var time = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
    return .seconds(time.tv_sec) + .nanoseconds(time.tv_nsec)
}

/// Incoming calls announced by the agent and not yet seen by the application.
final class Pending: Sendable {
    private let calls = Mutex<(list: [SIPCall], seen: Int)>(([], 0))
    private let arrived = DispatchSemaphore(value: 0)

    func add(_ call: SIPCall) {
        calls.withLock { $0.list.append(call) }
        arrived.signal()
    }

    /// Every call the agent announced so far (its statistics count them), waiting for the
    /// stream's reader to hand them over (bounded: a call never handed over is a bug).
    func take() -> [SIPCall] {
        let announced = agent.statistics.incomingCalls
        while calls.withLock({ $0.seen + $0.list.count }) < announced {
            if arrived.wait(timeout: .now() + 10) == .timedOut { fatalError("an incoming call was not handed over in 10 s") }
        }
        return calls.withLock { calls in
            defer {
                calls.seen += calls.list.count
                calls.list.removeAll()
            }
            return calls.list
        }
    }
}

let network = EmbeddedSIPNetwork()
let media = try! SocketAddress(host: "127.0.0.1", port: 40_000)
let offer = AudioSDP.offer(address: media, sessionID: 1, rtcpMux: true)
nonisolated(unsafe) var calls: [SIPCall] = []
let pending = Pending()
/// Three sources: two ports of one host, and another host (the rate limiter keys on hosts).
let drivers = [Driver(host: "127.0.0.1", port: 5060), Driver(host: "127.0.0.2", port: 5060), Driver(host: "127.0.0.1", port: 5062)]

let agent: SIPUserAgent = {
    var configuration = SIPUserAgent.Configuration(
        localAddress: try! SocketAddress(host: "127.0.0.10", port: 5060), maximumCalls: 64,
        answerChangedOffer: { _, offer, _, _ in
            (try? SessionDescription.parse(offer.text))
                .flatMap { try? AudioSDP.answer($0, address: media, sessionID: 9, parameters: OpusFormatParameters()) }
                .map { .sdp($0.answer.text) }
        },
        credentials: SIPCredentials(username: "alice", password: "secret", realm: "fuzz"))
    configuration.logger.logLevel = .critical
    let agent = try! network.makeAgent(configuration)
    Task.detached { for await call in agent.incomingCalls { pending.add(call) } }
    return agent
}()
