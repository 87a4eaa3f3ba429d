import Platform
import Logging

// Registration with a registrar (RFC 3261 section 10.2): for each account, one binding of its
// Contact to the address of record sip:user@registrar-host, refreshed before it lapses,
// removed on unregister and (best effort) on close.

/// An account's binding at a registrar.
struct RegistrationRecord: Sendable {
    /// The Request-URI of our REGISTERs (`sip:host[:port]`).
    let registrar: SIPURI
    var destination: SIPHop
    /// The registrar's other servers, in order, for a timeout or 503 (RFC 3263 section 4.3).
    var alternates: [SIPHop] = []
    /// `To` and `From`: `sip:user@host`.
    let addressOfRecord: SIPURI
    let callID: String
    let fromTag: String
    var localHost: String
    var sequence: UInt32 = 0
    /// The lifetime the last REGISTER asked for, in seconds; 0 removes the binding.
    var requestedExpires: Int
    /// A lifetime asked for while a REGISTER was in flight: sent once it completes.
    var queuedExpires: Int?
    /// The REGISTER in flight.
    var key: ClientKey?
    /// The lifetime the registrar granted last; nil until the first 2xx.
    var grantedExpires: Int?
    /// Contacts of ours from before our address moved, removed (`expires=0`) by the next
    /// REGISTER (``CoreState/checkNetwork()``).
    var staleContacts: [SIPURI] = []
    /// Refresh timers of older generations are ignored.
    var generation: UInt64 = 0
    var retriedMinExpires = false
    /// Failed REGISTERs in a row (the retry waits double with each).
    var failures = 0
    /// The registrar's realm, from the first challenge to our REGISTER that came from its
    /// address: credentials without a realm answer this one only (``SIPCredentials``).
    var realm: String?
    /// `register` and `unregister` calls waiting for the outcome of the last lifetime asked for.
    var waiters: [CheckedContinuation<Result<Int, SIPError>, Never>] = []
}

extension CoreState {
    /// `register`/`unregister` of `user`'s account: asks for a binding of `expires` seconds (0
    /// removes it); `waiter` gets the lifetime granted.
    mutating func register(user: String, registrar: SIPURI, destination: SIPHop, alternates: [SIPHop] = [], expires: Int,
                           waiter: CheckedContinuation<Result<Int, SIPError>, Never>) {
        guard !closed else { return waiter.resume(returning: .failure(.closed)) }
        guard let account = accounts[user] else { return waiter.resume(returning: .failure(.invalidAccount(user: user, reason: "no such account"))) }
        if expires == 0, let record = account.registration, record.grantedExpires == nil, record.key == nil {
            // A first REGISTER waiting to be tried again: there is no binding to remove.
            accounts[user]!.registration = nil
            setRegistrationState(.unregistered, of: user)
            return waiter.resume(returning: .success(0))
        }
        if account.registration == nil || account.registration!.registrar != registrar {
            guard expires > 0 else { return waiter.resume(returning: .success(0)) }  // nothing to remove
            // The binding being made elsewhere is given up: its callers hear so, none waits for ever.
            for old in account.registration?.waiters ?? [] { old.resume(returning: .failure(.replaced)) }
            var record = RegistrationRecord(
                registrar: registrar, destination: destination,
                addressOfRecord: SIPURI(user: user, host: registrar.host),
                callID: randomToken(bytes: 16), fromTag: randomToken(),
                localHost: env.advertisedHost(toward: destination.address), requestedExpires: expires)
            record.alternates = alternates
            accounts[user]!.registration = record
        }
        accounts[user]!.registration!.waiters.append(waiter)
        if accounts[user]!.registration!.key != nil {
            accounts[user]!.registration!.queuedExpires = expires
        } else {
            accounts[user]!.registration!.requestedExpires = expires
            accounts[user]!.registration!.retriedMinExpires = false
            sendRegister(user: user)
        }
    }

    mutating func sendRegister(user: String) {
        guard var record = accounts[user]?.registration else { return }
        record.sequence &+= 1
        record.generation &+= 1  // any refresh already scheduled is now stale
        var from = SIPNameAddress(uri: record.addressOfRecord)
        from.tag = record.fromTag
        var headers = SIPHeaders()
        headers.add("Via", makeVia(localHost: record.localHost, transport: record.destination.transport))
        headers.add("Max-Forwards", "70")
        headers.add("From", from.description)
        headers.add("To", SIPNameAddress(uri: record.addressOfRecord).description)
        headers.add("Call-ID", record.callID)
        headers.add("CSeq", "\(record.sequence) REGISTER")
        headers.add("Contact", "<\(contactURI(user: user, localHost: record.localHost, transport: record.destination.transport))>")
        for stale in record.staleContacts { headers.add("Contact", "<\(stale)>;expires=0") }
        addPreloadedRoute(to: &headers)
        headers.add("Expires", String(record.requestedExpires))
        headers.add("Allow", allowHeaderValue)
        headers.add("User-Agent", env.configuration.userAgent)
        record.key = startClient(SIPRequest(method: .register, uri: record.registrar, headers: headers),
                                 to: record.destination, owner: .register(user))
        accounts[user]!.registration = record
        if record.requestedExpires > 0, !accounts[user]!.state.isRegistered {
            setRegistrationState(.registering(record.registrar), of: user)
        }
    }

    /// A final response to our REGISTER (a 401 or 407 we could answer never gets here).
    mutating func registerResponse(_ response: SIPResponse, key: ClientKey, user: String) {
        guard let record = accounts[user]?.registration, record.key == key, response.statusCode >= 200 else { return }
        let status = response.statusCode
        if status == 423, !record.retriedMinExpires,
           let minimum = response.headers["Min-Expires"].flatMap({ Int($0[...].trimmed) }), minimum > record.requestedExpires {
            // Interval Too Brief (section 10.2.8): ask again for the registrar's minimum.
            accounts[user]!.registration!.key = nil
            accounts[user]!.registration!.requestedExpires = minimum
            accounts[user]!.registration!.retriedMinExpires = true
            sendRegister(user: user)
            return
        }
        if status == 503, failOverRegistration(user: user) { return }
        guard (200..<300).contains(status) else {
            return registerFailed(.rejected(status: status, reason: response.reasonPhrase), key: key, user: user)
        }
        let granted = grantedExpires(response, record: record, user: user)
        if granted <= 0, record.requestedExpires > 0, record.queuedExpires == nil {
            // A 2xx that lists our Contact with expires=0 did not keep the binding.
            return registerFailed(.rejected(status: status, reason: "binding not kept"), key: key, user: user)
        }
        accounts[user]!.registration!.key = nil
        if let queued = record.queuedExpires {
            accounts[user]!.registration!.queuedExpires = nil
            accounts[user]!.registration!.requestedExpires = queued
            return sendRegister(user: user)
        }
        guard record.requestedExpires > 0 else {
            logger.info("SIP: unregistered from \(record.registrar)")
            accounts[user]!.registration = nil
            setRegistrationState(.unregistered, of: user)
            for waiter in record.waiters { waiter.resume(returning: .success(0)) }
            return
        }
        accounts[user]!.registration!.grantedExpires = granted
        accounts[user]!.registration!.staleContacts = []
        armNetworkCheck()
        accounts[user]!.registration!.waiters = []
        accounts[user]!.registration!.failures = 0
        setRegistrationState(.registered(record.registrar, expires: granted), of: user)
        schedule(.seconds(refreshDelay(granted)), .registration(user, accounts[user]!.registration!.generation))
        logger.info("SIP: registered \(record.addressOfRecord) at \(record.registrar) for \(granted) s")
        for waiter in record.waiters { waiter.resume(returning: .success(granted)) }
    }

    /// The REGISTER failed (refused, or no answer). Callers waiting hear why; a binding that
    /// was live, or a first one the registrar could not answer (no answer, 408, 480, 5xx: a
    /// network or a server down, as pjsua retries), is tried again after
    /// ``SIPTimers/registrationRetry`` (30 s), doubling with each failure in a row up to 20
    /// times that. A first REGISTER refused (403, 404, wrong credentials) fails for good.
    mutating func registerFailed(_ error: SIPError, key: ClientKey, user: String) {
        guard let record = accounts[user]?.registration, record.key == key else { return }
        if error == .timeout, failOverRegistration(user: user) { return }
        logger.warning("SIP: REGISTER at \(record.registrar) failed: \(error)")
        accounts[user]!.registration!.key = nil
        accounts[user]!.registration!.waiters = []
        accounts[user]!.registration!.queuedExpires = nil
        if record.requestedExpires == 0 || (record.grantedExpires == nil && !Self.isTransient(error)) {
            accounts[user]!.registration = nil
            setRegistrationState(record.requestedExpires == 0 ? .unregistered : .failed(record.registrar, error, retryIn: nil), of: user)
        } else {
            let wait = timers.registrationRetry * (1 << min(record.failures, 4))
            let delay = min(wait, timers.registrationRetry * 20)
            accounts[user]!.registration!.failures += 1
            schedule(delay, .registration(user, accounts[user]!.registration!.generation))
            armNetworkCheck()
            setRegistrationState(.failed(record.registrar, error, retryIn: Int(delay.components.seconds)), of: user)
        }
        for waiter in record.waiters { waiter.resume(returning: .failure(error)) }
    }

    /// Whether a REGISTER that failed with `error` may succeed later unchanged: no answer, or
    /// a registrar that said it could not answer now.
    static func isTransient(_ error: SIPError) -> Bool {
        switch error {
        case .timeout: true
        case let .rejected(status, _): status == 408 || status == 480 || (500..<600).contains(status)
        default: false
        }
    }

    /// The refresh timer of `generation` fired.
    mutating func refreshRegistration(user: String, generation: UInt64) {
        guard let record = accounts[user]?.registration, record.generation == generation, record.key == nil, record.requestedExpires > 0
        else { return }
        sendRegister(user: user)
    }

    /// On close: removes every live binding, best effort (each REGISTER is sent once).
    mutating func unregisterOnShutdown() {
        for user in accounts.keys.sorted() {
            guard let record = accounts[user]!.registration else { continue }
            for waiter in record.waiters { waiter.resume(returning: .failure(.closed)) }
            accounts[user]!.registration!.waiters = []
            if record.grantedExpires != nil {
                accounts[user]!.registration!.requestedExpires = 0
                accounts[user]!.registration!.key = nil
                sendRegister(user: user)
            }
            accounts[user]!.registration = nil
            setRegistrationState(.unregistered, of: user)
        }
    }

    /// Records where `user`'s registration stands and tells its stream when that changed.
    mutating func setRegistrationState(_ state: SIPRegistrationState, of user: String) {
        guard let account = accounts[user], state != account.state else { return }
        accounts[user]!.state = state
        account.states.yield(state)
    }

    /// The lifetime granted to our Contact: its `expires` parameter in the 2xx, else the
    /// `Expires` header, else what we asked for (section 10.2.4).
    private func grantedExpires(_ response: SIPResponse, record: RegistrationRecord, user: String) -> Int {
        let ours = contactURI(user: user, localHost: record.localHost, transport: record.destination.transport)
        let contacts = (try? response.headers.contacts()) ?? []
        if let mine = contacts.first(where: { $0.uri.user == ours.user && $0.uri.host == ours.host
                                              && $0.uri.effectivePort == ours.effectivePort }),
           let value = mine.parameters["expires"], let seconds = Int(value) {
            return seconds
        }
        if let header = response.headers["Expires"], let seconds = Int(header[...].trimmed) { return seconds }
        return record.requestedExpires
    }

    /// When to refresh a binding of `lifetime` seconds: at 80 % of it, and at least 33 s
    /// (a transaction's timeout, 64 × T1) before it lapses when it is long enough for that.
    private func refreshDelay(_ lifetime: Int) -> Int {
        lifetime > 165 ? lifetime - max(33, lifetime / 5) : max(1, lifetime * 4 / 5)
    }
}
