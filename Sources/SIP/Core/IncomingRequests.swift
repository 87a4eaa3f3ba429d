import Platform
import Logging

// The UAS side of the user agent core (RFC 3261 sections 8.2, 9.2, 12.2.2, 13.3, 15.1.2):
// requests in, to a server transaction and then to a call, a dialog or an answer.

extension CoreState {
    /// - Parameter size: the datagram's size (what responses to it may add up to is bounded by it).
    mutating func handleRequest(_ request: SIPRequest, from source: SIPHop, size: Int) {
        // The parser checked Via, CSeq and Call-ID; this keeps the network path free of traps anyway.
        guard let via = try? request.headers.topVia(), (try? request.headers.cseq()) != nil,
              (try? request.headers.callID()) != nil
        else {
            statistics.malformedDropped += 1
            return
        }
        // A transaction key is kept (and captured by its timers) for 64 × T1: keep it short.
        guard let branch = via.branch, !branch.isEmpty, branch.utf8.count <= 256, via.sentBy.utf8.count <= 256 else {
            if request.method == .ack {
                statistics.malformedDropped += 1
            } else {
                answerMalformed(.badHeaderValue("Via"), headers: request.headers, from: source)
            }
            return
        }
        var stamped = request
        stamped.headers = stampVia(request.headers, via: via, source: source)
        let method = request.method == .ack ? SIPMethod.invite : request.method
        let key = ServerKey(branch: branch, sentBy: via.sentBy, method: method)

        if request.method == .ack {
            handleACK(stamped, key: key)
            return
        }
        if let record = servers[key] {
            // A retransmission comes from where the request came from: the same branch from
            // anywhere else would make us send the stored response to the first source.
            guard record.destination == source else {
                statistics.spoofedRetransmissions += 1
                logger.debug("SIP: dropped a \(request.method) from \(source) that repeats another source's transaction")
                return
            }
            runServer(key, servers[key]!.transaction.receiveRetransmission())
            return
        }
        guard makeRoomForServerTransaction() else {
            statistics.stateLimitDropped += 1
            logger.debug("SIP: dropped a \(request.method) from \(source): too many server transactions")
            return
        }
        servers[key] = ServerRecord(transaction: ServerTransaction(method: request.method, timers: timers, requestSize: size),
                                    request: stamped, destination: source)
        handleNew(stamped, key: key, from: source)
    }

    /// A request that opened a server transaction: checked (method, required extensions), then
    /// to its dialog, or answered as a new INVITE, an OPTIONS, or a BYE for no dialog.
    private mutating func handleNew(_ request: SIPRequest, key: ServerKey, from source: SIPHop) {
        switch request.method {
        case .cancel:
            handleCANCEL(request, key: key)
            return
        case .invite, .bye, .options, .refer, .notify, .update:
            break
        default:
            // Method inspection first (section 8.2.1).
            if knownMethods.contains(request.method) {
                respond(key, status: 405, extraHeaders: ["Allow": allowHeaderValue])
            } else {
                respond(key, status: 501)
            }
            return
        }

        // Extensions the client requires (section 8.2.2.3): we support none.
        // RFC 4028 and RFC 3891: supported.
        let required = request.headers.tokens("Require").filter { !["timer", "replaces"].contains($0.lowercased()) }
        if !required.isEmpty {
            // A few of them: a response must not grow with what the request lists.
            let unsupported = required.prefix(8).map { String($0.prefix(64)) }.joined(separator: ",")
            respond(key, status: 420, extraHeaders: ["Unsupported": unsupported])
            return
        }

        if let to = try? request.headers.to(), to.tag != nil {
            handleInDialog(request, key: key)
            return
        }
        switch request.method {
        case .invite:
            handleNewInvite(request, key: key, source: source)
        case .options:
            var headers = capabilityHeaders
            headers.add("Contact", "<\(contactURI(user: accountUser(addressedTo: request.uri), localHost: env.advertisedHost(toward: source.address), transport: source.transport))>")
            respond(key, status: 200, extraHeaders: headers)
        default:  // BYE, REFER or NOTIFY outside a dialog
            statistics.unknownDialogRequests += 1
            respond(key, status: 481)
        }
    }

    /// A request whose To has a tag: it must match a dialog (section 12.2.2).
    private mutating func handleInDialog(_ request: SIPRequest, key: ServerKey) {
        guard let id = dialogID(of: request), let callKey = dialogs[id], let call = calls[callKey],
              var dialog = call.dialog
        else {
            statistics.unknownDialogRequests += 1
            logger.debug("SIP: \(request.method) for an unknown dialog answered 481")
            respond(key, status: 481)
            return
        }
        guard let cseq = try? request.headers.cseq() else { return }
        if call.phase.isEnded {
            // A BYE crossing ours is fine; anything else in an ended dialog is not.
            respond(key, status: request.method == .bye ? 200 : 481)
            return
        }
        if let last = dialog.remoteSequence, cseq.sequence <= last {
            respond(key, status: 500, reason: "CSeq Out of Order")
            return
        }
        dialog.remoteSequence = cseq.sequence
        calls[callKey]!.dialog = dialog

        switch request.method {
        case .bye:
            respond(key, status: 200)
            if call.direction == .incoming, let inviteKey = call.serverKey, let invite = servers[inviteKey],
               !invite.transaction.hasFinalResponse, let inviteRequest = invite.request {
                // BYE on an early dialog: the INVITE ends with 487 (section 15.1.2).
                respond(inviteKey, makeResponse(to: inviteRequest, status: 487, toTag: call.localTag))
            }
            calls[callKey]!.pending2xx = nil
            end(callKey, .hungUp(byRemote: true))
        case .options:
            respond(key, status: 200, extraHeaders: capabilityHeaders)
        case .refer:
            handleREFER(request, key: key, callKey: callKey)
        case .notify:
            handleNOTIFY(request, key: key, callKey: callKey)
        case .update:
            handleUPDATE(request, key: key, callKey: callKey)
        default:  // INVITE
            handleReInvite(request, key: key, callKey: callKey)
        }
    }

    /// A re-INVITE. Bodies are opaque to the SIP layer: a refresh (the same offer as before) is
    /// answered with our last description; a changed offer goes to the configuration's
    /// `answerChangedOffer`, off the lock (``finishReoffer(_:answer:)`` sends its answer), and
    /// without one, or when it declines, gets 488, which leaves the session as it was (section
    /// 14.2). Without an offer, our last description is the offer in the 2xx and the peer's
    /// answer comes with the ACK.
    private mutating func handleReInvite(_ request: SIPRequest, key: ServerKey, callKey: CallKey) {
        guard let call = calls[callKey], var dialog = call.dialog else { return }
        guard call.reofferKey == nil else {
            // Section 14.2: a second INVITE while the first has no final response.
            respond(key, status: 500, toTag: call.localTag, extraHeaders: ["Retry-After": "1"])
            return
        }
        guard call.phase == .established, call.pending2xx == nil, call.reinviteKey == nil else {
            respond(key, status: 491)  // our 2xx is not acknowledged yet, or our own re-INVITE is under way
            return
        }
        guard let local = call.localBody, let cseq = try? request.headers.cseq() else {
            respond(key, status: 488, toTag: call.localTag)
            return
        }
        // The target refresh (section 12.2.2) takes effect only with our 2xx: a re-INVITE we
        // decline changes nothing, not even where our BYE goes.
        let target = request.headers.firstContact?.uri
        if request.body.isEmpty {
            if let target { dialog.remoteTarget = target }
            calls[callKey]!.dialog = dialog
            // No offer (section 14.2): ours is our last description, and the answer comes in the ACK.
            send2xx(callKey, key: key, request: request, body: local, sequence: cseq.sequence, isInitial: false)
            calls[callKey]!.pending2xx?.awaitsAnswer = true
            return
        }
        guard request.body != call.remoteBody?.bytes else {
            if let target { dialog.remoteTarget = target }
            calls[callKey]!.dialog = dialog
            send2xx(callKey, key: key, request: request, body: local, sequence: cseq.sequence, isInitial: false)
            return
        }
        guard env.configuration.answerChangedOffer != nil else {
            respond(key, status: 488, toTag: call.localTag)
            return
        }
        // Answered off the lock: SDP work never holds up other messages.
        calls[callKey]!.reofferKey = key
        let offer = SIPBody(contentType: request.headers.contentType ?? "application/sdp", bytes: request.body)
        pendingReoffers.append(PendingReoffer(callKey: callKey, key: key, request: request, sequence: cseq.sequence,
                                              callID: dialog.id.callID, target: target, offer: offer,
                                              peerPrevious: call.remoteBody, ours: local))
    }

    /// An INVITE outside any dialog: a new incoming call.
    private mutating func handleNewInvite(_ request: SIPRequest, key: ServerKey, source: SIPHop) {
        guard let cseq = try? request.headers.cseq(), let callID = try? request.headers.callID() else { return }
        guard let from = try? request.headers.from(), (try? request.headers.to()) != nil, let fromTag = from.tag else {
            respond(key, status: 400, reason: "Missing From Tag")
            return
        }
        let caller = CallerID(callID: callID, fromTag: fromTag)
        if refusesNewInvite(request, key: key, caller: caller, sequence: cseq.sequence) { return }
        let replaced: CallKey?
        switch replacedCall(by: request) {
        case .success(let key): replaced = key
        case .failure:
            // RFC 3891 section 3: no such dialog (or a value that names none) is 481.
            respond(key, status: 481, reason: "Call/Transaction Does Not Exist")
            return
        }
        let contentType = request.headers.contentType
        let localTag = randomToken()
        guard let dialog = Dialog.uas(request: request, localTag: localTag) else {
            respond(key, status: 400)
            return
        }
        let callKey = nextCallKey
        nextCallKey += 1
        let (stream, continuation) = AsyncStream.makeStream(of: SIPCallEvent.self)
        var call = CallRecord(key: callKey, direction: .incoming, phase: .incoming, peer: source,
                              localHost: env.advertisedHost(toward: source.address),
                              account: accountUser(addressedTo: request.uri), events: continuation)
        call.dialog = dialog
        call.serverKey = key
        call.localTag = localTag
        let offer = request.body.isEmpty ? nil : SIPBody(contentType: contentType ?? "application/sdp", bytes: request.body)
        call.remoteBody = offer
        calls[callKey] = call
        dialogs[dialog.id] = callKey
        callers[caller] = callKey
        servers[key]?.callKey = callKey
        activeCalls += 1
        activeIncomingCalls += 1

        respond(key, makeResponse(to: request, status: 100))
        var info = NewCallInfo(key: callKey, direction: .incoming, callID: callID, remote: dialog.remote,
                               local: dialog.local, offer: offer, remoteAddress: source.address, transport: source.transport,
                               localHost: call.localHost, account: call.account, events: stream, stateBox: call.box)
        info.replacedCallID = replaced.flatMap { calls[$0]?.dialog?.id.callID }
        pendingIncoming.append(info)
        statistics.incomingCalls += 1
        logger.info("SIP: incoming call \(callID) from \(dialog.remote.uri) at \(source)")
    }

    /// Answers an INVITE that cannot start a call (a merged request, a body that is not SDP, a
    /// bad Contact, too many routes, too many calls) and says so.
    private mutating func refusesNewInvite(_ request: SIPRequest, key: ServerKey, caller: CallerID, sequence: UInt32) -> Bool {
        // Merged requests (section 8.2.2.2): the same INVITE by another path.
        if let existing = callers[caller], calls[existing]?.dialog?.remoteSequence == sequence {
            respond(key, status: 482)
            return true
        }
        if !request.body.isEmpty, request.headers.contentType != "application/sdp" {
            respond(key, status: 415, extraHeaders: ["Accept": "application/sdp"])
            return true
        }
        // Counted before parsed: one Contact, and a route set the dialog can keep for the call's life.
        guard request.headers.valueCount("Contact", limit: 1) == 1, request.headers.firstContact != nil else {
            respond(key, status: 400, reason: "Bad Contact")
            return true
        }
        if let (seconds, _) = request.headers.sessionExpires(), seconds < timers.minimumSessionSeconds {
            respond(key, status: 422, reason: "Session Interval Too Small", extraHeaders: ["Min-SE": String(timers.minimumSessionSeconds)])
            return true
        }
        guard routeSetFits(request.headers) else {
            respond(key, status: 400, reason: "Too Many Routes")
            return true
        }
        if let limit = env.configuration.maximumCalls, activeCalls >= limit {
            respond(key, status: 486)
            return true
        }
        if activeIncomingCalls >= limits.maximumIncomingCalls {
            statistics.stateLimitDropped += 1
            respond(key, status: 486)
            return true
        }
        return false
    }

    /// CANCEL (section 9.2): 200 for the CANCEL, 487 for the INVITE if it has no final response yet.
    private mutating func handleCANCEL(_ request: SIPRequest, key: ServerKey) {
        let inviteKey = ServerKey(branch: key.branch, sentBy: key.sentBy, method: .invite)
        guard let invite = servers[inviteKey] else {
            statistics.unknownDialogRequests += 1
            respond(key, status: 481)
            return
        }
        let callKey = invite.callKey
        let tag = callKey.flatMap { calls[$0]?.localTag }
        respond(key, status: 200, toTag: tag)
        guard !invite.transaction.hasFinalResponse, let inviteRequest = invite.request else { return }
        respond(inviteKey, makeResponse(to: inviteRequest, status: 487, toTag: tag ?? randomToken()))
        if let callKey { end(callKey, .cancelled(byRemote: true)) }
    }

    /// ACK: for a non-2xx final response it belongs to the INVITE's server transaction; for a
    /// 2xx it is an in-dialog request that stops the 2xx retransmissions (section 13.3.1.4).
    private mutating func handleACK(_ request: SIPRequest, key: ServerKey) {
        if let record = servers[key], record.transaction.state == .completed || record.transaction.state == .confirmed {
            runServer(key, servers[key]!.transaction.receiveACK())
            return
        }
        guard let id = dialogID(of: request), let callKey = dialogs[id], let call = calls[callKey] else {
            statistics.unknownDialogRequests += 1
            logger.debug("SIP: dropped an ACK for an unknown dialog")
            return
        }
        guard let cseq = try? request.headers.cseq() else { return }
        guard let pending = call.pending2xx, pending.sequence == cseq.sequence else {
            statistics.retransmissionsAbsorbed += 1
            return
        }
        calls[callKey]!.pending2xx = nil
        defer { sendQueuedReinvite(callKey) }  // ours may have waited for this transaction to end
        guard pending.isInitial else {
            // The answer to the offer our 2xx made for a re-INVITE without one.
            guard pending.awaitsAnswer, !request.body.isEmpty else { return }
            let answer = SIPBody(contentType: request.headers.contentType ?? "application/sdp", bytes: request.body)
            guard answer.bytes != call.remoteBody?.bytes else { return }
            calls[callKey]!.remoteBody = answer
            call.events.yield(.reoffered(answer))
            return
        }
        var answer: SIPBody?
        if !request.body.isEmpty {
            answer = SIPBody(contentType: request.headers.contentType ?? "application/sdp", bytes: request.body)
            calls[callKey]!.remoteBody = answer
        }
        if call.phase == .connecting {
            calls[callKey]!.setPhase(.established)
            call.events.yield(.confirmed(answer))
        }
        if call.byeWhenACKed { sendBYE(callKey) }
    }

    /// Sends a 2xx to an INVITE and retransmits it until its ACK (section 13.3.1.4).
    mutating func send2xx(_ callKey: CallKey, key: ServerKey, request: SIPRequest, body: SIPBody?,
                          sequence: UInt32, isInitial: Bool) {
        guard let call = calls[callKey] else { return }
        var response = makeResponse(to: request, status: 200, toTag: call.localTag)
        response.headers.add("Contact", "<\(contactURI(user: call.account, localHost: call.localHost, transport: call.peer.transport))>")
        for field in capabilityHeaders { response.headers.add(field) }
        // A session timer the INVITE asked for, or the one running when a re-INVITE refreshes it.
        if let timer = sessionTimer(requestedBy: request) ?? (isInitial ? nil : call.sessionTimer) {
            for field in sessionTimerResponseHeaders(timer, request: request) { response.headers.add(field) }
            startSessionTimer(callKey, timer)
        }
        if let body {
            response.headers.add("Content-Type", body.contentType)
            response.body = body.bytes
        }
        guard let bytes = respond(key, response), let record = servers[key] else { return }
        // The retransmissions, and the BYE that a missing ACK sends, share the reflection budget.
        let reserve = oneShotBYE(callKey)?.0.count ?? 0
        calls[callKey]!.pending2xx = Pending2xx(bytes: bytes, destination: record.destination, sequence: sequence,
                                                interval: timers.t1, isInitial: isInitial,
                                                budget: record.transaction.reflectionBudget - reserve)
        schedule(timers.t1, .call(callKey, .retransmit2xx(sequence)))
        schedule(timers.transactionTimeout, .call(callKey, .ackTimeout(sequence)))
    }

    /// The dialog a request addresses, seen from our side.
    func dialogID(of request: SIPRequest) -> DialogID? {
        guard let callID = try? request.headers.callID(), let toTag = try? request.headers.to().tag else { return nil }
        let fromTag = (try? request.headers.from().tag) ?? nil
        return DialogID(callID: callID, localTag: toTag, remoteTag: fromTag ?? "")
    }
}
