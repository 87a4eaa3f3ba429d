import Logging
import SIP

/// Call transfer (RFC 3515 REFER, RFC 3891 Replaces) in the three roles: the transferor (the
/// app's `Call.transfer(to:)`), the transferee (a peer's REFER: we call its target and report how it
/// goes) and the target of an attended transfer (an INVITE that replaces one of our calls).
extension CallController {
    // MARK: Transferor

    /// Blind transfer: asks the peer of `call` to call `target`; returns once the peer reports
    /// that call connected (and ours is hung up), throws if it did not.
    func transfer(_ call: Call, to target: String) async throws(CallError) {
        guard let uri = SIPURI(target) else { throw .invalidTarget(target) }
        try await transfer(call, referring: uri, replacing: nil)
    }

    /// Attended transfer: asks the peer of `call` to call the peer of `other` in its place (a
    /// REFER whose `Refer-To` carries `Replaces` for `other`'s dialog). The target ends `other`
    /// when the transferee's INVITE replaces it.
    func transfer(_ call: Call, to other: Call) async throws(CallError) {
        guard call.id != other.id, let sip = records[other.id]?.sip, let replaces = sip.replaces else {
            throw .invalidState("an attended transfer needs another established SIP call (\(other.state))")
        }
        // The target's address as its side of the dialog gives it (To or From), without parameters.
        var uri = sip.remote.uri
        uri.parameters = SIPParameters()
        try await transfer(call, referring: uri, replacing: replaces)
    }

    private func transfer(_ call: Call, referring uri: SIPURI, replacing: SIPReplaces?) async throws(CallError) {
        guard let record = records[call.id], call.state == .active || call.state.isHeld else {
            throw .invalidState("only an active or held call can be transferred (\(call.state))")
        }
        guard record.transferOutcome == nil else { throw .invalidState("a transfer of this call is in progress") }
        guard let sip = record.sip else { throw .invalidState("a conference room leg cannot be transferred") }
        do { try sip.refer(to: uri, replacing: replacing) } catch { throw .signalling("REFER: \(error)") }
        let (outcome, continuation) = AsyncStream.makeStream(of: Result<Void, CallError>.self)
        records[call.id]?.transferOutcome = continuation
        logger.info("call \(call.id): transferring to \(uri)\(replacing == nil ? "" : " (attended)")")
        for await result in outcome { try result.get() }
    }

    /// The peer's report on the call we asked it to place: a final success ends ours.
    func referProgress(_ id: String, status: Int, reason: String, final: Bool) {
        guard final, let record = records[id] else { return }
        if (200..<300).contains(status) {
            finishTransfer(id, .success(()))
            try? record.sip?.bye()
            end(id, .transferred)
        } else {
            finishTransfer(id, .failure(.transferFailed(status: status, reason: reason)))
        }
    }

    /// Tells whoever waits on the transfer of call `id` how it ended.
    func finishTransfer(_ id: String, _ result: Result<Void, CallError>) {
        guard let outcome = records[id]?.transferOutcome else { return }
        outcome.yield(result)
        outcome.finish()
        records[id]?.transferOutcome = nil
    }

    // MARK: Transferee

    /// The peer of `call` asks us to call someone: we do (unless ``CallConfiguration/acceptsTransfers``
    /// is off), and report the new call's progress to it.
    func referred(_ referral: SIPReferral, on call: Call) {
        guard let record = records[call.id] else { return }
        guard configuration.acceptsTransfers else {
            try? record.sip?.notifyReferral(status: 603, reason: "Decline")
            return
        }
        do {
            let placed = try dial(referral.target, replaces: referral.replaces)
            records[placed.id]?.referredBy = call.id
            logger.info("call \(call.id): transferred by the peer to \(referral.target): call \(placed.id)")
            eventBroadcast.yield(.transferred(from: call.id, to: placed))
        } catch {
            logger.notice("call \(call.id): cannot follow the peer's transfer to \(referral.target): \(error)")
            let (status, reason) = error == .busy ? (486, "Busy Here") : (503, "Service Unavailable")
            try? record.sip?.notifyReferral(status: status, reason: reason)
        }
    }

    /// A call placed for a referral moved on: the referring peer hears it (180, then 200 or the failure).
    func reportToReferrer(_ event: SIPCallEvent, _ call: Call) {
        guard let referrer = records[call.id]?.referredBy, let sip = records[referrer]?.sip else { return }
        switch event {
        case .ringing:
            try? sip.notifyReferral(status: 180, reason: "Ringing")
        case .answered:
            try? sip.notifyReferral(status: 200, reason: "OK")
            records[call.id]?.referredBy = nil
        case let .ended(reason):
            let (status, phrase) = switch reason {
            case let .failed(status, phrase): (status, phrase)
            case .cancelled: (487, "Request Terminated")
            default: (500, "Server Internal Error")
            }
            try? sip.notifyReferral(status: status, reason: phrase)
        default:
            break
        }
    }

    // MARK: Target

    /// An INVITE that names call `id` in its `Replaces`: `call` is answered in its place, and
    /// call `id` ends with a BYE (RFC 3891 section 3).
    func takeOver(_ id: String, by call: Call) async {
        guard let replaced = records[id] else { return }
        try? replaced.sip?.bye()
        end(id, .replaced)
        do {
            try await answer(call)
            logger.info("call \(call.id) replaced call \(id)")
            eventBroadcast.yield(.replaced(callID: id, by: call))
        } catch {
            logger.error("call \(call.id): cannot answer in place of call \(id): \(error)")
        }
    }
}
