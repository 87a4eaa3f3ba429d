import Platform
import Logging

// Digest authentication of our requests (RFC 3261 sections 22.2 and 22.3): a 401 or 407 is
// answered by sending the request again, with credentials for each realm that challenged,
// in a new client transaction with the next CSeq. A digest response lets the challenger try
// passwords offline, so only the realm the credentials are for is answered (see
// `SIPCredentials`), at most twice per request, and a server's `rspauth` is checked.

extension CoreState {
    /// Sends the request `response` challenged again with credentials, for the same owner.
    ///
    /// - Parameter source: where the challenge came from (credentials without a realm answer
    ///   only the registrar's address).
    /// - Returns: false when the challenge stands as the request's final response: no
    ///   credentials, no Digest challenge we may answer, a CANCEL or ACK (never challenged), a
    ///   call cancelled meanwhile, or credentials refused (a second challenge not marked stale,
    ///   or a third of any kind).
    mutating func retryWithCredentials(_ response: SIPResponse, key: ClientKey, owner: ClientOwner,
                                       from source: SIPHop?) -> Bool {
        let proxy = response.statusCode == 407
        let user = accountUser(of: owner)
        guard response.statusCode == 401 || proxy, let credentials = accounts[user]?.credentials,
              let record = clients[key] else { return false }
        var request = record.transaction.request
        let offered = response.headers.digestChallenges(proxy: proxy)
        let challenges = offered.filter { mayAnswer($0, credentials: credentials, user: user, owner: owner, from: source) }
        guard !challenges.isEmpty else {
            if !offered.isEmpty { statistics.challengesDeclined += 1 }
            logger.info("SIP: \(request.method) challenged for \(offered.map(\.realm)) from \(source.map(String.init(describing:)) ?? "?"): not answered")
            return false
        }
        // One retry per challenge: the first, and one more when the nonce was only stale.
        let retries = record.authenticationRetries
        guard retries == 0 || (retries == 1 && challenges.allSatisfy(\.stale)) else {
            if retries > 1 { statistics.challengesDeclined += 1 }
            logger.warning("SIP: \(request.method) credentials refused by realm \(challenges[0].realm)")
            return false
        }
        guard let sequence = nextSequence(for: request, owner: owner), let via = try? request.headers.topVia() else {
            return false
        }

        let field = proxy ? "Proxy-Authorization" : "Authorization"
        var headers = SIPHeaders()
        let realms = Set(challenges.map(\.realm))
        for existing in request.headers.dropFirst() {  // the top Via is replaced below
            if SIPHeaders.canonicalName(existing.name).equalsIgnoringCase(field),
               let realm = DigestChallenge.parse(existing.value)?.realm, realms.contains(realm) { continue }
            headers.add(existing)
        }
        headers.prepend("Via", makeVia(localHost: via.host, transport: record.destination.transport))
        headers.set("CSeq", "\(sequence) \(request.method)")
        let uri = request.uri.description
        let answers = challenges.map {
            $0.answer(credentials: credentials, method: request.method.rawValue, uri: uri, body: request.body,
                      cnonce: randomToken())
        }
        for answer in answers { headers.add(field, answer.header) }
        request.headers = headers

        let newKey = startClient(request, to: record.destination, owner: owner)
        clients[newKey]?.authenticationRetries = retries + 1
        clients[newKey]?.digests = record.digests.filter { $0.proxy != proxy } + answers.map { ($0, proxy) }
        statistics.challengesAnswered += 1
        logger.info("SIP: \(request.method) sent again with credentials for \(challenges.map(\.realm).joined(separator: ", "))")
        adopt(newKey, replacing: key, request: request, owner: owner)
        return true
    }

    /// Whether `user`'s credentials may answer `challenge` (see ``SIPCredentials``): their
    /// realm, or without one its registrar's, from the registrar's address, learned from the
    /// first challenge to a REGISTER from there.
    private mutating func mayAnswer(_ challenge: DigestChallenge, credentials: SIPCredentials, user: String,
                                    owner: ClientOwner, from source: SIPHop?) -> Bool {
        if let realm = credentials.realm { return challenge.realm == realm }
        guard let record = accounts[user]?.registration, let source,
              source.transport == record.destination.transport && source.address == record.destination.address
        else { return false }
        if record.realm == nil, case .register = owner { accounts[user]!.registration!.realm = challenge.realm }
        return accounts[user]!.registration!.realm == challenge.realm
    }

    /// The retried request's transaction takes the place of the challenged one.
    private mutating func adopt(_ newKey: ClientKey, replacing key: ClientKey, request: SIPRequest, owner: ClientOwner) {
        switch owner {
        case .invite(let callKey):
            calls[callKey]!.invite = request
            calls[callKey]!.inviteKey = newKey
            calls[callKey]!.sawProvisional = false  // a CANCEL waits for this INVITE's provisional
        case .reinvite(let callKey):
            calls[callKey]!.reinviteKey = newKey
        case .refer(let callKey):
            calls[callKey]!.referKey = newKey
        case .options:
            optionsWaiters[newKey] = optionsWaiters.removeValue(forKey: key)
        case .register(let user):
            accounts[user]?.registration?.key = newKey
        case .bye, .cancel, .notify, .none:
            break
        }
    }

    /// Whether a response to an authenticated request may be believed: its `rspauth`, when
    /// it has one, must prove the server knows the password (else it is dropped and counted;
    /// the transaction goes on as if it had not come).
    mutating func serverAuthenticationHolds(_ response: SIPResponse, key: ClientKey) -> Bool {
        guard let digests = clients[key]?.digests, !digests.isEmpty else { return true }
        for (name, proxy) in [("Authentication-Info", false), ("Proxy-Authentication-Info", true)] {
            guard let info = response.headers[name] else { continue }
            let ours = digests.filter { $0.proxy == proxy }.map(\.answer)
            guard !ours.isEmpty else { continue }
            if !ours.contains(where: { $0.verifies(info, responseBody: response.body) }) {
                statistics.badServerAuthentication += 1
                logger.warning("SIP: dropped a \(response.statusCode) to \(key.method) with a wrong rspauth")
                return false
            }
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
        case .register(let user):
            guard accounts[user]?.registration != nil else { return nil }
            accounts[user]!.registration!.sequence &+= 1
            return accounts[user]!.registration!.sequence
        case .reinvite(let callKey), .bye(let callKey), .refer(let callKey), .notify(let callKey):
            guard var dialog = calls[callKey]?.dialog else { return nil }
            dialog.localSequence &+= 1
            calls[callKey]!.dialog = dialog
            return dialog.localSequence
        case .cancel, .none:
            return nil
        }
    }
}
