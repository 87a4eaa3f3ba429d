import MediaNegotiation
import SDP
import Platform
import Foundation
import SIP
import SIPEmbedded
import Synchronization

/// The SIP user agent driven by sequences of datagrams on an embedded network (virtual time, no
/// sockets): transactions, dialogs, calls both ways, CANCEL, re-INVITE, digest challenges, the
/// state limits and the rate limiter, as shipped.
///
/// Input: a control byte, then messages separated by a line `%%`. The control byte picks what
/// the application does (see `Control`) and which of three sources the messages come from; the
/// messages may name what the agent sent last (`$B` its branch, `$C` Call-ID, `$F` From tag,
/// `$N` CSeq number, `$T` the To tag of its last response, `$P` its port, `$D` ours), so that
/// responses and in-dialog requests can match. One agent lives for the whole run with RFC 3261's
/// timers; after each input, 64 s of virtual time pass (every transaction it started runs out),
/// so state carries across inputs and must stay bounded (libFuzzer's -rss_limit_mb).
///
/// Each input is checked for a budget: the bytes the agent sent stay within 11 times what it
/// received plus what the application's own requests and answers add (per call it acted on),
/// what goes to addresses that never sent anything (a Contact or route a peer named) stays
/// within that allowance too, and the input costs at most `cpuBudget` of CPU.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size > 0 else { return 0 }
    let control = Control(rawValue: data[0])
    let source = drivers[Int(data[0] >> 6) % drivers.count]  // the two top bits, shared with re-INVITE and hang-up
    let before = network.traffic, started = threadCPUTime()
    var received = 0, actions = 1
    if control.contains(.invite), let call = try? agent.invite(to: source.uri, offer: .sdp(offer.text)) {
        calls.append(call)
    } else if control.contains(.register) {
        Task { _ = try? await agent.register(at: source.uri, expires: 60) }
        _ = source.peer.waitForDatagram(timeout: .milliseconds(50))
    } else if control.contains(.options) {
        Task { _ = try? await agent.options(to: source.uri) }
        _ = source.peer.waitForDatagram(timeout: .milliseconds(50))
    }
    for message in messages(UnsafeBufferPointer(start: data + 1, count: size - 1)) {
        source.read()
        let bytes = source.substitute(message)
        guard bytes.count <= 65_000 else { continue }
        received += bytes.count
        source.peer.send(bytes, to: agent.localAddress)
        actions += answerIncoming(control)
    }
    if control.contains(.reinvite), let call = calls.last(where: { $0.state == .established }),
       let ours = call.localDescription {
        try? call.reinvite(offer: ours)
        actions += 1
    }
    if control.contains(.hangUp) {
        calls.forEach { $0.hangUp() }
        actions += calls.count
    }
    // Handles the application keeps: ended calls are dropped, and the oldest beyond 16 hung up.
    calls.removeAll { $0.state.isEnded }
    while calls.count > 16 {
        calls.removeFirst().hangUp()
        actions += 1
    }
    let cpu = threadCPUTime() - started
    network.advance(by: .seconds(64))
    for driver in drivers { driver.read() }
    checkBudget(received: received, actions: actions, before: before, cpu: cpu)
    return 0
}

/// What the application does in an input (the control byte's bits; the top two also pick the source).
struct Control: OptionSet {
    let rawValue: UInt8
    /// Before the messages, one of: call the source, register with it, send it OPTIONS.
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

/// The application's side: answers the calls that arrived, as the control byte says. Returns
/// how many it acted on.
func answerIncoming(_ control: Control) -> Int {
    let arrived = pending.take()
    for call in arrived {
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
    return arrived.count
}
