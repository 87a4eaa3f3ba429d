public import SIP

// Accounts: the configuration's (``CallConfiguration/userName``) and the ones an app adds, each
// registering with its own registrar and credentials on the controller's one SIP agent.

extension CallController {
    /// Registers the configuration's account with a registrar, so calls to its address of
    /// record (`sip:user@host`) reach us through it; refreshed until ``unregister()`` or
    /// ``shutdown()`` (see `SIP/SIPAccount/register(at:expires:)`).
    ///
    /// - Parameter registrar: `sip:host[:port]`.
    /// - Parameter expires: the lifetime asked for, in seconds.
    /// - Returns: the lifetime granted, in seconds.
    @discardableResult
    public nonisolated func register(at registrar: String, expires: Int = 3600) async throws(CallError) -> Int {
        guard let uri = SIPURI(registrar) else { throw .invalidTarget(registrar) }
        do { return try await userAgent.register(at: uri, expires: expires) } catch { throw CallError(error, request: "REGISTER") }
    }

    /// Where the configuration's account's registration stands now (its changes come as
    /// ``Event/registration(account:_:)``).
    public nonisolated var registrationState: SIPRegistrationState { userAgent.registrationState }

    /// Removes the configuration's account's registration.
    public nonisolated func unregister() async throws(CallError) {
        do { try await userAgent.unregister() } catch { throw CallError(error, request: "REGISTER") }
    }

    /// Adds an account: another identity (a second provider, a second line) that registers
    /// with `SIP/SIPAccount/register(at:expires:)` and places calls with
    /// ``dial(_:from:)``; the calls its registrar forwards name it (``Call/account``). Its
    /// registration's changes come as ``Event/registration(account:_:)`` (the controller
    /// reads the account's own stream); ``shutdown()`` removes its binding.
    ///
    /// - Parameter user: the user part of its address of record and Contact, unique on the controller.
    /// - Parameter displayName: the display name in its `From`.
    /// - Parameter credentials: for digest challenges to its REGISTERs and calls.
    /// - Throws: ``CallError/invalidAccount(user:reason:)`` for a user the controller has
    ///   already, one a SIP URI cannot carry, or beyond 32 accounts; nothing changes then.
    public func addAccount(user: String, displayName: String? = nil,
                           credentials: SIPCredentials? = nil) throws(CallError) -> SIPAccount {
        let account: SIPAccount
        do { account = try userAgent.addAccount(user: user, displayName: displayName, credentials: credentials) } catch {
            if case let .invalidAccount(user, reason) = error { throw .invalidAccount(user: user, reason: reason) }
            throw .signalling("\(error)")
        }
        addedAccounts.append(account)
        forwardRegistrationStates(account.registrationStates, of: user)
        return account
    }

    /// Tells the controller the network changed (the system said so): every account whose
    /// registrar is now reached from another local address registers again from it (see
    /// `SIP/SIPUserAgent/networkChanged()`; a controller on a wildcard address also checks every
    /// 5 s by itself). Calls in progress keep their addresses.
    public nonisolated func networkChanged() { userAgent.networkChanged() }

    /// The accounts ``addAccount(user:displayName:credentials:)`` added, oldest first.
    public var accounts: [SIPAccount] { addedAccounts }

    /// Tells ``events`` each state of `user`'s registration.
    nonisolated func forwardRegistrationStates(_ states: AsyncStream<SIPRegistrationState>, of user: String) {
        let broadcast = eventBroadcast
        Task { for await state in states { broadcast.yield(.registration(account: user, state)) } }
    }

    /// Unregisters every account, waiting at most `limit` (a registrar that challenges the
    /// REGISTER gets credentials, which `SIPUserAgent.close()` alone cannot give once closed).
    func removeRegistrations(within limit: Duration) async {
        let userAgent = userAgent, accounts = addedAccounts
        let registered = { userAgent.registrar != nil || accounts.contains { $0.registrar != nil } }
        guard registered() else { return }
        Task { try? await userAgent.unregister() }
        for account in accounts { Task { try? await account.unregister() } }
        let deadline = ContinuousClock.now + limit
        while registered(), ContinuousClock.now < deadline { try? await Task.sleep(for: .milliseconds(10)) }
    }
}
