@testable import SIP
import Testing

/// Drives a transaction state machine on a virtual clock: timers fire in time order.
struct VirtualClock {
    var now: Duration = .zero
    var timers: [(at: Duration, timer: TransactionTimer)] = []
    /// Times at which something was transmitted, and whether it was a retransmission.
    var transmissions: [(at: Duration, bytes: [UInt8], retransmission: Bool)] = []
    var delivered: [Int] = []
    var timedOut = false
    var terminated = false
    var absorbed = 0

    mutating func apply(_ actions: [TransactionAction]) {
        for action in actions {
            switch action {
            case .transmit(let bytes, let retransmission): transmissions.append((now, bytes, retransmission))
            case .startTimer(let timer, let delay): timers.append((now + delay, timer))
            case .deliver(let response): delivered.append(response.statusCode)
            case .timedOut: timedOut = true
            case .absorbed: absorbed += 1
            case .terminated: terminated = true
            }
        }
    }

    /// Fires every timer due up to `end`, in order, through `fire`.
    mutating func run(until end: Duration, _ fire: (TransactionTimer) -> [TransactionAction]) {
        while let next = timers.enumerated().filter({ $0.element.at <= end }).min(by: { $0.element.at < $1.element.at }) {
            timers.remove(at: next.offset)
            now = next.element.at
            apply(fire(next.element.timer))
        }
        now = end
    }

    var transmissionTimes: [Duration] { transmissions.map(\.at) }
}

private func request(_ method: SIPMethod) -> SIPRequest {
    SIPRequest(method: method, uri: SIPURI(user: "b", host: "127.0.0.1", port: 5062), headers: [
        "Via": "SIP/2.0/UDP 127.0.0.1:5060;branch=z9hG4bKvirtual;rport", "Max-Forwards": "70",
        "From": "<sip:a@127.0.0.1>;tag=a", "To": "<sip:b@127.0.0.1>", "Call-ID": "virtual",
        "CSeq": "1 \(method)", "Route": "<sip:proxy;lr>",
    ])
}

private func response(_ status: Int, to method: SIPMethod) -> SIPResponse {
    SIPResponse(statusCode: status, headers: [
        "Via": "SIP/2.0/UDP 127.0.0.1:5060;branch=z9hG4bKvirtual;rport=5060", "From": "<sip:a@127.0.0.1>;tag=a",
        "To": "<sip:b@127.0.0.1>;tag=b", "Call-ID": "virtual", "CSeq": "1 \(method)",
    ])
}

private func ms(_ values: Int...) -> [Duration] { values.map { .milliseconds($0) } }

@Suite("SIP transactions (virtual time)")
struct TransactionTests {
    let timers = SIPTimers.rfc3261

    @Test func inviteClientRetransmitsWithTimerAUntilTimerB() {
        var transaction = ClientTransaction(request: request(.invite), timers: timers)
        var clock = VirtualClock()
        clock.apply(transaction.start())
        clock.run(until: .seconds(40)) { transaction.timerFired($0) }
        // Timer A doubles without a cap: 0.5, 1, 2, 4, 8, 16 s apart; Timer B ends it at 32 s.
        #expect(clock.transmissionTimes == ms(0, 500, 1500, 3500, 7500, 15500, 31500))
        #expect(clock.timedOut)
        #expect(clock.terminated)
        #expect(transaction.state == .terminated)
    }

    @Test func provisionalResponseStopsTimerA() {
        var transaction = ClientTransaction(request: request(.invite), timers: timers)
        var clock = VirtualClock()
        clock.apply(transaction.start())
        clock.run(until: .milliseconds(700)) { transaction.timerFired($0) }
        clock.apply(transaction.receive(response(180, to: .invite)))
        clock.run(until: .seconds(60)) { transaction.timerFired($0) }
        #expect(clock.transmissionTimes == ms(0, 500))
        #expect(clock.delivered == [180])
        #expect(!clock.timedOut)  // no Timer B in Proceeding
        #expect(transaction.state == .proceeding)
    }

    @Test func inviteClientAcknowledgesNon2xxAndAbsorbsRetransmissions() throws {
        var transaction = ClientTransaction(request: request(.invite), timers: timers)
        var clock = VirtualClock()
        clock.apply(transaction.start())
        clock.apply(transaction.receive(response(486, to: .invite)))
        #expect(clock.delivered == [486])
        #expect(transaction.state == .completed)
        let ack = try #require(clock.transmissions.last)
        guard case .request(let request) = try SIPMessage(parsing: ack.bytes) else {
            Issue.record("the ACK is not a request")
            return
        }
        // Section 17.1.1.3: same branch, the response's To tag, CSeq method ACK, the Route kept.
        #expect(request.method == .ack)
        #expect(try request.headers.topVia().branch == "z9hG4bKvirtual")
        #expect(try request.headers.to().tag == "b")
        #expect(try request.headers.cseq() == SIPCSeq(1, .ack))
        #expect(request.headers["Route"] == "<sip:proxy;lr>")
        // The 486 again: the ACK again, nothing for the TU.
        clock.apply(transaction.receive(response(486, to: .invite)))
        #expect(clock.transmissions.count == 3 && clock.transmissions[2].retransmission)
        #expect(clock.delivered == [486])
        #expect(clock.absorbed == 1)
        clock.run(until: .seconds(40)) { transaction.timerFired($0) }  // Timer D
        #expect(transaction.state == .terminated)
        #expect(clock.transmissions.count == 3)  // Timer A did not fire after the final response
    }

    @Test func inviteClientPassesEvery2xxToTheCore() {
        var transaction = ClientTransaction(request: request(.invite), timers: timers)
        var clock = VirtualClock()
        clock.apply(transaction.start())
        clock.apply(transaction.receive(response(200, to: .invite)))
        clock.apply(transaction.receive(response(200, to: .invite)))
        #expect(clock.delivered == [200, 200])  // the ACK for a 2xx is the core's job
        #expect(clock.transmissions.count == 1)
        #expect(transaction.state == .accepted)
        clock.run(until: .seconds(33)) { transaction.timerFired($0) }  // Timer M
        #expect(transaction.state == .terminated)
    }

    @Test func nonInviteClientTimersEAndF() {
        var transaction = ClientTransaction(request: request(.options), timers: timers)
        var clock = VirtualClock()
        clock.apply(transaction.start())
        clock.run(until: .seconds(40)) { transaction.timerFired($0) }
        // Timer E doubles up to T2 (4 s); Timer F ends it at 32 s.
        #expect(clock.transmissionTimes == ms(0, 500, 1500, 3500, 7500, 11500, 15500, 19500, 23500, 27500, 31500))
        #expect(clock.timedOut)
    }

    @Test func nonInviteClientProceedingAndTimerK() {
        var transaction = ClientTransaction(request: request(.bye), timers: timers)
        var clock = VirtualClock()
        clock.apply(transaction.start())
        clock.apply(transaction.receive(response(100, to: .bye)))
        clock.run(until: .milliseconds(9000)) { transaction.timerFired($0) }
        // In Proceeding, E fires every T2.
        #expect(clock.transmissionTimes == ms(0, 500, 4500, 8500))
        clock.apply(transaction.receive(response(200, to: .bye)))
        clock.apply(transaction.receive(response(200, to: .bye)))
        #expect(clock.delivered == [100, 200])
        #expect(clock.absorbed == 1)
        clock.run(until: .seconds(20)) { transaction.timerFired($0) }  // K = T4
        #expect(transaction.state == .terminated)
        #expect(clock.transmissions.count == 4)
    }

    @Test func inviteServerRetransmitsFinalResponseWithTimerGUntilACK() {
        var transaction = ServerTransaction(method: .invite, timers: timers)
        var clock = VirtualClock()
        clock.apply(transaction.send(status: 100, bytes: [1]))
        clock.apply(transaction.receiveRetransmission())  // the INVITE again: the 100 again
        clock.apply(transaction.send(status: 486, bytes: [2]))
        clock.run(until: .milliseconds(8000)) { transaction.timerFired($0) }
        // G: 0.5, 1, 2, 4 s apart, capped at T2.
        #expect(clock.transmissionTimes == ms(0, 0, 0, 500, 1500, 3500, 7500))
        #expect(clock.transmissions.map(\.bytes) == [[1], [1], [2], [2], [2], [2], [2]])
        clock.apply(transaction.receiveACK())
        #expect(transaction.state == .confirmed)
        clock.apply(transaction.receiveACK())
        #expect(clock.absorbed == 2)  // the INVITE retransmission and the second ACK
        clock.run(until: .seconds(20)) { transaction.timerFired($0) }  // I = T4
        #expect(transaction.state == .terminated)
        #expect(!clock.timedOut)
        #expect(clock.transmissions.count == 7)
    }

    @Test func inviteServerGivesUpWithTimerH() {
        var transaction = ServerTransaction(method: .invite, timers: timers)
        var clock = VirtualClock()
        clock.apply(transaction.send(status: 603, bytes: [3]))
        clock.run(until: .seconds(40)) { transaction.timerFired($0) }
        #expect(clock.timedOut)
        #expect(transaction.state == .terminated)
        #expect(clock.transmissionTimes.last! < .seconds(32))
    }

    @Test func inviteServerAbsorbsRetransmissionsAfter2xx() {
        var transaction = ServerTransaction(method: .invite, timers: timers)
        var clock = VirtualClock()
        clock.apply(transaction.send(status: 200, bytes: [4]))
        clock.apply(transaction.receiveRetransmission())
        #expect(clock.transmissions.count == 1)  // 2xx retransmission is the UAS core's job
        #expect(clock.absorbed == 1)
        #expect(transaction.state == .accepted)
        clock.run(until: .seconds(33)) { transaction.timerFired($0) }  // Timer L
        #expect(transaction.state == .terminated)
    }

    @Test func nonInviteServerTimerJ() {
        var transaction = ServerTransaction(method: .bye, timers: timers)
        var clock = VirtualClock()
        clock.apply(transaction.receiveRetransmission())  // Trying: nothing to resend yet
        clock.apply(transaction.send(status: 200, bytes: [5]))
        clock.apply(transaction.receiveRetransmission())
        #expect(clock.transmissions.map(\.bytes) == [[5], [5]])
        #expect(clock.transmissions[1].retransmission)
        #expect(clock.absorbed == 2)
        clock.run(until: .seconds(33)) { transaction.timerFired($0) }
        #expect(transaction.state == .terminated)
        // The TU cannot send a second final response.
        #expect(transaction.send(status: 500, bytes: [6]).isEmpty)
    }
}

/// What an INVITE server transaction sends on its own: bounded for requests from strangers.
@Suite struct ServerTransactionReflectionTests {
    let timers = SIPTimers.rfc3261

    /// A refusal before any provisional is not retransmitted by Timer G: the client still
    /// retransmits its INVITE, and each copy gets the response again.
    @Test func aRefusalBeforeAnyProvisionalIsSentOncePerRequest() {
        var transaction = ServerTransaction(method: .invite, timers: timers)
        var clock = VirtualClock()
        clock.apply(transaction.send(status: 400, bytes: [5]))
        clock.apply(transaction.receiveRetransmission())
        clock.run(until: .seconds(40)) { transaction.timerFired($0) }
        #expect(clock.transmissions.map(\.bytes) == [[5], [5]])
        #expect(clock.timedOut && transaction.state == .terminated)
    }

    /// After a provisional, Timer G retransmits, but never past 11 times the request's size.
    @Test(arguments: [(100, 10), (10, 1)])
    func timerGStopsAtTheReflectionBudget(requestSize: Int, finals: Int) {
        var transaction = ServerTransaction(method: .invite, timers: timers, requestSize: requestSize)
        var clock = VirtualClock()
        clock.apply(transaction.send(status: 100, bytes: Array(repeating: 1, count: 100)))
        clock.apply(transaction.send(status: 486, bytes: Array(repeating: 2, count: 100)))
        clock.run(until: .seconds(40)) { transaction.timerFired($0) }
        let sent = clock.transmissions.reduce(0) { $0 + $1.bytes.count }
        #expect(clock.transmissions.count(where: { $0.bytes.first == 2 }) == finals)
        #expect(sent <= max(11 * requestSize, 200))
        #expect(transaction.state == .terminated)
    }
}
