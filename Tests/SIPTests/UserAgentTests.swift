import Platform
import SIP
import SIPEmbedded
import Testing

/// Two user agents calling each other: on an embedded network (RFC 3261's timers on virtual
/// time), and the first call, a wildcard bind and IPv6 over real UDP on loopback.
@Suite("SIP user agents")
struct UserAgentTests {
    /// A call from `caller` to `callee`, with both sides' events recorded; the callee has the call.
    struct Setup {
        let caller: SIPUserAgent
        let callee: SIPUserAgent
        let outgoing: SIPCall
        let incoming: SIPCall
        let callerEvents: Recorder<SIPCallEvent>
        let calleeEvents: Recorder<SIPCallEvent>
    }

    /// On `network`, or on loopback when it is nil.
    static func setUp(offer: SIPBody? = opusSDP(port: 4000), network: EmbeddedSIPNetwork? = EmbeddedSIPNetwork()) async throws -> Setup {
        let caller = try network.map { try $0.agent(user: "alice") } ?? makeAgent(user: "alice")
        let callee = try network.map { try $0.agent(user: "bob") } ?? makeAgent(user: "bob")
        let incomingCalls = Recorder(callee.incomingCalls)
        let outgoing = try caller.invite(to: callee.uri(user: "bob"), offer: offer)
        let callerEvents = Recorder(outgoing.events)
        let incoming = try #require(await incomingCalls.element(0))
        return Setup(caller: caller, callee: callee, outgoing: outgoing, incoming: incoming,
                     callerEvents: callerEvents, calleeEvents: Recorder(incoming.events))
    }

    @Test(arguments: [true, false])
    func callRingAnswerAndHangUpByCaller(embedded: Bool) async throws {
        let s = try await Self.setUp(network: embedded ? EmbeddedSIPNetwork() : nil)
        #expect(s.incoming.direction == .incoming)
        #expect(s.incoming.offer == opusSDP(port: 4000))
        #expect(s.incoming.callID == s.outgoing.callID)
        #expect(s.incoming.remote.uri.user == "alice")
        #expect(s.incoming.local.uri.user == "bob")
        #expect(s.incoming.state == .incoming)
        #expect(s.incoming.localHost == "127.0.0.1")
        #expect(s.outgoing.localHost == "127.0.0.1")
        #expect(try s.caller.localHost(toward: s.callee.uri()) == "127.0.0.1")
        #expect(await s.callerEvents.wait { $0 == [.trying] })

        try s.incoming.ringing()
        #expect(await s.callerEvents.wait { $0 == [.trying, .ringing(nil)] })
        #expect(s.outgoing.state == .ringing)

        try s.incoming.accept(answer: opusSDP(port: 5000, session: "2"))
        #expect(await s.callerEvents.wait { $0.last == .answered(opusSDP(port: 5000, session: "2")) })
        #expect(await s.calleeEvents.wait { $0 == [.confirmed(nil)] })
        #expect(s.outgoing.state == .established)
        #expect(s.incoming.state == .established)

        try s.outgoing.bye()
        #expect(s.outgoing.state == .ended(.hungUp(byRemote: false)))
        #expect(await s.calleeEvents.endReason() == .hungUp(byRemote: true))
        #expect(await s.callerEvents.endReason() == .hungUp(byRemote: false))
        #expect(await s.callerEvents.wait { _ in s.callerEvents.isFinished })
        #expect(s.caller.statistics.malformedDropped == 0)
        #expect(s.callee.statistics.unknownDialogRequests == 0)
        #expect(throws: SIPError.invalidState(.ended(.hungUp(byRemote: false)))) { try s.outgoing.bye() }
    }

    @Test func calleeHangsUp() async throws {
        let s = try await Self.setUp()
        try s.incoming.accept(answer: opusSDP(port: 5000))
        #expect(await s.calleeEvents.wait { $0 == [.confirmed(nil)] })
        try s.incoming.bye()
        #expect(await s.callerEvents.endReason() == .hungUp(byRemote: true))
        #expect(await s.calleeEvents.endReason() == .hungUp(byRemote: false))
    }

    @Test func byeBeforeTheACKWaitsForIt() async throws {
        let s = try await Self.setUp()
        try s.incoming.accept(answer: opusSDP(port: 5000))
        try s.incoming.bye()  // the ACK came at once: the BYE goes
        #expect(s.incoming.state == .ended(.hungUp(byRemote: false)))
        #expect(await s.callerEvents.endReason() == .hungUp(byRemote: true))
    }

    @Test func cancelBeforeAnswerGives487() async throws {
        let s = try await Self.setUp()
        try s.incoming.ringing()
        #expect(await s.callerEvents.wait { $0.contains(.ringing(nil)) })
        try s.outgoing.cancel()
        #expect(await s.calleeEvents.endReason() == .cancelled(byRemote: true))
        #expect(await s.callerEvents.endReason() == .cancelled(byRemote: false))
        #expect(throws: SIPError.self) { try s.incoming.accept(answer: opusSDP(port: 5000)) }
    }

    @Test func cancelBeforeAnyProvisionalWaitsForOne() async throws {
        // The callee's agent sent 100 Trying at once, so the CANCEL leaves at once.
        let s = try await Self.setUp()
        try s.outgoing.cancel()
        #expect(await s.calleeEvents.endReason() == .cancelled(byRemote: true))
        #expect(await s.callerEvents.endReason() == .cancelled(byRemote: false))
    }

    @Test(arguments: [486, 488, 603])
    func calleeRejects(status: Int) async throws {
        let s = try await Self.setUp()
        try s.incoming.reject(status: status)
        #expect(await s.calleeEvents.endReason() == .rejected(status: status))
        #expect(await s.callerEvents.endReason()
                == .failed(status: status, reason: SIPResponse.defaultReasonPhrase(status)))
        #expect(throws: SIPError.invalidStatus(200)) { try s.incoming.reject(status: 200) }
    }

    @Test func hangUpDoesTheRightThingInEachState() async throws {
        let ringing = try await Self.setUp()
        ringing.incoming.hangUp()  // unanswered incoming: 603
        #expect(await ringing.callerEvents.endReason() == .failed(status: 603, reason: "Decline"))

        let calling = try await Self.setUp()
        #expect(await calling.callerEvents.wait { $0 == [.trying] })
        calling.outgoing.hangUp()  // unanswered outgoing: CANCEL
        #expect(await calling.calleeEvents.endReason() == .cancelled(byRemote: true))

        let talking = try await Self.setUp()
        try talking.incoming.accept(answer: opusSDP(port: 5000))
        #expect(await talking.callerEvents.wait { $0.contains(.answered(opusSDP(port: 5000))) })
        talking.outgoing.hangUp()  // established: BYE
        talking.outgoing.hangUp()  // ended: nothing
        #expect(await talking.calleeEvents.endReason() == .hungUp(byRemote: true))
    }

    @Test func delayedOfferCarriesTheAnswerInTheACK() async throws {
        // An INVITE without a body: our 2xx carries the offer and the caller's ACK the answer.
        // This agent sends an empty ACK, so the callee sees `.confirmed(nil)`.
        let s = try await Self.setUp(offer: nil)
        #expect(s.incoming.offer == nil)
        try s.incoming.accept(answer: opusSDP(port: 5000))
        #expect(await s.callerEvents.wait { $0.contains(.answered(opusSDP(port: 5000))) })
        #expect(await s.calleeEvents.wait { $0 == [.confirmed(nil)] })
    }

    @Test func optionsAdvertisesCapabilities() async throws {
        let network = EmbeddedSIPNetwork()
        let a = try network.agent(), b = try network.agent()
        let response = try await a.options(to: b.uri())
        #expect(response.statusCode == 200)
        #expect(response.headers.tokens("Allow") == ["INVITE", "ACK", "CANCEL", "BYE", "OPTIONS", "REFER", "NOTIFY", "UPDATE"])
        #expect(response.headers["Accept"] == "application/sdp")
        #expect(response.headers["User-Agent"] == "CallAudio")
        #expect(try response.headers.to().tag != nil)
    }

    @Test func busyWhenTheCallLimitIsReached() async throws {
        let network = EmbeddedSIPNetwork()
        let caller = try network.agent(), callee = try network.agent(maximumCalls: 1)
        let incoming = Recorder(callee.incomingCalls)
        let first = try caller.invite(to: callee.uri(), offer: opusSDP(port: 4000))
        #expect(await incoming.wait { $0.count == 1 })
        let second = Recorder(try caller.invite(to: callee.uri(), offer: opusSDP(port: 4002)).events)
        #expect(await second.endReason() == .failed(status: 486, reason: "Busy Here"))
        #expect(first.state == .calling)
        #expect(incoming.all.count == 1)
    }

    @Test func closingEndsCalls() async throws {
        let s = try await Self.setUp()
        try s.incoming.accept(answer: opusSDP(port: 5000))
        #expect(await s.calleeEvents.wait { $0 == [.confirmed(nil)] })
        let calls = Recorder(s.caller.incomingCalls)
        s.caller.close()
        #expect(await s.callerEvents.endReason() == .shutdown)
        #expect(await calls.wait { _ in calls.isFinished })
        // The best-effort BYE reaches the peer.
        #expect(await s.calleeEvents.endReason() == .hungUp(byRemote: true))
        #expect(throws: SIPError.closed) { try s.caller.invite(to: s.callee.uri(), offer: nil) }
        await #expect(throws: SIPError.closed) { try await s.caller.options(to: s.callee.uri()) }
    }

    @Test func wildcardBindAdvertisesTheRouteAddress() async throws {
        let wildcard = try SIPUserAgent(configuration: .init(localAddress: SocketAddress(host: "0.0.0.0", port: 0),
                                                             timers: .fast))
        let caller = try makeAgent()
        let calls = Recorder(wildcard.incomingCalls)
        let outgoing = Recorder(try caller.invite(to: SIPURI(user: "w", host: "127.0.0.1", port: wildcard.localAddress.port),
                                                  offer: opusSDP(port: 4000)).events)
        let incoming = try #require(await calls.element(0))
        #expect(incoming.localHost == "127.0.0.1")
        #expect(try wildcard.localHost(toward: caller.uri()) == "127.0.0.1")
        try incoming.accept(answer: opusSDP(port: 5000))
        #expect(await outgoing.wait { $0.contains(.answered(opusSDP(port: 5000))) })
        incoming.hangUp()
        #expect(await outgoing.endReason() == .hungUp(byRemote: true))
    }

    @Test func callOverIPv6() async throws {
        let configuration = SIPUserAgent.Configuration(localAddress: try SocketAddress(host: "::1", port: 0), timers: .fast)
        let a = try SIPUserAgent(configuration: configuration), b = try SIPUserAgent(configuration: configuration)
        let calls = Recorder(b.incomingCalls)
        let target = try SIPURI(parsing: "sip:b@[::1]:\(b.localAddress.port)")
        let outgoing = Recorder(try a.invite(to: target, offer: opusSDP(port: 4000)).events)
        let incoming = try #require(await calls.element(0))
        #expect(incoming.localHost == "::1")
        #expect(incoming.remote.uri.host == "::1")
        try incoming.accept(answer: opusSDP(port: 5000))
        #expect(await outgoing.wait { $0.contains(.answered(opusSDP(port: 5000))) })
        incoming.hangUp()
        #expect(await outgoing.endReason() == .hungUp(byRemote: true))
    }

    @Test func unreachableTargetsAreErrors() throws {
        let a = try makeAgent()
        #expect(throws: SIPError.unsupportedTransport("sctp")) {
            try a.invite(to: SIPURI(user: "b", host: "127.0.0.1", port: 5062, parameters: ["transport": "sctp"]), offer: nil)
        }
        // Without a TLS configuration, `sips:` and `transport=tls` cannot be reached.
        #expect(throws: SIPError.unsupportedTransport("tls")) {
            try a.invite(to: SIPURI(user: "b", host: "127.0.0.1", port: 5062, parameters: ["transport": "tls"]), offer: nil)
        }
        #expect(throws: SIPError.unsupportedTransport("tls")) {
            try a.invite(to: SIPURI(scheme: "sips", user: "b", host: "127.0.0.1"), offer: nil)
        }
        #expect(throws: SIPError.self) { try a.invite(to: SIPURI(user: "b", host: "::1", port: 5062), offer: nil) }
        // A name resolves in the socket's family (localhost may be ::1 first).
        #expect(try a.localHost(toward: SIPURI(user: "b", host: "localhost", port: 5062)) == "127.0.0.1")
        #expect(throws: SIPError.unresolvableHost("no-such-host.invalid")) {
            try a.invite(to: SIPURI(user: "b", host: "no-such-host.invalid"), offer: nil)
        }
    }
}
