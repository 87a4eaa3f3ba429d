import Platform
import Logging

// The transport and transaction plumbing of the user agent core: datagrams in, timers,
// running the transactions' actions, and building responses.

/// The methods this user agent implements, as the value of the `Allow` header (of an INVITE,
/// a 405, and OPTIONS and 2xx responses), built once.
let allowHeaderValue = [SIPMethod.invite, .ack, .cancel, .bye, .options, .refer, .notify, .update].map(\.rawValue).joined(separator: ", ")

/// Methods defined by RFC 3261 and its common extensions that we know but do not allow (405);
/// any other method is answered 501.
let knownMethods: Set<SIPMethod> = [.register, .prack, .subscribe, .publish, .info, .message]

extension CoreState {
    /// A datagram arrived on the socket.
    mutating func receive(_ bytes: [UInt8], from source: SIPHop, truncated: Bool) {
        guard !closed else { return }
        statistics.datagramsReceived += 1
        // Before any parsing: a flooding source costs a dictionary lookup per datagram.
        guard admit(source.address) else {
            statistics.rateLimited += 1
            return
        }
        if truncated {
            statistics.malformedDropped += 1
            logger.debug("SIP: dropped a truncated datagram from \(source)")
            return
        }
        if logger.logLevel <= .trace {
            logger.trace("SIP <- \(source)\n\(String(decoding: bytes, as: UTF8.self))")
        }
        switch SIPParser.classify(bytes) {
        case .keepAlive:
            return
        case .malformed(let error):
            statistics.malformedDropped += 1
            logger.debug("SIP: dropped a malformed datagram from \(source): \(error)")
        case .badRequest(let error, let headers):
            answerMalformed(error, headers: headers, from: source)
        case .message(.request(let request)):
            statistics.messagesReceived += 1
            handleRequest(request, from: source, size: bytes.count)
        case .message(.response(let response)):
            statistics.messagesReceived += 1
            handleResponse(response, from: source)
        }
    }

    /// The rate limits (``SIPLimits``): a source over its own rate still goes through when it is
    /// a peer we talk to, since its address may be spoofed by whoever floods us.
    private mutating func admit(_ source: SocketAddress) -> Bool {
        let now = env.network.now
        return rateLimiter.admit(source, now: now) || isKnownPeer(source) && rateLimiter.admitKnownPeer(now: now)
    }

    /// Whether `source` is where one of our requests went, a call's peer or its first hop, or
    /// the registrar. Linear in the (bounded) tables; asked only of a source over its rate.
    func isKnownPeer(_ source: SocketAddress) -> Bool {
        if accounts.values.contains(where: { $0.registration?.destination.address.sameHost(as: source) == true }) { return true }
        if clients.values.contains(where: { $0.destination.address.sameHost(as: source) }) { return true }
        return calls.values.contains { call in
            guard !call.phase.isEnded else { return false }
            if call.peer.address.sameHost(as: source) || call.answerSource?.address.sameHost(as: source) == true { return true }
            guard let dialog = call.dialog else { return false }
            return destination(of: dialog, fallback: call.peer).address.sameHost(as: source)
        }
    }

    /// Answers a malformed request statelessly: 416 for a Request-URI scheme other than SIP,
    /// 505 for another SIP version, 400 for everything else (RFC 3261 sections 8.2.2, 8.2.6).
    mutating func answerMalformed(_ error: SIPParseError, headers: SIPHeaders, from source: SIPHop) {
        guard let via = try? headers.topVia() else { return }
        let status: Int
        switch error {
        case .unsupportedURIScheme: status = 416
        case .unsupportedVersion: status = 505
        default: status = 400
        }
        var response = SIPHeaders()
        let stamped = stampVia(headers, via: via, source: source)
        for field in stamped where field.name == "Via" { response.add(field) }
        for name in ["From", "Call-ID", "CSeq"] { response.add(name, headers[name] ?? "") }
        let to = headers["To"] ?? ""
        response.add("To", to.contains(";tag=") ? to : to + ";tag=" + randomToken())
        // The reason may quote the request (a scheme, a header name): a short prefix of it.
        response.add("Warning", "399 \(env.advertisedHost(toward: source.address)) \(quotedString(String(error.description.prefix(100))))")
        response.add("User-Agent", env.configuration.userAgent)
        statistics.badRequestsAnswered += 1
        logger.debug("SIP: answered \(status) to a malformed request from \(source): \(error)")
        send(SIPResponse(statusCode: status, headers: response).serialized(), to: source)
    }

    /// The top Via as the request arrived, with `received` and `rport` filled in
    /// (RFC 3261 section 18.2.1, RFC 3581 section 4).
    func stampVia(_ headers: SIPHeaders, via: SIPVia, source: SIPHop) -> SIPHeaders {
        var via = via
        if via.host != source.address.host || via.rport != nil { via.parameters["received"] = source.address.host }
        if via.rport != nil { via.parameters["rport"] = String(source.address.port) }
        var out = headers
        out.replaceTopVia(with: via.description)
        return out
    }

    /// A response to `request` (RFC 3261 section 8.2.6.2): its Via, From, Call-ID and CSeq, and
    /// its To with `toTag` added when it has none (never on a 100).
    func makeResponse(to request: SIPRequest, status: Int, reason: String? = nil, toTag: String? = nil) -> SIPResponse {
        var headers = SIPHeaders()
        for field in request.headers where field.name == "Via" { headers.add(field) }
        if request.method == .invite, status > 100, status < 300 {
            // Dialog-creating responses carry the Record-Route (section 12.1.1).
            for field in request.headers where field.name == "Record-Route" { headers.add(field) }
        }
        headers.add("From", request.headers["From"] ?? "")
        var to = request.headers["To"] ?? ""
        if status > 100, let toTag, (try? request.headers.to().tag) == nil {
            to += ";tag=" + toTag
        }
        headers.add("To", to)
        headers.add("Call-ID", request.headers["Call-ID"] ?? "")
        headers.add("CSeq", request.headers["CSeq"] ?? "")
        headers.add("User-Agent", env.configuration.userAgent)
        return SIPResponse(statusCode: status, reasonPhrase: reason, headers: headers)
    }

    // MARK: Transactions

    /// Starts a client transaction for `request` (which has its top Via) and sends it.
    @discardableResult
    mutating func startClient(_ request: SIPRequest, to destination: SIPHop, owner: ClientOwner) -> ClientKey {
        let branch = (try? request.headers.topVia().branch) ?? nil
        let key = ClientKey(branch: branch ?? "", method: request.method)
        var transaction = ClientTransaction(request: request, timers: timers)
        let actions = transaction.start()
        clients[key] = ClientRecord(transaction: transaction, destination: destination, owner: owner)
        runClient(key, actions)
        return key
    }

    /// Performs a client transaction's actions; `source` is where the response that caused
    /// them came from.
    mutating func runClient(_ key: ClientKey, _ actions: [TransactionAction], from source: SIPHop? = nil) {
        guard let record = clients[key] else { return }
        for action in actions {
            switch action {
            case .transmit(let bytes, let retransmission):
                send(bytes, to: record.destination, retransmission: retransmission)
            case .startTimer(let timer, let delay):
                schedule(delay, .client(key, timer))
            case .deliver(let response):
                clientDelivered(response, owner: record.owner, key: key, from: source)
            case .timedOut:
                clientTimedOut(owner: record.owner, key: key)
            case .absorbed:
                statistics.retransmissionsAbsorbed += 1
            case .terminated:
                clients[key] = nil
            }
        }
    }

    mutating func runServer(_ key: ServerKey, _ actions: [TransactionAction]) {
        guard let record = servers[key] else { return }
        for action in actions {
            switch action {
            case .transmit(let bytes, let retransmission):
                send(bytes, to: record.destination, retransmission: retransmission)
            case .startTimer(let timer, let delay):
                schedule(delay, .server(key, timer))
            case .timedOut:
                logger.debug("SIP: no ACK for the final response to \(record.method) (Timer H)")
            case .absorbed:
                statistics.retransmissionsAbsorbed += 1
            case .terminated:
                servers[key] = nil
            case .deliver:
                break  // server transactions deliver nothing after creation
            }
        }
    }

    /// Sends a response through the request's server transaction.
    ///
    /// - Returns: its wire form (a 2xx to INVITE keeps it to retransmit), nil without the transaction.
    @discardableResult
    mutating func respond(_ key: ServerKey, _ response: SIPResponse) -> [UInt8]? {
        guard servers[key] != nil else { return nil }
        let bytes = response.serialized()
        let wasFinal = servers[key]!.transaction.hasFinalResponse
        runServer(key, servers[key]!.transaction.send(status: response.statusCode, bytes: bytes))
        if !wasFinal, let record = servers[key], record.transaction.hasFinalResponse {
            // Answered: forgettable under the limit, and a non-INVITE request is no longer needed.
            if record.method != .invite { servers[key]!.request = nil }
            answeredServers.append(key)
            if answeredServers.count > 2 * limits.maximumServerTransactions {
                answeredServers.compact { servers[$0]?.transaction.hasFinalResponse == true }
            }
        }
        return bytes
    }

    /// Makes room for one more server transaction under ``SIPLimits/maximumServerTransactions``
    /// by forgetting the oldest answered ones; false when every one is still unanswered.
    mutating func makeRoomForServerTransaction() -> Bool {
        while servers.count >= limits.maximumServerTransactions {
            guard let oldest = answeredServers.popFirst() else { return false }
            guard servers[oldest]?.transaction.hasFinalResponse == true else { continue }
            servers[oldest] = nil
            statistics.serverTransactionsEvicted += 1
        }
        return true
    }

    /// Responds to the request of a server transaction with a plain response.
    mutating func respond(_ key: ServerKey, status: Int, reason: String? = nil, toTag: String? = nil,
                          extraHeaders: SIPHeaders = SIPHeaders()) {
        guard let request = servers[key]?.request else { return }
        var response = makeResponse(to: request, status: status, reason: reason, toTag: toTag ?? randomToken())
        for field in extraHeaders { response.headers.add(field) }
        respond(key, response)
    }

    mutating func timerFired(_ event: TimerEvent) {
        guard !closed else { return }
        switch event {
        case .client(let key, let timer):
            guard clients[key] != nil else { return }
            runClient(key, clients[key]!.transaction.timerFired(timer))
        case .server(let key, let timer):
            guard servers[key] != nil else { return }
            runServer(key, servers[key]!.transaction.timerFired(timer))
        case .call(let key, let timer):
            callTimerFired(key, timer)
        case .registration(let user, let generation):
            refreshRegistration(user: user, generation: generation)
        case .networkCheck:
            networkCheckArmed = false
            checkNetwork()
        }
    }

    /// `Allow`, `Accept` and `Supported`: what OPTIONS and 2xx to INVITE advertise.
    var capabilityHeaders: SIPHeaders {
        var headers = SIPHeaders()
        headers.add("Allow", allowHeaderValue)
        headers.add("Accept", "application/sdp")
        headers.add("Supported", "timer, replaces")
        return headers
    }
}
