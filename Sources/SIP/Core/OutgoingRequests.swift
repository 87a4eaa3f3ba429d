import Platform
import Logging

// The UAC side of the user agent core (RFC 3261 sections 8.1, 9.1, 12.1.2, 13.2, 17.1.3):
// requests out, responses back through their client transaction to the call.

extension CoreState {
    mutating func handleResponse(_ response: SIPResponse, from source: SIPHop) {
        guard let via = try? response.headers.topVia(), let branch = via.branch,
              let cseq = try? response.headers.cseq()
        else {
            statistics.malformedDropped += 1
            return
        }
        let key = ClientKey(branch: branch, method: cseq.method)
        guard clients[key] != nil else {
            statistics.strayResponses += 1
            logger.debug("SIP: dropped a \(response.statusCode) that matches no transaction")
            return
        }
        guard serverAuthenticationHolds(response, key: key) else { return }
        runClient(key, clients[key]!.transaction.receive(response), from: source)
    }

    mutating func clientDelivered(_ response: SIPResponse, owner: ClientOwner, key: ClientKey, from source: SIPHop?) {
        if response.statusCode == 401 || response.statusCode == 407,
           retryWithCredentials(response, key: key, owner: owner, from: source) { return }
        switch owner {
        case .invite(let callKey):
            inviteResponse(response, callKey: callKey, from: source)
        case .reinvite(let callKey):
            reinviteResponse(response, callKey: callKey, key: key)
        case .refer(let callKey):
            referResponse(response, callKey: callKey)
        case .options:
            if response.statusCode >= 200, let waiter = optionsWaiters.removeValue(forKey: key) {
                waiter.resume(returning: .success(response))
            }
        case .register(let user):
            registerResponse(response, key: key, user: user)
        case .bye, .cancel, .notify, .none:
            if response.statusCode >= 300 {
                logger.info("SIP: \(key.method) answered \(response.statusCode) \(response.reasonPhrase)")
            }
        }
    }

    mutating func clientTimedOut(owner: ClientOwner, key: ClientKey) {
        switch owner {
        case .invite(let callKey):
            guard let call = calls[callKey] else { return }
            if failOverInvite(callKey) { return }
            end(callKey, call.cancelRequested ? .cancelled(byRemote: false) : .failed(status: 408, reason: "Request Timeout"))
        case .reinvite(let callKey):
            reinviteTimedOut(callKey: callKey, key: key)
        case .refer(let callKey):
            referTimedOut(callKey: callKey)
        case .options:
            optionsWaiters.removeValue(forKey: key)?.resume(returning: .failure(.timeout))
        case .register(let user):
            registerFailed(.timeout, key: key, user: user)
        case .bye, .cancel, .notify, .none:
            logger.info("SIP: \(key.method) got no response (timeout)")
        }
    }

    /// A response to our INVITE.
    private mutating func inviteResponse(_ response: SIPResponse, callKey: CallKey, from source: SIPHop?) {
        guard let call = calls[callKey] else { return }
        let status = response.statusCode
        let body = response.body.isEmpty ? nil
            : SIPBody(contentType: response.headers.contentType ?? "application/sdp", bytes: response.body)

        if status < 200 {
            if !call.sawProvisional, let limit = env.configuration.ringTimeout { schedule(limit, .call(callKey, .ringTimeout)) }
            calls[callKey]!.sawProvisional = true
            if call.cancelRequested, !call.cancelSent { sendCANCEL(callKey) }
            guard !call.phase.isEnded else { return }
            if status == 100 {
                if !call.reportedTrying, call.phase == .calling {
                    calls[callKey]!.reportedTrying = true
                    call.events.yield(.trying)
                }
            } else if status == 180 || status == 183 {
                if call.phase == .calling {
                    calls[callKey]!.setPhase(.ringing)
                    call.events.yield(.ringing(body))
                } else if let body, body != call.remoteBody {
                    call.events.yield(.ringing(body))  // new early media
                }
                if let body { calls[callKey]!.remoteBody = body }
            }
            return
        }
        if status < 300 {
            handle2xx(response, body: body, callKey: callKey, from: source)
            return
        }
        if status == 503, failOverInvite(callKey) { return }
        if status == 422, retryWithLongerSession(callKey, response) { return }
        end(callKey, call.cancelRequested ? .cancelled(byRemote: false)
                : .failed(status: status, reason: response.reasonPhrase))
    }

    /// A 2xx to our INVITE: the dialog is confirmed; the UAC core (not the transaction) sends
    /// the ACK, and sends it again for each retransmitted 2xx (section 13.2.2.4).
    ///
    /// What a hostile callee could turn into traffic toward others is refused: a 2xx whose route
    /// set is over the limits (the ACK and BYE would carry it), a 2xx from any address but the
    /// first 2xx's (a retransmission would make us send the ACK again), and forks past
    /// ``SIPLimits/maximumForks`` (each costs an ACK and a BYE).
    private mutating func handle2xx(_ response: SIPResponse, body: SIPBody?, callKey: CallKey, from source: SIPHop?) {
        guard let call = calls[callKey], let invite = call.invite else { return }
        // After a refused 2xx (no dialog, but a source), every later one is refused too.
        guard call.dialog != nil || call.answerSource == nil, routeSetFits(response.headers) else {
            statistics.unacceptable2xxDropped += 1
            logger.debug("SIP: dropped a 2xx with more routes than the limits allow, or after one")
            if call.dialog == nil {
                calls[callKey]!.answerSource = source
                end(callKey, .failed(status: 502, reason: "Too Many Routes"))
            }
            return
        }
        let toTag = (try? response.headers.to().tag) ?? nil
        if let dialog = call.dialog {  // an outgoing call has a dialog only once answered
            guard source == call.answerSource else {
                statistics.unacceptable2xxDropped += 1
                return
            }
            if dialog.id.remoteTag == toTag ?? "", let ack = call.ack {
                statistics.retransmissionsAbsorbed += 1
                send(ack, to: destination(of: dialog, fallback: call.peer), retransmission: true)
            } else if call.forksEnded < limits.maximumForks, var other = Dialog.uac(invite: invite, response: response) {
                // A second 2xx from a forked INVITE: acknowledge it and end that dialog.
                calls[callKey]!.forksEnded += 1
                sendACK(for: &other, callKey: callKey, remember: false)
                sendBYE(in: &other, peer: call.peer, localHost: call.localHost, owner: .none)
            } else {
                statistics.unacceptable2xxDropped += 1
            }
            return
        }
        guard var dialog = Dialog.uac(invite: invite, response: response) else {
            logger.warning("SIP: a 2xx without the tags of a dialog; ending the call")
            end(callKey, .failed(status: 500, reason: "Malformed 2xx"))
            return
        }
        calls[callKey]!.answerSource = source
        sendACK(for: &dialog, callKey: callKey, remember: true)
        calls[callKey]!.dialog = dialog
        dialogs[dialog.id] = callKey
        if let body { calls[callKey]!.remoteBody = body }

        if call.cancelRequested || call.phase.isEnded {
            sendBYE(callKey)  // answered while we cancelled (section 9.1): end it
            end(callKey, .cancelled(byRemote: false))
            return
        }
        calls[callKey]!.setPhase(.established)
        if let (seconds, refresher) = response.headers.sessionExpires() {
            let interval = min(max(seconds, timers.minimumSessionSeconds), maximumSessionInterval)
            startSessionTimer(callKey, SessionTimer(interval: interval, weRefresh: refresher != "uas"))
        }
        call.events.yield(.answered(body))
        logger.info("SIP: call \(dialog.id.callID) answered")
    }

    private mutating func sendACK(for dialog: inout Dialog, callKey: CallKey, remember: Bool) {
        guard let call = calls[callKey], let inviteCSeq = try? call.invite?.headers.cseq() else { return }
        var ack = dialog.makeRequest(.ack, sequence: inviteCSeq.sequence)
        ack.headers.prepend("Via", makeVia(localHost: call.localHost, transport: call.peer.transport))
        ack.headers.add("User-Agent", env.configuration.userAgent)
        let bytes = ack.serialized()
        send(bytes, to: destination(of: dialog, fallback: call.peer))
        if remember { calls[callKey]!.ack = bytes }
    }

    /// Sends a BYE in the call's dialog (its own client transaction).
    mutating func sendBYE(_ callKey: CallKey) {
        guard let call = calls[callKey], var dialog = call.dialog else { return }
        sendBYE(in: &dialog, peer: call.peer, localHost: call.localHost, owner: .bye(callKey))
        calls[callKey]!.dialog = dialog
    }

    /// A BYE sent once, outside any transaction: for a peer that never acknowledged our 2xx
    /// (its address may be spoofed), which must not get Timer E's eleven copies. Its response
    /// is a stray one.
    mutating func sendBYEOnce(_ callKey: CallKey) {
        guard let call = calls[callKey], let (bytes, dialog) = oneShotBYE(callKey) else { return }
        calls[callKey]!.dialog = dialog
        send(bytes, to: destination(of: dialog, fallback: call.peer))
    }

    /// The BYE ``sendBYEOnce(_:)`` would send, and the dialog after it (its size is reserved
    /// out of the 2xx's reflection budget).
    func oneShotBYE(_ callKey: CallKey) -> ([UInt8], Dialog)? {
        guard let call = calls[callKey], var dialog = call.dialog else { return nil }
        var bye = dialog.makeRequest(.bye)
        bye.headers.prepend("Via", makeVia(localHost: call.localHost, transport: call.peer.transport))
        bye.headers.add("User-Agent", env.configuration.userAgent)
        return (bye.serialized(), dialog)
    }

    private mutating func sendBYE(in dialog: inout Dialog, peer: SIPHop, localHost: String, owner: ClientOwner) {
        var bye = dialog.makeRequest(.bye)
        let hop = destination(of: dialog, fallback: peer)
        bye.headers.prepend("Via", makeVia(localHost: localHost, transport: hop.transport))
        bye.headers.add("User-Agent", env.configuration.userAgent)
        startClient(bye, to: hop, owner: owner)
    }

    /// CANCEL for our INVITE (section 9.1): same Request-URI, top Via, From, To, Call-ID,
    /// CSeq number and Route; the INVITE's final response (487) ends the call.
    mutating func sendCANCEL(_ callKey: CallKey) {
        guard let call = calls[callKey], let invite = call.invite else { return }
        startClient(invite.derived(.cancel), to: call.peer, owner: .cancel(callKey))
        calls[callKey]!.cancelSent = true
        schedule(timers.transactionTimeout, .call(callKey, .cancelTimeout))
    }

    /// A new outgoing call: builds and sends the INVITE (section 8.1.1).
    /// - Parameter account: the user of the account it is placed from (nil: the primary).
    mutating func invite(target: SIPURI, destination: SIPHop, alternates: [SIPHop] = [], offer: SIPBody?,
                         replaces: SIPReplaces? = nil, account: String? = nil) -> Result<NewCallInfo, SIPError> {
        guard !closed else { return .failure(.closed) }
        guard clients.count < limits.maximumClientTransactions else { return .failure(.tooManyRequests) }
        let user = account ?? primaryUser
        guard let record = accounts[user] else { return .failure(.invalidAccount(user: user, reason: "no such account")) }
        let localHost = env.advertisedHost(toward: destination.address)
        let configuration = env.configuration
        // Registered, we are our address of record (a proxy authenticates and routes by it).
        let local = SIPNameAddress(displayName: record.displayName,
                                   uri: record.registration?.addressOfRecord
                                       ?? SIPURI(user: user, host: localHost, port: env.localPort(for: destination.transport)))
        var from = local
        from.tag = randomToken()
        var remote = SIPNameAddress(uri: target)
        remote.uri.headers = nil
        let callID = randomToken(bytes: 16)

        var headers = SIPHeaders()
        headers.add("Via", makeVia(localHost: localHost, transport: destination.transport))
        headers.add("Max-Forwards", "70")
        headers.add("From", from.description)
        headers.add("To", remote.description)
        headers.add("Call-ID", callID)
        headers.add("CSeq", "1 INVITE")
        headers.add("Contact", "<\(contactURI(user: user, localHost: localHost, transport: destination.transport))>")
        addPreloadedRoute(to: &headers)
        for field in sessionTimerRequestHeaders(nil) { headers.add(field) }
        headers.add("Allow", allowHeaderValue)
        if let replaces { headers.add("Replaces", replaces.description) }
        headers.add("User-Agent", configuration.userAgent)
        var body: [UInt8] = []
        if let offer {
            headers.add("Content-Type", offer.contentType)
            body = offer.bytes
        }
        var requestURI = target
        requestURI.headers = nil
        let request = SIPRequest(method: .invite, uri: requestURI, headers: headers, body: body)

        let callKey = nextCallKey
        nextCallKey += 1
        let (stream, continuation) = AsyncStream.makeStream(of: SIPCallEvent.self)
        var call = CallRecord(key: callKey, direction: .outgoing, phase: .calling, peer: destination,
                              localHost: localHost, account: user, events: continuation)
        call.invite = request
        call.alternates = alternates
        call.localBody = offer
        calls[callKey] = call
        activeCalls += 1
        calls[callKey]!.inviteKey = startClient(request, to: destination, owner: .invite(callKey))
        logger.info("SIP: calling \(target) at \(destination)")
        return .success(NewCallInfo(key: callKey, direction: .outgoing, callID: callID, remote: remote, local: local,
                                    offer: offer, remoteAddress: destination.address, transport: destination.transport, localHost: localHost,
                                    account: user, events: stream,
                                    stateBox: call.box))
    }

    /// An OPTIONS request outside any dialog; `waiter` gets its final response.
    mutating func options(target: SIPURI, destination: SIPHop,
                          waiter: CheckedContinuation<Result<SIPResponse, SIPError>, Never>) {
        guard !closed, clients.count < limits.maximumClientTransactions else {
            waiter.resume(returning: .failure(closed ? .closed : .tooManyRequests))
            return
        }
        let localHost = env.advertisedHost(toward: destination.address)
        var from = SIPNameAddress(uri: SIPURI(user: primaryUser, host: localHost, port: env.localPort(for: destination.transport)))
        from.tag = randomToken()
        var headers = SIPHeaders()
        headers.add("Via", makeVia(localHost: localHost, transport: destination.transport))
        headers.add("Max-Forwards", "70")
        headers.add("From", from.description)
        headers.add("To", SIPNameAddress(uri: target).description)
        headers.add("Call-ID", randomToken(bytes: 16))
        headers.add("CSeq", "1 OPTIONS")
        headers.add("Contact", "<\(contactURI(user: primaryUser, localHost: localHost, transport: destination.transport))>")
        headers.add("Accept", "application/sdp")
        addPreloadedRoute(to: &headers)
        headers.add("User-Agent", env.configuration.userAgent)
        let key = startClient(SIPRequest(method: .options, uri: target, headers: headers), to: destination, owner: .options)
        optionsWaiters[key] = waiter
    }
}
