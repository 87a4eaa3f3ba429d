import Platform
import Logging

// What the application does to a call (the `SIPCall` methods), the core's call timers,
// ending calls, and closing the user agent.

extension CoreState {
    mutating func ringing(_ callKey: CallKey) -> Result<Void, SIPError> {
        guard !closed else { return .failure(.closed) }
        guard let (call, key, request) = unansweredIncoming(callKey) else { return .failure(invalidState(callKey)) }
        var response = makeResponse(to: request, status: 180, toTag: call.localTag)
        response.headers.add("Contact", "<\(contactURI(user: call.account, localHost: call.localHost, transport: call.peer.transport))>")
        respond(key, response)
        calls[callKey]!.setPhase(.ringing)
        return .success(())
    }

    mutating func accept(_ callKey: CallKey, answer: SIPBody) -> Result<Void, SIPError> {
        guard !closed else { return .failure(.closed) }
        guard let (_, key, request) = unansweredIncoming(callKey) else { return .failure(invalidState(callKey)) }
        calls[callKey]!.localBody = answer
        calls[callKey]!.setPhase(.connecting)
        let cseq = (try? request.headers.cseq().sequence) ?? 0
        send2xx(callKey, key: key, request: request, body: answer, sequence: cseq, isInitial: true)
        return .success(())
    }

    mutating func reject(_ callKey: CallKey, status: Int, reason: String?) -> Result<Void, SIPError> {
        guard (300...699).contains(status) else { return .failure(.invalidStatus(status)) }
        guard !closed else { return .failure(.closed) }
        guard let (call, key, request) = unansweredIncoming(callKey) else { return .failure(invalidState(callKey)) }
        respond(key, makeResponse(to: request, status: status, reason: reason, toTag: call.localTag))
        end(callKey, .rejected(status: status))
        return .success(())
    }

    mutating func cancel(_ callKey: CallKey) -> Result<Void, SIPError> {
        guard !closed else { return .failure(.closed) }
        guard let call = calls[callKey], call.direction == .outgoing,
              call.phase == .calling || call.phase == .ringing, !call.cancelRequested
        else { return .failure(invalidState(callKey)) }
        calls[callKey]!.cancelRequested = true
        // A CANCEL may only follow a provisional response (section 9.1); else it goes when one comes.
        if call.sawProvisional { sendCANCEL(callKey) }
        return .success(())
    }

    mutating func bye(_ callKey: CallKey) -> Result<Void, SIPError> {
        guard !closed else { return .failure(.closed) }
        guard let call = calls[callKey] else { return .failure(invalidState(callKey)) }
        switch call.phase {
        case .established:
            sendBYE(callKey)
        case .connecting:
            calls[callKey]!.byeWhenACKed = true  // a callee waits for the ACK (section 15)
        default:
            return .failure(.invalidState(call.phase))
        }
        end(callKey, .hungUp(byRemote: false))
        return .success(())
    }

    mutating func hangUp(_ callKey: CallKey) {
        guard let call = calls[callKey] else { return }
        switch (call.direction, call.phase) {
        case (_, .ended):
            return
        case (_, .established), (_, .connecting):
            _ = bye(callKey)
        case (.outgoing, _):
            _ = cancel(callKey)
        case (.incoming, _):
            _ = reject(callKey, status: 603, reason: nil)
        }
    }

    /// An incoming call whose INVITE has no final response yet, with its transaction and request.
    private func unansweredIncoming(_ callKey: CallKey) -> (CallRecord, ServerKey, SIPRequest)? {
        guard let call = calls[callKey], call.direction == .incoming,
              call.phase == .incoming || call.phase == .ringing,
              let key = call.serverKey, let record = servers[key], !record.transaction.hasFinalResponse,
              let request = record.request
        else { return nil }
        return (call, key, request)
    }

    private func invalidState(_ callKey: CallKey) -> SIPError {
        .invalidState(calls[callKey]?.phase ?? .ended(.shutdown))
    }

    /// Ends a call: the last event, then the record stays 64 × T1 to absorb late messages.
    mutating func end(_ callKey: CallKey, _ reason: SIPCallEndReason) {
        guard let call = calls[callKey], !call.phase.isEnded else { return }
        calls[callKey]!.setPhase(.ended(reason))
        call.events.yield(.ended(reason))
        call.events.finish()
        activeCalls -= 1
        if call.direction == .incoming { activeIncomingCalls -= 1 }
        schedule(timers.transactionTimeout, .call(callKey, .linger))
        endedCalls.append(callKey)
        while calls.count - activeCalls > limits.maximumEndedCalls, let oldest = endedCalls.popFirst() {
            guard oldest != callKey, calls[oldest]?.phase.isEnded == true else { continue }  // callers still use this one
            forget(oldest)
            statistics.endedCallsEvicted += 1
        }
        if endedCalls.count > 2 * limits.maximumEndedCalls { endedCalls.compact { calls[$0] != nil } }
        logger.info("SIP: call \(call.dialog?.id.callID ?? "?") ended: \(reason)")
    }

    mutating func callTimerFired(_ callKey: CallKey, _ timer: CallTimer) {
        guard let call = calls[callKey] else { return }
        switch timer {
        case .retransmit2xx(let sequence):
            guard var pending = call.pending2xx, pending.sequence == sequence, pending.bytes.count <= pending.budget
            else { return }
            pending.budget -= pending.bytes.count
            send(pending.bytes, to: pending.destination, retransmission: true)
            pending.interval = min(pending.interval * 2, timers.t2)
            calls[callKey]!.pending2xx = pending
            schedule(pending.interval, .call(callKey, .retransmit2xx(sequence)))
        case .ackTimeout(let sequence):
            guard let pending = call.pending2xx, pending.sequence == sequence else { return }
            // No ACK: the dialog is confirmed but the session ends with a BYE (section 13.3.1.4).
            calls[callKey]!.pending2xx = nil
            logger.warning("SIP: no ACK for the 2xx of call \(call.dialog?.id.callID ?? "?"); sending BYE")
            if pending.budget >= 0 { sendBYEOnce(callKey) }  // its size was kept out of the budget
            end(callKey, .failed(status: 408, reason: "No ACK"))
        case .cancelTimeout:
            guard !call.phase.isEnded else { return }
            if let inviteKey = call.inviteKey { clients[inviteKey] = nil }
            end(callKey, .cancelled(byRemote: false))
        case .retryReinvite:
            retryReinvite(callKey)
        case .linger:
            forget(callKey)
        case .sessionRefresh(let generation):
            sessionTimerFired(callKey, refresh: true, generation: generation)
        case .sessionExpiry(let generation):
            sessionTimerFired(callKey, refresh: false, generation: generation)
        case .ringTimeout:
            // Timer B stops at the first provisional and Timer C is a proxy's: without this, a
            // callee that rings for ever (or a server that only said 100) holds the call for ever.
            guard call.direction == .outgoing, call.phase == .calling || call.phase == .ringing else { return }
            if !call.cancelSent { sendCANCEL(callKey) }
            end(callKey, .failed(status: 408, reason: "Ring Timeout"))
        }
    }

    /// Removes an ended call and what finds it.
    private mutating func forget(_ callKey: CallKey) {
        guard let call = calls.removeValue(forKey: callKey), let dialog = call.dialog else { return }
        if dialogs[dialog.id] == callKey { dialogs[dialog.id] = nil }
        let caller = CallerID(callID: dialog.id.callID, fromTag: dialog.id.remoteTag)
        if callers[caller] == callKey { callers[caller] = nil }
    }

    /// Ends every call with one best-effort message, fails waiting OPTIONS, stops everything.
    mutating func shutdown() {
        for key in calls.keys.sorted() {
            guard let call = calls[key], !call.phase.isEnded else { continue }
            switch (call.direction, call.phase) {
            case (_, .established):
                sendBYE(key)
            case (.outgoing, _):
                if call.sawProvisional { sendCANCEL(key) }
            case (.incoming, .connecting):
                break  // no ACK yet: a BYE must wait for it; the peer times out
            case (.incoming, _):
                if let (c, k, r) = unansweredIncoming(key) {
                    respond(k, makeResponse(to: r, status: 480, toTag: c.localTag))
                }
            }
            end(key, .shutdown)
        }
        for waiter in optionsWaiters.values { waiter.resume(returning: .failure(.closed)) }
        optionsWaiters.removeAll()
        unregisterOnShutdown()
        closed = true
        pendingTimers.removeAll()
        env.incoming.finish()
        for account in accounts.values { account.states.finish() }
    }
}
