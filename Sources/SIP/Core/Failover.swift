import Logging
import Platform

// Failover between the servers DNS gave for a target (RFC 3263 section 4.3): a request that
// times out, or gets 503 before any provisional response, goes to the next server in a new
// transaction. Only the servers the user's own configuration named are tried (the registrar,
// the outbound proxy, a call's target), never names a peer sent.

extension CoreState {
    /// Sends the call's INVITE to its next server, if it has one and nothing answered yet
    /// (no provisional: a server that rang has the call). Returns whether it did.
    mutating func failOverInvite(_ callKey: CallKey) -> Bool {
        guard let call = calls[callKey], !call.sawProvisional, !call.cancelRequested, !call.phase.isEnded,
              let next = call.alternates.first
        else { return false }
        logger.info("SIP: \(call.peer) did not take the INVITE; trying \(next)")
        calls[callKey]!.alternates.removeFirst()
        calls[callKey]!.peer = next
        let contact = "<\(contactURI(user: call.account, localHost: call.localHost, transport: next.transport))>"
        return resendInvite(callKey) { $0.set("Contact", contact) }
    }

    /// Sends the call's INVITE again in a new client transaction to its (current) peer: a new
    /// top Via, the next CSeq, and whatever `adjust` changes; the old transaction is dropped.
    /// Shared by failover and the 422 retry.
    mutating func resendInvite(_ callKey: CallKey, adjust: (inout SIPHeaders) -> Void) -> Bool {
        guard var call = calls[callKey], var invite = call.invite, let cseq = try? invite.headers.cseq() else { return false }
        if let old = call.inviteKey { clients[old] = nil }
        invite.headers.replaceTopVia(with: makeVia(localHost: call.localHost, transport: call.peer.transport))
        invite.headers.set("CSeq", "\(cseq.sequence &+ 1) INVITE")
        adjust(&invite.headers)
        call.invite = invite
        calls[callKey] = call
        calls[callKey]!.inviteKey = startClient(invite, to: call.peer, owner: .invite(callKey))
        return true
    }

    /// A connection we opened failed before it was open (refused, a TLS handshake that failed):
    /// the requests that were waiting for it fail now as a 503 would (RFC 3261 section 8.1.3.1),
    /// going on to the next server where there is one, instead of waiting for Timer B or F.
    mutating func transportFailed(_ hop: SIPHop) {
        let waiting = clients.filter { _, record in
            record.destination.transport == hop.transport && record.destination.address == hop.address
                && [.calling, .trying].contains(record.transaction.state)
        }
        for (key, record) in waiting {
            clients[key] = nil
            switch record.owner {
            case .invite(let callKey):
                if !failOverInvite(callKey) { end(callKey, .failed(status: 503, reason: "Service Unavailable")) }
            case .register(let user):
                if accounts[user]?.registration?.key == key, !failOverRegistration(user: user) {
                    registerFailed(.rejected(status: 503, reason: "Service Unavailable (cannot reach \(hop))"), key: key, user: user)
                }
            default:
                clientTimedOut(owner: record.owner, key: key)
            }
        }
    }

    /// Sends the REGISTER in progress to the registrar's next server, if it has one.
    mutating func failOverRegistration(user: String) -> Bool {
        guard var record = accounts[user]?.registration, !record.alternates.isEmpty else { return false }
        let next = record.alternates.removeFirst()
        logger.info("SIP: registrar \(record.destination) did not answer; trying \(next)")
        if let key = record.key { clients[key] = nil }
        record.destination = next
        record.localHost = env.advertisedHost(toward: next.address)
        record.key = nil
        accounts[user]!.registration = record
        sendRegister(user: user)
        return true
    }
}
