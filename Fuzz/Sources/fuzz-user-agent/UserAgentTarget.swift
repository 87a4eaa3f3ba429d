import MediaNegotiation
import SDP
import Platform
import Foundation
import SIP
import Synchronization

/// The SIP user agent driven by a sequence of datagrams over loopback UDP (its only transport):
/// transactions, dialogs, calls both ways, CANCEL, re-INVITE, digest challenges, the limits.
///
/// Input: a control byte, then messages separated by a line `%%`. The control byte picks what
/// the application does (see `Control`); the messages may name what the agent sent last
/// (`$B` its branch, `$C` Call-ID, `$F` From tag, `$N` CSeq number, `$T` the To tag of its last
/// response, `$P` its port, `$D` ours), so that responses and in-dialog requests can match.
/// One agent lives for the whole run, with short timers, so state across inputs is exercised
/// and must stay bounded (libFuzzer's -rss_limit_mb). Each message is waited for: the next is
/// sent once the agent has taken it (its statistics say so), so coverage follows the input.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size > 0 else { return 0 }
    let control = Control(rawValue: data[0])
    driver.drain()
    if control.contains(.invite), let call = try? agent.invite(to: driver.uri, offer: .sdp(offer.text)) {
        calls.append(call)
        driver.awaitRequest()
    } else if control.contains(.register) {
        Task { _ = try? await agent.register(at: driver.uri, expires: 60) }
        driver.awaitRequest()
    } else if control.contains(.options) {
        Task { _ = try? await agent.options(to: driver.uri) }
        driver.awaitRequest()
    }
    for message in messages(UnsafeBufferPointer(start: data + 1, count: size - 1)) {
        driver.send(driver.substitute(message))
        answerIncoming(control)
    }
    if control.contains(.reinvite), let call = calls.last(where: { $0.state == .established }),
       let ours = call.localDescription {
        try? call.reinvite(offer: ours)
    }
    if control.contains(.hangUp) { calls.forEach { $0.hangUp() } }
    // Handles the application keeps: ended calls are dropped, and the oldest beyond 16 hung up.
    calls.removeAll { $0.state.isEnded }
    while calls.count > 16 { calls.removeFirst().hangUp() }
    driver.drain()
    driver.checkBudget()
    return 0
}

/// What the application does in an input (the control byte's bits).
struct Control: OptionSet {
    let rawValue: UInt8
    /// Before the messages, one of: call the driver, register with it, send it OPTIONS.
    static let invite = Control(rawValue: 1), register = Control(rawValue: 2), options = Control(rawValue: 4)
    /// Incoming calls: ring first; then reject (486) or accept, or leave them ringing.
    static let ring = Control(rawValue: 8), reject = Control(rawValue: 16), leaveRinging = Control(rawValue: 32)
    /// After the messages: re-INVITE the newest established call (our last description again,
    /// a session refresh), hang up every call.
    static let reinvite = Control(rawValue: 64), hangUp = Control(rawValue: 128)
}

/// The messages of an input: split at lines holding only `%%`.
func messages(_ bytes: UnsafeBufferPointer<UInt8>) -> [ArraySlice<UInt8>] {
    let (lf, percent) = (UInt8(ascii: "\n"), UInt8(ascii: "%"))
    var out: [ArraySlice<UInt8>] = [], start = 0, i = 0
    let all = Array(bytes)
    while i + 4 <= all.count {
        if all[i] == lf, all[i + 1] == percent, all[i + 2] == percent, all[i + 3] == lf {
            if i > start { out.append(all[start..<i]) }
            i += 4
            start = i
        } else {
            i += 1
        }
    }
    if all.count > start { out.append(all[start...]) }
    return out
}

/// The application's side: answers the calls that arrived, as the control byte says.
func answerIncoming(_ control: Control) {
    for call in pending.take() {
        calls.append(call)
        if control.contains(.ring) { try? call.ringing() }
        if control.contains(.reject) {
            try? call.reject(status: 486)
        } else if !control.contains(.leaveRinging) {
            let answer = call.offer.flatMap { try? SessionDescription.parse($0.text) }
                .flatMap { try? AudioSDP.answer($0, address: media, sessionID: 9, parameters: OpusFormatParameters()).answer }
            try? call.accept(answer: .sdp((answer ?? offer).text))
        }
    }
}

/// The peer: a UDP socket on loopback that sends the messages and reads what the agent sends.
final class Driver: @unchecked Sendable {
    let socket = try! UDPSocket(bindingTo: SocketAddress(host: "127.0.0.1", port: 0))
    var uri: SIPURI { SIPURI(user: "peer", host: "127.0.0.1", port: socket.localAddress.port) }
    var sent = 0
    /// Bytes the driver sent, bytes the agent sent it, and inputs run: the reflection budget.
    private var bytesIn = 0, bytesBack = 0, inputs = 0
    /// What the agent sent last: `$B`, `$C`, `$F`, `$N`, `$T`.
    var values: [UInt8: [UInt8]] = [:]
    private var requests = 0, trying = false
    private let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 65_536, alignment: 16)

    /// Sends one datagram and waits until the agent has handled it (bounded: a hang is a bug).
    func send(_ bytes: [UInt8]) {
        guard bytes.count <= 65_000, socket.send(bytes, to: agent.localAddress) == .sent else { return }
        sent += 1
        bytesIn += bytes.count
        let deadline = ContinuousClock.now + .seconds(10)
        // Polled gently: the statistics are behind the lock the agent's thread works under.
        repeat {
            usleep(50)
            if ContinuousClock.now > deadline { fatalError("the user agent took no datagram for 10 s") }
        } while agent.statistics.datagramsReceived < sent
        trying = false
        drain()
        // A 100 Trying means a new INVITE transaction: its call, if any, is announced just after.
        if trying { pending.wait(milliseconds: 5) }
    }

    /// Waits (at most 20 ms: the application's request may be refused) for a request from the
    /// agent, and records it.
    func awaitRequest() {
        let before = requests
        for _ in 0..<4 where requests == before { receive(timeoutMs: 5) }
    }

    func drain() { while receive(timeoutMs: 0) {} }

    /// What came back over all inputs is within the agent's reflection bound (11 times what was
    /// sent, Docs/sip.md) plus what the application's own requests and answers may add (8 KB an
    /// input: an INVITE, a REGISTER, a re-INVITE, a 2xx with SDP, and their retransmissions).
    func checkBudget() {
        inputs += 1
        guard bytesBack <= 11 * bytesIn + 8_192 * inputs else {
            fatalError("reflection budget: \(bytesBack) bytes back for \(bytesIn) sent over \(inputs) inputs")
        }
    }

    @discardableResult
    private func receive(timeoutMs: Int) -> Bool {
        guard case .datagram(let length, _, _) = socket.receive(into: buffer, timeoutMs: timeoutMs) else { return false }
        bytesBack += length
        switch try? SIPMessage(parsing: Array(buffer[..<length])) {
        case .request(let request):
            requests += 1
            let headers = request.headers
            values[UInt8(ascii: "B")] = (try? headers.topVia().branch).flatMap { $0 }.map { Array($0.utf8) }
            values[UInt8(ascii: "C")] = (try? headers.callID()).map { Array($0.utf8) }
            values[UInt8(ascii: "F")] = (try? headers.from().tag).flatMap { $0 }.map { Array($0.utf8) }
            values[UInt8(ascii: "N")] = (try? headers.cseq()).map { Array(String($0.sequence).utf8) }
        case .response(let response):
            if response.statusCode == 100 { trying = true }
            if let tag = (try? response.headers.to().tag).flatMap({ $0 }) { values[UInt8(ascii: "T")] = Array(tag.utf8) }
        case nil:
            break
        }
        return true
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
        case UInt8(ascii: "D"): Array(String(socket.localAddress.port).utf8)
        default: values[name]
        }
    }
}

/// Incoming calls announced by the agent and not yet seen by the application.
final class Pending: Sendable {
    private let calls = Mutex<[SIPCall]>([])

    func add(_ call: SIPCall) { calls.withLock { $0.append(call) } }
    func take() -> [SIPCall] { calls.withLock { calls in defer { calls.removeAll() }; return calls } }

    func wait(milliseconds: Int) {
        for _ in 0..<milliseconds * 10 where calls.withLock(\.isEmpty) { usleep(100) }
    }
}

let media = try! SocketAddress(host: "127.0.0.1", port: 40_000)
let offer = AudioSDP.offer(address: media, sessionID: 1, rtcpMux: true)
nonisolated(unsafe) var calls: [SIPCall] = []
let pending = Pending()
let driver = Driver()

let agent: SIPUserAgent = {
    var configuration = SIPUserAgent.Configuration(
        localAddress: try! SocketAddress(host: "127.0.0.1", port: 0),
        // Short timers: transactions and calls that nobody finishes end within a second.
        timers: SIPTimers(t1: .milliseconds(10), t2: .milliseconds(80), t4: .milliseconds(100), timerD: .milliseconds(200)),
        maximumCalls: 64,
        answerChangedOffer: { _, offer, _, _ in
            (try? SessionDescription.parse(offer.text))
                .flatMap { try? AudioSDP.answer($0, address: media, sessionID: 9, parameters: OpusFormatParameters()) }
                .map { .sdp($0.answer.text) }
        },
        credentials: SIPCredentials(username: "alice", password: "secret", realm: "fuzz"),
        // Every datagram comes from the driver's one address: no rate limit, the state limits as shipped.
        // (The rate limits are tested on their own: here they would drop nearly every input.)
        limits: SIPLimits(datagramsPerSecondPerSource: nil, datagramsPerSecondTotal: nil))
    configuration.logger.logLevel = .critical
    let agent = try! SIPUserAgent(configuration: configuration)
    Task.detached { for await call in agent.incomingCalls { pending.add(call) } }
    return agent
}()
