import Platform
@testable import SIP
import SIPEmbedded
import Synchronization
import Testing
import TestSupport

/// Digest responses against the RFCs' own examples, and how the user agent answers challenges.
@Suite struct DigestTests {
    @Test func rfc2617ExampleResponse() throws {
        let challenge = try #require(DigestChallenge.parse(
            #"Digest realm="testrealm@host.com", qop="auth,auth-int", nonce="dcd98b7102dd2f0e8b11d0f600bfb0c093", opaque="5ccc069c403ebaf9f0171e9517f40e41""#))
        let value = challenge.authorization(credentials: SIPCredentials(username: "Mufasa", password: "Circle Of Life"),
                                            method: "GET", uri: "/dir/index.html", cnonce: "0a4f113b")
        #expect(value.contains(#"response="6629fae49393a05397450978507c4ef1""#))
        #expect(value.contains("qop=auth,") && value.contains("nc=00000001"))
        #expect(value.contains(#"opaque="5ccc069c403ebaf9f0171e9517f40e41""#))
    }

    /// RFC 7616 section 3.9.1: the same request answered with SHA-256 and with MD5.
    @Test func rfc7616ExampleResponses() throws {
        let credentials = SIPCredentials(username: "Mufasa", password: "Circle of Life")
        let expected = ["SHA-256": "753927fa0e85d155564e2e272a28d1802ca10daf4496794697cf8db5856cb6c1",
                        "MD5": "8ca523f5e9506fed4657c9700eebdbec"]
        for (algorithm, response) in expected {
            let challenge = try #require(DigestChallenge.parse("""
                Digest realm="http-auth@example.org", qop="auth, auth-int", algorithm=\(algorithm), \
                nonce="7ypf/xlj9XXwfDPEoM4URrv/xwf94BcCAzFZH4GiTo0v", opaque="FQhe/qaU925kfnzjCev0ciny7QMkPqMAFRtzCUYo5tdS"
                """))
            let value = challenge.authorization(credentials: credentials, method: "GET", uri: "/dir/index.html",
                                                cnonce: "f2/wE4q74E6zIJEtWaHKaf5wv/H5QzzpXusqGemxURZJ")
            #expect(value.contains("response=\"\(response)\""), "\(algorithm)")
        }
    }

    /// Without qop (RFC 2069 compatibility) the response skips nc and cnonce.
    @Test func challengeWithoutQopUsesTheOldResponse() throws {
        let challenge = try #require(DigestChallenge.parse(#"Digest realm="r", nonce="n""#))
        let value = challenge.authorization(credentials: SIPCredentials(username: "u", password: "p"),
                                            method: "INVITE", uri: "sip:a@b", cnonce: "c")
        // MD5(MD5("u:r:p") + ":n:" + MD5("INVITE:sip:a@b")), computed by hand with md5sum.
        let ha1 = MessageDigest.hex(MessageDigest.md5(Array("u:r:p".utf8)))
        let ha2 = MessageDigest.hex(MessageDigest.md5(Array("INVITE:sip:a@b".utf8)))
        let response = MessageDigest.hex(MessageDigest.md5(Array("\(ha1):n:\(ha2)".utf8)))
        #expect(value.contains("response=\"\(response)\""))
        #expect(!value.contains("nc=") && !value.contains("cnonce="))
    }

    @Test func challengeParsing() throws {
        // Quoted commas and escapes stay inside their value; names are case-insensitive.
        let parsed = try #require(DigestChallenge.parse(#"digest REALM="a, \"b\"", Nonce="x,y", stale=TRUE, algorithm=sha-256-SESS"#))
        #expect(parsed.realm == #"a, "b""#)
        #expect(parsed.nonce == "x,y")
        #expect(parsed.stale)
        #expect(parsed.algorithm == .sha256Session)
        #expect(DigestChallenge.parse(#"Basic realm="r""#) == nil)
        #expect(DigestChallenge.parse(#"Digest realm="r""#) == nil)  // no nonce
        #expect(DigestChallenge.parse(#"Digest realm="r", nonce="n", algorithm=SHA-512-256"#) == nil)
        #expect(DigestChallenge.parse(#"Digest realm="r, nonce="n""#) == nil)  // unterminated quote
    }

    /// Found by Fuzz/fuzz-digest: a value with a line break was copied into our Authorization
    /// (a header line of the challenger's choosing); such a challenge is not answered.
    @Test func aChallengeWithALineBreakIsNotAnswered() throws {
        let credentials = SIPCredentials(username: "alice", password: "secret")
        for opaque in ["FQhe\rCev0", "FQhe\r\nInjected: 1", "FQhe\nCev0"] {
            let challenge = "Digest realm=\"r\", nonce=\"n\", qop=\"auth\", opaque=\"\(opaque)\""
            #expect(DigestChallenge.parse(challenge) == nil, "\(opaque.debugDescription)")
            #expect(credentials.answer(challenge: challenge, method: .register, uri: "sip:r", cnonce: "c") == nil)
        }
        let answer = try #require(credentials.answer(challenge: #"Digest realm="r", nonce="n", opaque="o""#,
                                                     method: .register, uri: "sip:r", cnonce: "c"))
        #expect(answer.authorization.contains(#"opaque="o""#) && answer.verified)
    }

    /// RFC 8760: offered both, SHA-256 is answered; one answer per realm.
    @Test func theStrongestAlgorithmPerRealmIsChosen() {
        var headers = SIPHeaders()
        headers.add("WWW-Authenticate", #"Digest realm="one", nonce="1", algorithm=MD5"#)
        headers.add("WWW-Authenticate", #"Digest realm="one", nonce="2", algorithm=SHA-256"#)
        headers.add("WWW-Authenticate", #"Digest realm="two", nonce="3""#)
        headers.add("WWW-Authenticate", #"Newfangled realm="three""#)
        let chosen = headers.digestChallenges(proxy: false)
        #expect(chosen.map(\.realm) == ["one", "two"])
        #expect(chosen.map(\.algorithm) == [.sha256, .md5])
        #expect(headers.digestChallenges(proxy: true).isEmpty)
    }
}

/// How the user agent answers challenges, against a registrar or proxy that writes SIP by hand,
/// on an embedded network with RFC 3261's timers.
@Suite struct AuthenticationFlowTests {
    static let credentials = SIPCredentials(username: "alice", password: "secret")

    static func agentAndPeer(credentials: SIPCredentials? = credentials) throws -> (EmbeddedSIPNetwork, SIPUserAgent, EmbeddedSIPPeer) {
        let network = EmbeddedSIPNetwork()
        let agent = try network.agent(user: "alice", credentials: credentials)
        return (network, agent, try network.makePeer())
    }

    /// A response to `request` from the raw peer (a registrar or proxy).
    static func response(_ status: Int, to request: SIPRequest, extra: [(String, String)] = [], toTag: String? = "peer",
                         body: [UInt8] = []) -> [UInt8] {
        var headers = SIPHeaders()
        for field in request.headers where ["Via", "From", "Call-ID", "CSeq"].contains(field.name) { headers.add(field) }
        headers.add("To", (request.headers["To"] ?? "") + (toTag.map { ";tag=\($0)" } ?? ""))
        for (name, value) in extra { headers.add(name, value) }
        return SIPResponse(statusCode: status, headers: headers, body: body).serialized()
    }

    /// The next `method` request the peer gets, waiting for one an async call sends from its task.
    static func nextRequest(_ peer: EmbeddedSIPPeer, _ method: SIPMethod) async -> SIPRequest? {
        while await peer.waitForDatagram() {
            if let request = peer.next(method) { return request }
        }
        return nil
    }

    /// What a registrar that knows the password computes, from the fields the agent sent.
    static func expectedResponse(_ authorization: String, method: String, password: String = "secret") throws -> Bool {
        let fields = try #require(DigestChallenge.parse(authorization))
        func field(_ name: String) -> String? {
            let body = authorization.dropFirst("Digest ".count)
            for part in body.split(separator: ",") {
                let pair = part.split(separator: "=", maxSplits: 1)
                guard pair.count == 2, pair[0].drop(while: { $0 == " " }) == name else { continue }
                let value = String(pair[1])
                return value.hasPrefix("\"") ? String(value.dropFirst().dropLast()) : value
            }
            return nil
        }
        let ha1 = fields.algorithm.digest(Array("\(try #require(field("username"))):\(fields.realm):\(password)".utf8))
        let ha2 = fields.algorithm.digest(Array("\(method):\(try #require(field("uri")))".utf8))
        let response = fields.algorithm.digest(Array(
            "\(ha1):\(fields.nonce):\(try #require(field("nc"))):\(try #require(field("cnonce"))):auth:\(ha2)".utf8))
        return field("response") == response
    }

    @Test func registerAnswersTheChallengeRefreshesAndUnregisters() async throws {
        let (network, agent, registrar) = try Self.agentAndPeer()
        let registrarURI = SIPURI(host: "127.0.0.1", port: registrar.port)
        async let granted = agent.register(at: registrarURI, expires: 600)

        let first = try #require(await Self.nextRequest(registrar, .register))
        #expect(first.uri == registrarURI)
        #expect(try first.headers.to().uri == SIPURI(user: "alice", host: "127.0.0.1"))
        #expect(first.headers["Expires"] == "600")
        #expect(first.headers["Authorization"] == nil)
        registrar.send(Self.response(401, to: first, extra: [("WWW-Authenticate", #"Digest realm="home", nonce="n1", qop="auth", algorithm=SHA-256"#)]),
                       to: agent.localAddress)

        let second = try #require(await Self.nextRequest(registrar, .register))
        #expect(try second.headers.cseq().sequence == first.headers.cseq().sequence + 1)
        #expect(try second.headers.callID() == first.headers.callID())
        #expect(try second.headers.topVia().branch != first.headers.topVia().branch)
        let authorization = try #require(second.headers["Authorization"])
        #expect(authorization.contains(#"realm="home""#) && authorization.contains("algorithm=SHA-256"))
        #expect(try Self.expectedResponse(authorization, method: "REGISTER"))
        // The registrar grants 300 s: the binding is refreshed 60 s early (80 % of it).
        registrar.send(Self.response(200, to: second, extra: [("Contact", "<\(agent.uri(user: "alice"))>;expires=300")]),
                       to: agent.localAddress)
        #expect(try await granted == 300)
        #expect(agent.statistics.challengesAnswered == 1)

        let registered = network.elapsed
        let refresh = try #require(registrar.next(.register, within: .seconds(300)))
        #expect(network.elapsed - registered == .seconds(240))
        #expect(try refresh.headers.cseq().sequence == second.headers.cseq().sequence + 1)
        #expect(try refresh.headers.callID() == first.headers.callID())
        registrar.send(Self.response(200, to: refresh, extra: [("Expires", "60")]), to: agent.localAddress)

        async let removed: Void = agent.unregister()
        let unregister = try #require(await Self.nextRequest(registrar, .register))
        #expect(unregister.headers["Expires"] == "0")
        registrar.send(Self.response(200, to: unregister), to: agent.localAddress)
        try await removed
    }

    @Test func refusedCredentialsFailTheRegistrationWithoutALoop() async throws {
        let (network, agent, registrar) = try Self.agentAndPeer()
        let challenge = [("WWW-Authenticate", #"Digest realm="home", nonce="n1""#)]
        let outcome = Task { try await agent.register(at: SIPURI(host: "127.0.0.1", port: registrar.port)) }
        for _ in 0..<2 {
            let request = try #require(await Self.nextRequest(registrar, .register))
            registrar.send(Self.response(401, to: request, extra: challenge), to: agent.localAddress)
        }
        await #expect(throws: SIPError.rejected(status: 401, reason: "Unauthorized")) { try await outcome.value }
        network.advance(by: .seconds(40))
        #expect(registrar.requests(.register).isEmpty)
    }

    /// A stale nonce means the credentials were right: they are sent again with the new nonce.
    @Test func aStaleNonceIsAnsweredAgain() async throws {
        let (_, agent, registrar) = try Self.agentAndPeer()
        async let granted = agent.register(at: SIPURI(host: "127.0.0.1", port: registrar.port), expires: 300)
        let first = try #require(await Self.nextRequest(registrar, .register))
        registrar.send(Self.response(401, to: first, extra: [("WWW-Authenticate", #"Digest realm="home", nonce="old""#)]),
                       to: agent.localAddress)
        let second = try #require(await Self.nextRequest(registrar, .register))
        registrar.send(Self.response(401, to: second, extra: [("WWW-Authenticate", #"Digest realm="home", nonce="new", stale=true"#)]),
                       to: agent.localAddress)
        let third = try #require(await Self.nextRequest(registrar, .register))
        #expect(third.headers["Authorization"]?.contains(#"nonce="new""#) == true)
        #expect((try? third.headers.values("Authorization"))?.count == 1)
        registrar.send(Self.response(200, to: third), to: agent.localAddress)
        #expect(try await granted == 300)
    }

    /// A proxy's 407 to our INVITE: the INVITE again with the next CSeq, in the same call
    /// (credentials for the proxy's realm: without a realm, only a registrar's is answered).
    @Test func inviteChallengedByAProxyIsSentAgainAndTheCallGoesOn() async throws {
        let (_, agent, proxy) = try Self.agentAndPeer(credentials: SIPCredentials(username: "alice", password: "secret", realm: "proxy"))
        let call = try agent.invite(to: SIPURI(user: "bob", host: "127.0.0.1", port: proxy.port), offer: opusSDP(port: 4000))
        let events = Recorder(call.events)
        let first = try #require(await Self.nextRequest(proxy, .invite))
        proxy.send(Self.response(407, to: first, extra: [("Proxy-Authenticate", #"Digest realm="proxy", nonce="p1", qop="auth""#)]),
                   to: agent.localAddress)
        // The 407 is acknowledged in its own transaction, then the INVITE goes again.
        let ack = try #require(await Self.nextRequest(proxy, .ack))
        #expect(try ack.headers.topVia().branch == first.headers.topVia().branch)
        let second = try #require(await Self.nextRequest(proxy, .invite))
        #expect(try second.headers.cseq() == SIPCSeq(2, .invite))
        #expect(try second.headers.callID() == first.headers.callID())
        #expect(try second.headers.from().tag == first.headers.from().tag)
        #expect(second.body == first.body)
        let authorization = try #require(second.headers["Proxy-Authorization"])
        #expect(try Self.expectedResponse(authorization, method: "INVITE"))

        proxy.send(Self.response(200, to: second, extra: [("Contact", "<sip:bob@127.0.0.1:\(proxy.port)>"),
                                                          ("Content-Type", "application/sdp")], body: opusSDP(port: 5000).bytes),
                   to: agent.localAddress)
        let ack2xx = try #require(await Self.nextRequest(proxy, .ack))
        #expect(try ack2xx.headers.cseq() == SIPCSeq(2, .ack))
        #expect(await events.wait { $0.contains { if case .answered = $0 { true } else { false } } })
    }

    @Test func withoutCredentialsAChallengeEndsTheCall() async throws {
        let (_, agent, proxy) = try Self.agentAndPeer(credentials: nil)
        let call = try agent.invite(to: SIPURI(user: "bob", host: "127.0.0.1", port: proxy.port), offer: opusSDP(port: 4000))
        let events = Recorder(call.events)
        let first = try #require(await Self.nextRequest(proxy, .invite))
        proxy.send(Self.response(407, to: first, extra: [("Proxy-Authenticate", #"Digest realm="proxy", nonce="p1""#)]),
                   to: agent.localAddress)
        #expect(await events.endReason() == .failed(status: 407, reason: "Proxy Authentication Required"))
    }

    /// Closing a registered agent removes its binding.
    @Test func closeUnregisters() async throws {
        let (_, agent, registrar) = try Self.agentAndPeer()
        async let granted = agent.register(at: SIPURI(host: "127.0.0.1", port: registrar.port), expires: 300)
        let request = try #require(await Self.nextRequest(registrar, .register))
        registrar.send(Self.response(200, to: request), to: agent.localAddress)
        _ = try await granted
        agent.close()
        let removal = try #require(await Self.nextRequest(registrar, .register))
        #expect(removal.headers["Expires"] == "0")
        #expect(try removal.headers.cseq().sequence == request.headers.cseq().sequence + 1)
    }

    /// 423 Interval Too Brief: asked again, once, for the registrar's minimum.
    @Test func intervalTooBriefAsksForTheMinimum() async throws {
        let (_, agent, registrar) = try Self.agentAndPeer()
        async let granted = agent.register(at: SIPURI(host: "127.0.0.1", port: registrar.port), expires: 60)
        let first = try #require(await Self.nextRequest(registrar, .register))
        registrar.send(Self.response(423, to: first, extra: [("Min-Expires", "1800")]), to: agent.localAddress)
        let second = try #require(await Self.nextRequest(registrar, .register))
        #expect(second.headers["Expires"] == "1800")
        #expect(try second.headers.cseq().sequence == first.headers.cseq().sequence + 1)
        registrar.send(Self.response(200, to: second), to: agent.localAddress)
        #expect(try await granted == 1800)
    }

    /// A 2xx that lists our Contact with expires=0 did not register us: no refresh loop.
    @Test func aBindingTheRegistrarDidNotKeepIsAFailure() async throws {
        let (network, agent, registrar) = try Self.agentAndPeer()
        let outcome = Task { try await agent.register(at: SIPURI(host: "127.0.0.1", port: registrar.port)) }
        let request = try #require(await Self.nextRequest(registrar, .register))
        registrar.send(Self.response(200, to: request, extra: [("Contact", "<\(agent.uri(user: "alice"))>;expires=0")]),
                       to: agent.localAddress)
        await #expect(throws: SIPError.rejected(status: 200, reason: "binding not kept")) { try await outcome.value }
        #expect(agent.registrar == nil)
        network.advance(by: .seconds(3600))
        #expect(registrar.requests(.register).isEmpty)
    }

    @Test func aLifetimeUnderOneSecondIsRefused() async throws {
        let (_, agent, _) = try Self.agentAndPeer()
        await #expect(throws: SIPError.invalidExpires(0)) { try await agent.register(at: SIPURI(host: "127.0.0.1", port: 9), expires: 0) }
    }
}

