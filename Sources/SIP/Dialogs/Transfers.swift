import Platform
import Logging

// Call transfer in an established dialog: REFER and the NOTIFYs that report on it (RFC 3515),
// in both roles, and the dialog an INVITE with `Replaces` takes over (RFC 3891).

extension CoreState {
    // MARK: Transferor: our REFER, the peer's NOTIFYs

    /// `SIPCall.refer(to:replacing:)`: asks the peer to call `referral.target` (REFER with
    /// `Refer-To` and `Referred-By`). One REFER at a time per call.
    mutating func refer(_ callKey: CallKey, _ referral: SIPReferral) -> Result<Void, SIPError> {
        guard !closed else { return .failure(.closed) }
        guard let call = calls[callKey], call.phase == .established, var dialog = call.dialog else {
            return .failure(.invalidState(calls[callKey]?.phase ?? .ended(.shutdown)))
        }
        guard call.referKey == nil, !call.referSubscribed else { return .failure(.tooManyRequests) }
        var request = dialog.makeRequest(.refer)
        let hop = destination(of: dialog, fallback: call.peer)
        request.headers.prepend("Via", makeVia(localHost: call.localHost, transport: hop.transport))
        request.headers.add("Contact", "<\(contactURI(user: call.account, localHost: call.localHost, transport: hop.transport))>")
        request.headers.add("Refer-To", referral.referTo)
        var referredBy = dialog.local
        referredBy.parameters = SIPParameters()
        request.headers.add("Referred-By", referredBy.description)
        request.headers.add("User-Agent", env.configuration.userAgent)
        calls[callKey]!.dialog = dialog
        calls[callKey]!.referKey = startClient(request, to: hop, owner: .refer(callKey))
        logger.info("SIP: call \(dialog.id.callID): REFER to \(referral.target) sent")
        return .success(())
    }

    /// A final response to our REFER: 2xx opens the subscription its NOTIFYs report on.
    mutating func referResponse(_ response: SIPResponse, callKey: CallKey) {
        guard response.statusCode >= 200, let call = calls[callKey] else { return }
        calls[callKey]!.referKey = nil
        if response.statusCode < 300 {
            calls[callKey]!.referSubscribed = true
        } else {
            call.events.yield(.referDeclined(status: response.statusCode, reason: response.reasonPhrase))
        }
    }

    mutating func referTimedOut(callKey: CallKey) {
        guard let call = calls[callKey] else { return }
        calls[callKey]!.referKey = nil
        call.events.yield(.referDeclined(status: 408, reason: "Request Timeout"))
    }

    /// A NOTIFY in a dialog: the progress of our REFER, as a sipfrag status line. Anything
    /// else (another event package, no REFER of ours, a body that is not a status line) is
    /// refused and changes nothing.
    mutating func handleNOTIFY(_ request: SIPRequest, key: ServerKey, callKey: CallKey) {
        guard let call = calls[callKey] else { return }
        // `refer`, perhaps with an `;id=` parameter.
        let event = request.headers["Event"].map { String(($0.split(separator: ";").first ?? "").trimmed).asciiLowercased }
        guard event == "refer" else {
            respond(key, status: 489, reason: "Bad Event")
            return
        }
        guard call.referSubscribed || call.referKey != nil else {
            statistics.unknownDialogRequests += 1
            respond(key, status: 481, reason: "Subscription Does Not Exist")
            return
        }
        guard let (status, reason) = sipfragStatus(request.body) else {
            statistics.malformedDropped += 1
            respond(key, status: 400, reason: "Bad sipfrag")
            return
        }
        let terminated = request.headers["Subscription-State"]?.lowercased().hasPrefix("terminated") ?? false
        let final = status >= 200 || terminated
        respond(key, status: 200)
        if final { calls[callKey]!.referSubscribed = false }
        call.events.yield(.referProgress(status: status, reason: reason, final: final))
    }

    // MARK: Transferee: the peer's REFER, our NOTIFYs

    /// A REFER in an established dialog: 202, a first NOTIFY (100 Trying), and the referral to
    /// the call's owner, who calls the target and reports with `notifyReferral`. One at a time.
    mutating func handleREFER(_ request: SIPRequest, key: ServerKey, callKey: CallKey) {
        guard let call = calls[callKey] else { return }
        guard call.phase == .established else {
            respond(key, status: 403, reason: "Call Not Established")
            return
        }
        guard let referTo = (try? request.headers.values("Refer-To"))?.only,
              let referral = SIPReferral(referTo: referTo, referredBy: request.headers["Referred-By"])
        else {
            statistics.malformedDropped += 1
            respond(key, status: 400, reason: "Bad Refer-To")
            return
        }
        guard !call.referralActive else {
            respond(key, status: 491)
            return
        }
        respond(key, status: 202, reason: "Accepted")
        calls[callKey]!.referralActive = true
        sendNOTIFY(callKey, status: 100, reason: "Trying")
        logger.info("SIP: call \(call.dialog?.id.callID ?? ""): the peer refers us to \(referral.target)")
        call.events.yield(.referred(referral))
    }

    /// `SIPCall.notifyReferral(status:reason:)`: the progress of the call the peer referred us
    /// to; a final status (200 and up) ends the subscription.
    mutating func notifyReferral(_ callKey: CallKey, status: Int, reason: String) -> Result<Void, SIPError> {
        guard !closed else { return .failure(.closed) }
        guard let call = calls[callKey], call.referralActive, call.phase == .established else {
            return .failure(.invalidState(calls[callKey]?.phase ?? .ended(.shutdown)))
        }
        guard (100...699).contains(status), !reason.contains(where: \.isNewline) else { return .failure(.invalidStatus(status)) }
        sendNOTIFY(callKey, status: status, reason: reason)
        if status >= 200 { calls[callKey]!.referralActive = false }
        return .success(())
    }

    private mutating func sendNOTIFY(_ callKey: CallKey, status: Int, reason: String) {
        guard let call = calls[callKey], var dialog = call.dialog else { return }
        var request = dialog.makeRequest(.notify)
        let hop = destination(of: dialog, fallback: call.peer)
        request.headers.prepend("Via", makeVia(localHost: call.localHost, transport: hop.transport))
        request.headers.add("Contact", "<\(contactURI(user: call.account, localHost: call.localHost, transport: hop.transport))>")
        request.headers.add("Event", "refer")
        request.headers.add("Subscription-State", status >= 200 ? "terminated;reason=noresource" : "active;expires=60")
        request.headers.add("User-Agent", env.configuration.userAgent)
        request.headers.add("Content-Type", "message/sipfrag;version=2.0")
        request.body = Array("SIP/2.0 \(status) \(reason)\r\n".utf8)
        calls[callKey]!.dialog = dialog
        _ = startClient(request, to: hop, owner: .notify(callKey))
    }

    // MARK: Target: an INVITE that replaces a dialog

    /// The call an INVITE's `Replaces` names, if it has one: an established call of ours whose
    /// local tag is the `to-tag` and remote tag the `from-tag`. A `Replaces` that names none,
    /// or does not parse, is a failure (481 and 400).
    func replacedCall(by request: SIPRequest) -> Result<CallKey?, SIPError> {
        guard let text = request.headers["Replaces"] else { return .success(nil) }
        guard let replaces = SIPReplaces(parsing: text) else { return .failure(.invalidStatus(400)) }
        let id = DialogID(callID: replaces.callID, localTag: replaces.toTag, remoteTag: replaces.fromTag)
        guard let callKey = dialogs[id], let call = calls[callKey], !call.phase.isEnded,
              !replaces.earlyOnly || call.phase != .established else { return .failure(.invalidStatus(481)) }
        return .success(callKey)
    }
}

private extension Array {
    /// The only element, if there is exactly one.
    var only: Element? { count == 1 ? first : nil }
}
