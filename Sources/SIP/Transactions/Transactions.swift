// The transaction layer of RFC 3261 section 17 for an unreliable transport (UDP), with the
// INVITE "Accepted" state of RFC 6026.
//
// Each transaction is a value-type state machine with no I/O and no clock: events go in
// (a message, a fired timer, a response from the TU) and actions come out (transmit these
// bytes, start this timer, hand this to the TU). The user agent performs the actions, so
// the machines are tested with a virtual clock and used unchanged over a real socket.
//
// Timers are never cancelled: a timer that fires in a state where it no longer means
// anything is ignored, and each timer kind has at most one instance running (it is only
// restarted from its own firing), so a stale firing cannot be mistaken for a live one.

/// The timers of RFC 3261 section 17 (and L, M of RFC 6026).
enum TransactionTimer: Sendable, Hashable {
    /// INVITE client: A retransmits, B gives up, D absorbs response retransmissions, M absorbs 2xx.
    case a, b, d, m
    /// Non-INVITE client: E retransmits, F gives up, K absorbs response retransmissions.
    case e, f, k
    /// INVITE server: G retransmits the final response, H gives up waiting for the ACK,
    /// I absorbs ACK retransmissions, L absorbs INVITE retransmissions after a 2xx.
    case g, h, i, l
    /// Non-INVITE server: J absorbs request retransmissions.
    case j
}

/// What a transaction asks its user agent to do.
enum TransactionAction: Sendable, Equatable {
    /// Send (or resend) bytes to the transaction's peer.
    case transmit([UInt8], retransmission: Bool)
    case startTimer(TransactionTimer, Duration)
    /// Client: pass a response to the TU.
    case deliver(SIPResponse)
    /// Client: Timer B or F fired (the TU treats it as a 408). Server: Timer H fired (no ACK).
    case timedOut
    /// A retransmitted request or response was absorbed.
    case absorbed
    /// The transaction is over: forget it.
    case terminated
}

/// A client transaction (RFC 3261 section 17.1): INVITE (figure 5 with RFC 6026's Accepted
/// state) or non-INVITE (figure 6).
struct ClientTransaction {
    enum State: Sendable, Equatable {
        /// INVITE sent, no response yet.
        case calling
        /// Non-INVITE request sent, no response yet.
        case trying
        case proceeding
        case completed
        /// INVITE answered with a 2xx: further 2xx go to the TU (RFC 6026).
        case accepted
        case terminated
    }

    let request: SIPRequest
    let requestBytes: [UInt8]
    let timers: SIPTimers
    private(set) var state: State
    private var interval: Duration

    var isInvite: Bool { request.method == .invite }

    init(request: SIPRequest, timers: SIPTimers) {
        self.request = request
        requestBytes = request.serialized()
        self.timers = timers
        state = request.method == .invite ? .calling : .trying
        interval = timers.t1
    }

    /// Sends the request and starts the timers.
    mutating func start() -> [TransactionAction] {
        if isInvite {
            return [.transmit(requestBytes, retransmission: false), .startTimer(.a, timers.t1),
                    .startTimer(.b, timers.transactionTimeout)]
        }
        return [.transmit(requestBytes, retransmission: false), .startTimer(.e, timers.t1),
                .startTimer(.f, timers.transactionTimeout)]
    }

    mutating func receive(_ response: SIPResponse) -> [TransactionAction] {
        let code = response.statusCode
        switch (isInvite, state) {
        case (true, .calling), (true, .proceeding):
            if code < 200 {
                state = .proceeding
                return [.deliver(response)]
            }
            if code < 300 {
                state = .accepted
                return [.deliver(response), .startTimer(.m, timers.transactionTimeout)]
            }
            state = .completed
            return [.transmit(makeACK(for: response).serialized(), retransmission: false), .deliver(response),
                    .startTimer(.d, timers.timerD)]
        case (true, .accepted):
            return (200..<300).contains(code) ? [.deliver(response)] : [.absorbed]
        case (true, .completed):
            // A retransmitted final response: the ACK was lost; send it again.
            return code >= 300 ? [.transmit(makeACK(for: response).serialized(), retransmission: true), .absorbed] : [.absorbed]
        case (false, .trying), (false, .proceeding):
            if code < 200 {
                state = .proceeding
                return [.deliver(response)]
            }
            state = .completed
            return [.deliver(response), .startTimer(.k, timers.t4)]
        case (false, .completed):
            return [.absorbed]
        default:
            return []
        }
    }

    mutating func timerFired(_ timer: TransactionTimer) -> [TransactionAction] {
        switch (timer, state) {
        case (.a, .calling):
            interval = interval * 2  // INVITE retransmissions keep doubling (section 17.1.1.2)
            return [.transmit(requestBytes, retransmission: true), .startTimer(.a, interval)]
        case (.b, .calling), (.f, .trying), (.f, .proceeding):
            state = .terminated
            return [.timedOut, .terminated]
        case (.d, .completed), (.m, .accepted), (.k, .completed):
            state = .terminated
            return [.terminated]
        case (.e, .trying):
            interval = min(interval * 2, timers.t2)
            return [.transmit(requestBytes, retransmission: true), .startTimer(.e, interval)]
        case (.e, .proceeding):
            return [.transmit(requestBytes, retransmission: true), .startTimer(.e, timers.t2)]
        default:
            return []
        }
    }

    /// Abandons the transaction (a CANCEL that got no final response in time).
    mutating func terminate() { state = .terminated }

    /// The ACK for a non-2xx final response (section 17.1.1.3): same Request-URI, top Via,
    /// From, Call-ID, CSeq number and Route as the INVITE, and the response's To.
    private func makeACK(for response: SIPResponse) -> SIPRequest {
        request.derived(.ack, to: response.headers["To"])
    }
}

/// A server transaction (RFC 3261 section 17.2): INVITE (figure 7 with RFC 6026's Accepted
/// state) or non-INVITE (figure 8).
struct ServerTransaction {
    enum State: Sendable, Equatable {
        /// INVITE received (the 100 Trying is the user agent's first response).
        case proceeding
        /// Non-INVITE request received, no response yet.
        case trying
        case completed
        /// INVITE: the ACK for a non-2xx final response arrived.
        case confirmed
        /// INVITE: a 2xx was sent; retransmitting it is the TU's job (section 13.3.1.4).
        case accepted
        case terminated
    }

    let isInvite: Bool
    let timers: SIPTimers
    private(set) var state: State
    private var lastResponse: [UInt8]?
    /// Whether a final response has been sent.
    private(set) var hasFinalResponse = false
    private var interval: Duration
    /// Bytes that may still be sent on our own initiative (Timer G, and the UAS core's 2xx
    /// retransmissions): 11 times the request's size less what was sent, so a request with a
    /// spoofed source reflects at most 11 times its size however large the responses.
    private(set) var reflectionBudget: Int

    /// - Parameter requestSize: the request's size in bytes, for ``reflectionBudget`` (nil: no budget).
    init(method: SIPMethod, timers: SIPTimers, requestSize: Int? = nil) {
        isInvite = method == .invite
        self.timers = timers
        state = isInvite ? .proceeding : .trying
        interval = timers.t1
        reflectionBudget = requestSize.map { 11 * $0 } ?? .max
    }

    /// The TU sends a response.
    mutating func send(status: Int, bytes: [UInt8]) -> [TransactionAction] {
        reflectionBudget -= bytes.count
        switch (isInvite, state) {
        case (true, .proceeding):
            if status < 200 {
                lastResponse = bytes
                return [.transmit(bytes, retransmission: false)]
            }
            hasFinalResponse = true
            if status < 300 {
                state = .accepted
                return [.transmit(bytes, retransmission: false), .startTimer(.l, timers.transactionTimeout)]
            }
            state = .completed
            // Timer G only after a provisional: before one, the client still retransmits its
            // INVITE (Timer A) and each copy gets the response again, so a refusal sent at
            // once costs one response per request, not eleven to a spoofed source.
            let retransmit = lastResponse != nil
            lastResponse = bytes
            return [.transmit(bytes, retransmission: false)] + (retransmit ? [.startTimer(.g, timers.t1)] : [])
                + [.startTimer(.h, timers.transactionTimeout)]
        case (false, .trying), (false, .proceeding):
            lastResponse = bytes
            if status < 200 {
                state = .proceeding
                return [.transmit(bytes, retransmission: false)]
            }
            hasFinalResponse = true
            state = .completed
            return [.transmit(bytes, retransmission: false), .startTimer(.j, timers.transactionTimeout)]
        default:
            return []
        }
    }

    /// The same request arrived again.
    mutating func receiveRetransmission() -> [TransactionAction] {
        switch state {
        case .proceeding, .completed:
            if let lastResponse { return [.transmit(lastResponse, retransmission: true), .absorbed] }
            return [.absorbed]
        case .trying, .confirmed, .accepted:
            return [.absorbed]
        case .terminated:
            return []
        }
    }

    /// An ACK matched this INVITE transaction (one for its non-2xx final response).
    mutating func receiveACK() -> [TransactionAction] {
        switch state {
        case .completed:
            state = .confirmed
            return [.startTimer(.i, timers.t4)]
        case .confirmed:
            return [.absorbed]
        default:
            return []
        }
    }

    mutating func timerFired(_ timer: TransactionTimer) -> [TransactionAction] {
        switch (timer, state) {
        case (.g, .completed):
            interval = min(interval * 2, timers.t2)
            guard let lastResponse, lastResponse.count <= reflectionBudget else { return [] }  // H still ends it
            reflectionBudget -= lastResponse.count
            return [.transmit(lastResponse, retransmission: true), .startTimer(.g, interval)]
        case (.h, .completed):
            state = .terminated
            return [.timedOut, .terminated]
        case (.i, .confirmed), (.j, .completed), (.l, .accepted):
            state = .terminated
            return [.terminated]
        default:
            return []
        }
    }
}
