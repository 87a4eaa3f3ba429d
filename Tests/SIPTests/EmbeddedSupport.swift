import Platform
import SIP
import SIPEmbedded

// Helpers for the tests that run on an embedded network (virtual time, no sockets, no sleeps).

extension EmbeddedSIPNetwork {
    /// A user agent at 127.0.0.1 with a free port, with RFC 3261's timers unless told.
    func agent(user: String = "test", timers: SIPTimers = .rfc3261, maximumCalls: Int? = nil,
               answerChangedOffer: SIPUserAgent.OfferAnswerer? = nil, credentials: SIPCredentials? = nil,
               limits: SIPLimits = .default,
               configure: (inout SIPUserAgent.Configuration) -> Void = { _ in }) throws -> SIPUserAgent {
        var configuration = SIPUserAgent.Configuration(
            localAddress: try SocketAddress(host: "127.0.0.1", port: 0), user: user, timers: timers,
            maximumCalls: maximumCalls, answerChangedOffer: answerChangedOffer, credentials: credentials, limits: limits)
        configure(&configuration)
        return try makeAgent(configuration)
    }

    /// A network with one agent and one hand-written peer.
    static func agentAndPeer(timers: SIPTimers = .rfc3261, answerChangedOffer: SIPUserAgent.OfferAnswerer? = nil,
                             configure: (inout SIPUserAgent.Configuration) -> Void = { _ in })
        throws -> (EmbeddedSIPNetwork, SIPUserAgent, EmbeddedSIPPeer) {
        let network = EmbeddedSIPNetwork()
        let agent = try network.agent(timers: timers, answerChangedOffer: answerChangedOffer, configure: configure)
        return (network, agent, try network.makePeer())
    }
}

extension EmbeddedSIPPeer {
    /// The next request of `method` (and CSeq `cseq`, if given), skipping anything else (Timer
    /// A's retransmissions of an earlier INVITE), moving time by up to `within`.
    func next(_ method: SIPMethod, cseq: UInt32? = nil, within duration: Duration = .zero) -> SIPRequest? {
        while let request = receiveRequest(method, within: duration) {
            if cseq == nil || (try? request.headers.cseq().sequence) == cseq { return request }
        }
        return nil
    }

    /// Every request of `method` waiting to be taken (the rest is dropped).
    func requests(_ method: SIPMethod) -> [SIPRequest] {
        drain().compactMap { if case .request(let r) = $0, r.method == method { r } else { nil } }
    }
}

extension SIPCall {
    /// Why the call ended, nil while it has not.
    var endReason: SIPCallEndReason? {
        if case .ended(let reason) = state { reason } else { nil }
    }
}

/// A peer that writes SIP by hand, on a socket or on an embedded network: what the message
/// helpers need of it.
protocol HandWrittenPeer {
    var port: UInt16 { get }
}

extension EmbeddedSIPPeer: HandWrittenPeer {}
