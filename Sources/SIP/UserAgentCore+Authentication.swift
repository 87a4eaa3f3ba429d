import Logging

// Digest authentication of our requests (RFC 3261 sections 22.2 and 22.3): a 401 or 407 is
// answered by sending the request again, with credentials for each realm that challenged,
// in a new client transaction with the next CSeq.

extension CoreState {
    /// Sends the request `response` challenged again with credentials, for the same owner.
    ///
    /// - Returns: false when the challenge stands as the request's final response: no
    ///   credentials, no Digest challenge we can answer, a CANCEL or ACK (never challenged), a
    ///   call cancelled meanwhile, or credentials refused (the request already answered this
    ///   realm's challenge and the new one is not marked stale).
    mutating func retryWithCredentials(_ response: SIPResponse, key: ClientKey, owner: ClientOwner) -> Bool {
        let proxy = response.statusCode == 407
        guard response.statusCode == 401 || proxy, let credentials = env.configuration.credentials,
              let record = clients[key] else { return false }
        var request = record.transaction.request
        let field = proxy ? "Proxy-Authorization" : "Authorization"
        let challenges = response.headers.digestChallenges(proxy: proxy)
            .filter { credentials.realm == nil || credentials.realm == $0.realm }
        guard !challenges.isEmpty else {
            logger.info("SIP: \(request.method) challenged with no Digest challenge we can answer")
            return false
        }
        let answered = Set(((try? request.headers.values(field)) ?? []).compactMap { DigestChallenge.parse($0)?.realm })
        if challenges.contains(where: { answered.contains($0.realm) && !$0.stale }) {
            logger.warning("SIP: \(request.method) credentials refused by realm \(challenges[0].realm)")
            return false
        }
        guard let sequence = nextSequence(for: request, owner: owner), let via = try? request.headers.topVia() else {
            return false
        }

        var headers = SIPHeaders()
        let realms = Set(challenges.map(\.realm))
        for existing in request.headers.dropFirst() {  // the top Via is replaced below
            if SIPHeaders.canonicalName(existing.name).equalsIgnoringCase(field),
               let realm = DigestChallenge.parse(existing.value)?.realm, realms.contains(realm) { continue }
            headers.add(existing)
        }
        headers.prepend("Via", makeVia(localHost: via.host))
        headers.set("CSeq", "\(sequence) \(request.method)")
        let uri = request.uri.description
        for challenge in challenges {
            headers.add(field, challenge.authorization(credentials: credentials, method: request.method.rawValue, uri: uri,
                                                       body: request.body, cnonce: randomToken()))
        }
        request.headers = headers

        let newKey = startClient(request, to: record.destination, owner: owner)
        statistics.challengesAnswered += 1
        logger.info("SIP: \(request.method) sent again with credentials for \(challenges.map(\.realm).joined(separator: ", "))")
        switch owner {
        case .invite(let callKey):
            calls[callKey]!.invite = request
            calls[callKey]!.inviteKey = newKey
            calls[callKey]!.sawProvisional = false  // a CANCEL waits for this INVITE's provisional
        case .reinvite(let callKey):
            calls[callKey]!.reinviteKey = newKey
        case .options:
            optionsWaiters[newKey] = optionsWaiters.removeValue(forKey: key)
        case .register:
            registration?.key = newKey
        case .bye, .cancel, .none:
            break
        }
        return true
    }

    /// The CSeq of the request's next attempt: one past it outside a dialog, the dialog's next
    /// inside one (section 12.2.1.1). Nil for what is never sent again.
    private mutating func nextSequence(for request: SIPRequest, owner: ClientOwner) -> UInt32? {
        guard let cseq = try? request.headers.cseq() else { return nil }
        switch owner {
        case .invite(let callKey):
            guard let call = calls[callKey], !call.cancelRequested, !call.phase.isEnded else { return nil }
            return cseq.sequence &+ 1
        case .options:
            return cseq.sequence &+ 1
        case .register:
            guard registration != nil else { return nil }
            registration!.sequence &+= 1
            return registration!.sequence
        case .reinvite(let callKey), .bye(let callKey):
            guard var dialog = calls[callKey]?.dialog else { return nil }
            dialog.localSequence &+= 1
            calls[callKey]!.dialog = dialog
            return dialog.localSequence
        case .cancel, .none:
            return nil
        }
    }
}
