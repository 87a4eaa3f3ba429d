// Accounts: the identities a user agent registers and calls as. Each has its own user part
// (its Contact's, so a registrar's INVITE names which account it is for), display name,
// credentials, registration and stream of registration states. The configuration's user is
// the first account, and the one a call without an account is placed from.

/// One account of the core.
struct AccountRecord: Sendable {
    let displayName: String?
    let credentials: SIPCredentials?
    /// Where ``SIPAccount/registrationStates`` comes from (buffering the newest).
    let states: AsyncStream<SIPRegistrationState>.Continuation
    /// Its binding at a registrar, from the first REGISTER until it is removed.
    var registration: RegistrationRecord?
    var state: SIPRegistrationState = .unregistered
}

extension CoreState {
    /// The user of the configuration's account (calls and requests without an account).
    var primaryUser: String { env.configuration.user }

    /// Adds the account of `user`.
    mutating func addAccount(user: String, displayName: String?, credentials: SIPCredentials?,
                             states: AsyncStream<SIPRegistrationState>.Continuation) -> Result<Void, SIPError> {
        guard !closed else { return .failure(.closed) }
        if let reason = Self.invalidUserReason(user) { return .failure(.invalidAccount(user: user, reason: reason)) }
        guard accounts[user] == nil else { return .failure(.invalidAccount(user: user, reason: "the agent has it already")) }
        guard accounts.count < Self.maximumAccounts else {
            return .failure(.invalidAccount(user: user, reason: "an agent has at most \(Self.maximumAccounts) accounts"))
        }
        accounts[user] = AccountRecord(displayName: displayName, credentials: credentials, states: states)
        return .success(())
    }

    /// Every account's refresh is a timer and a REGISTER in flight: a bound, as pjsua has.
    static let maximumAccounts = 32

    /// Why `user` cannot be a URI's user part as it is (RFC 3261 section 25.1: unreserved and
    /// user-unreserved characters, no escapes needed), nil when it can.
    static func invalidUserReason(_ user: String) -> String? {
        guard !user.isEmpty else { return "an empty user" }
        guard user.utf8.count <= 64 else { return "a user over 64 bytes" }
        let allowed = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.!~*'()&=+$,;?/".utf8)
        return user.utf8.allSatisfy(allowed.contains) ? nil : "a character a SIP URI's user cannot carry unescaped"
    }

    /// The account `owner`'s request is for: a REGISTER's own, a call's, else the primary.
    func accountUser(of owner: ClientOwner) -> String {
        switch owner {
        case .register(let user): user
        case .invite(let key), .cancel(let key), .bye(let key), .reinvite(let key), .refer(let key), .notify(let key):
            calls[key]?.account ?? primaryUser
        case .options, .none: primaryUser
        }
    }

    /// The account an incoming request addressed to `uri` is for: the account of its user,
    /// else the primary (a peer calling our address directly may name any user).
    func accountUser(addressedTo uri: SIPURI) -> String {
        if let user = uri.user, accounts[user] != nil { return user }
        return primaryUser
    }
}
