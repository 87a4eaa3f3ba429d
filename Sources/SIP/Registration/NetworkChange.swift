import Logging

// A network change (a laptop on another Wi-Fi, a VPN coming up): an agent bound to a wildcard
// address writes the local end of the route to each peer in Via and Contact, so when that
// address moves, a registrar's binding points where nothing listens and calls stop arriving.
// The agent asks every few seconds (and when the application says the network changed) and
// registers again from the new address, removing the old Contact, as liblinphone does.

extension CoreState {
    /// Whether our address can move under us: a wildcard bind with no configured host.
    var followsNetworkChanges: Bool { env.boundHost == nil && env.configuration.advertisedHost == nil }

    /// Arms the periodic check while some account has a binding (or is retrying one).
    mutating func armNetworkCheck() {
        guard followsNetworkChanges, !networkCheckArmed, !closed,
              accounts.values.contains(where: { $0.registration != nil }) else { return }
        networkCheckArmed = true
        schedule(timers.networkCheck, .networkCheck)
    }

    /// Registers again every account whose registrar is now reached from another local
    /// address, with the new Contact and the old one removed (`expires=0`). Without a route
    /// (no network at all) nothing is sent: the refresh's failures and retries cover that.
    mutating func checkNetwork() {
        guard followsNetworkChanges else { return }
        for user in accounts.keys.sorted() {
            guard let record = accounts[user]!.registration, record.requestedExpires > 0,
                  let host = env.network.localHost(toward: record.destination.address), host != record.localHost
            else { continue }
            logger.info("SIP: our address toward \(record.registrar) moved from \(record.localHost) to \(host): registering again")
            let old = contactURI(user: user, localHost: record.localHost, transport: record.destination.transport)
            if record.grantedExpires != nil, !record.staleContacts.contains(old) {
                accounts[user]!.registration!.staleContacts.append(old)
            }
            accounts[user]!.registration!.localHost = host
            if let key = record.key {
                // The REGISTER in flight went out from the old address: its answer may never come.
                clients[key] = nil
                accounts[user]!.registration!.key = nil
            }
            sendRegister(user: user)
        }
        armNetworkCheck()
    }
}
