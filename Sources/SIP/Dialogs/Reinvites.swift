import Platform
import Logging

// Our re-INVITEs (RFC 3261 section 14.1): a new offer in an established dialog, one INVITE
// transaction at a time in either direction, 491 Request Pending retried after a random wait;
// and the answer to the peer's changed offer, which the application computes off the lock.

extension CoreState {
    /// `SIPCall.reinvite(offer:)`: sends the offer now, or queues it behind the INVITE
    /// transaction in progress (an answered incoming call's own INVITE until its ACK, too).
    mutating func reinvite(_ callKey: CallKey, offer: SIPBody) -> Result<Void, SIPError> {
        guard !closed else { return .failure(.closed) }
        guard let call = calls[callKey], call.phase == .established || call.phase == .connecting, call.dialog != nil else {
            return .failure(.invalidState(calls[callKey]?.phase ?? .ended(.shutdown)))
        }
        calls[callKey]!.queuedOffer = offer
        calls[callKey]!.requestPendingCount = 0
        sendQueuedReinvite(callKey)
        return .success(())
    }

    /// Sends the queued offer if no INVITE transaction of the dialog is in progress: neither our
    /// re-INVITE, nor the peer's re-INVITE being answered or its INVITE waiting for its ACK, nor
    /// a wait after a 491.
    mutating func sendQueuedReinvite(_ callKey: CallKey) {
        guard let call = calls[callKey], call.phase == .established, let offer = call.queuedOffer,
              call.reinviteKey == nil, call.pending2xx == nil, call.reofferKey == nil, !call.retryScheduled,
              var dialog = call.dialog
        else { return }
        var request = dialog.makeRequest(.invite)
        request.headers.prepend("Via", makeVia(localHost: call.localHost, transport: call.peer.transport))
        request.headers.add("Contact", "<\(contactURI(user: call.account, localHost: call.localHost, transport: call.peer.transport))>")
        request.headers.add("Allow", allowHeaderValue)
        if call.sessionTimer != nil {
            for field in sessionTimerRequestHeaders(call.sessionTimer) { request.headers.add(field) }
        }
        request.headers.add("User-Agent", env.configuration.userAgent)
        request.headers.add("Content-Type", offer.contentType)
        request.body = offer.bytes
        calls[callKey]!.dialog = dialog
        calls[callKey]!.queuedOffer = nil
        calls[callKey]!.reinviteOffer = offer
        calls[callKey]!.reinviteKey = startClient(request, to: destination(of: dialog, fallback: call.peer),
                                                  owner: .reinvite(callKey))
        logger.info("SIP: call \(dialog.id.callID): re-INVITE sent")
    }

    /// A response to our re-INVITE (or a retransmitted 2xx after it completed).
    mutating func reinviteResponse(_ response: SIPResponse, callKey: CallKey, key: ClientKey) {
        guard let call = calls[callKey], !call.phase.isEnded, var dialog = call.dialog,
              let cseq = try? response.headers.cseq() else { return }
        let status = response.statusCode
        guard status >= 200 else { return }
        if status < 300 {
            if let ack = call.reinviteACK, ack.sequence == cseq.sequence {
                // A retransmitted 2xx: the ACK again (section 13.2.2.4).
                statistics.retransmissionsAbsorbed += 1
                send(ack.bytes, to: destination(of: dialog, fallback: call.peer), retransmission: true)
                return
            }
            guard call.reinviteKey == key else { return }
            // A 2xx refreshes the remote target (section 12.2.1.2).
            if let target = response.headers.firstContact?.uri { dialog.remoteTarget = target }
            var ack = dialog.makeRequest(.ack, sequence: cseq.sequence)
            ack.headers.prepend("Via", makeVia(localHost: call.localHost, transport: call.peer.transport))
            ack.headers.add("User-Agent", env.configuration.userAgent)
            let bytes = ack.serialized()
            send(bytes, to: destination(of: dialog, fallback: call.peer))
            let answer = response.body.isEmpty ? nil
                : SIPBody(contentType: response.headers.contentType ?? "application/sdp", bytes: response.body)
            calls[callKey]!.dialog = dialog
            calls[callKey]!.reinviteACK = (cseq.sequence, bytes)
            calls[callKey]!.localBody = call.reinviteOffer
            if let answer { calls[callKey]!.remoteBody = answer }
            if var timer = call.sessionTimer {  // refreshed
                if let (seconds, refresher) = response.headers.sessionExpires() {
                    timer.interval = min(max(seconds, timers.minimumSessionSeconds), maximumSessionInterval)
                    timer.weRefresh = refresher != "uas"
                }
                startSessionTimer(callKey, timer)
            }
            finishReinvite(callKey)
            call.events.yield(.reinviteAnswered(answer))
            logger.info("SIP: call \(dialog.id.callID): re-INVITE answered")
            sendQueuedReinvite(callKey)
            return
        }
        guard call.reinviteKey == key else { return }
        let offer = call.reinviteOffer
        finishReinvite(callKey)
        switch status {
        case 491 where call.requestPendingCount < 2:
            // Both sides re-INVITEd at once: try again after a random wait, 2.1 to 4 s for the
            // side that owns the Call-ID (the caller), 0 to 2 s for the other (section 14.1).
            calls[callKey]!.requestPendingCount += 1
            if calls[callKey]!.queuedOffer == nil { calls[callKey]!.queuedOffer = offer }
            calls[callKey]!.retryScheduled = true
            let t1 = Double(timers.t1.nanoseconds) / 1e9
            let wait = call.direction == .outgoing ? Double.random(in: 4.2 * t1...8 * t1) : Double.random(in: 0...4 * t1)
            schedule(.nanoseconds(Int(wait * 1e9)), .call(callKey, .retryReinvite))
        case 408, 481:
            // The dialog is gone (481) or the peer unreachable (408): end the call (section 14.1).
            if status == 408 { sendBYE(callKey) }
            end(callKey, .failed(status: status, reason: response.reasonPhrase))
        default:
            call.events.yield(.reinviteDeclined(status: status, reason: response.reasonPhrase))
            logger.info("SIP: call \(dialog.id.callID): re-INVITE declined with \(status) \(response.reasonPhrase)")
            sendQueuedReinvite(callKey)
        }
    }

    /// Our re-INVITE got no final response: the peer is gone, so the call ends with a BYE.
    mutating func reinviteTimedOut(callKey: CallKey, key: ClientKey) {
        guard let call = calls[callKey], call.reinviteKey == key else { return }
        finishReinvite(callKey)
        sendBYE(callKey)
        end(callKey, .failed(status: 408, reason: "Request Timeout"))
    }

    /// The wait after a 491 is over.
    mutating func retryReinvite(_ callKey: CallKey) {
        guard calls[callKey] != nil else { return }
        calls[callKey]!.retryScheduled = false
        sendQueuedReinvite(callKey)
    }

    private mutating func finishReinvite(_ callKey: CallKey) {
        calls[callKey]!.reinviteKey = nil
        calls[callKey]!.reinviteOffer = nil
    }

    /// The application's answer to a changed offer (nil: declined), computed off the lock: a 2xx
    /// with it and `.reoffered`, or 488. A call that ended meanwhile gets 481.
    mutating func finishReoffer(_ reoffer: PendingReoffer, answer: SIPBody?) {
        guard let call = calls[reoffer.callKey], call.reofferKey == reoffer.key else { return }
        calls[reoffer.callKey]!.reofferKey = nil
        defer { sendQueuedReinvite(reoffer.callKey) }  // ours may have waited for this one
        guard call.phase == .established else {
            respond(reoffer.key, status: 481, toTag: call.localTag)
            return
        }
        guard let answer else {
            respond(reoffer.key, status: 488, toTag: call.localTag)
            return
        }
        if let target = reoffer.target { calls[reoffer.callKey]!.dialog?.remoteTarget = target }
        calls[reoffer.callKey]!.remoteBody = reoffer.offer
        calls[reoffer.callKey]!.localBody = answer
        send2xx(reoffer.callKey, key: reoffer.key, request: reoffer.request, body: answer, sequence: reoffer.sequence,
                isInitial: false)
        logger.info("SIP: call \(reoffer.callID): the peer changed the session (re-INVITE)")
        call.events.yield(.reoffered(reoffer.offer))
    }
}
