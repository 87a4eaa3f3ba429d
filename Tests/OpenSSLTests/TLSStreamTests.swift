import Foundation
import OpenSSL
import Testing
import TestSupport

@Suite("TLS over memory")
struct TLSStreamTests {
    @Test("Handshake, data both ways (1 MB in pieces), close_notify")
    func handshakeAndData() throws {
        let fixture = try Fixture()
        defer { fixture.directory.remove() }
        var client = try fixture.clientContext().makeSession()
        var server = try fixture.serverContext().makeSession()
        let pump = Pump.run(&client, &server)
        #expect(pump.clientError == nil && pump.serverError == nil, "\(String(describing: pump.clientError)) \(String(describing: pump.serverError))")
        #expect(client.state == .established && server.state == .established)
        #expect(client.protocolVersion == "TLSv1.3" && server.protocolVersion == "TLSv1.3")
        #expect(client.cipher != nil && client.cipher == server.cipher)

        try client.write(Array("INVITE sip:bob@example.com SIP/2.0\r\n".utf8))
        Pump.run(&client, &server)
        #expect(String(decoding: try server.readAvailable(), as: UTF8.self) == "INVITE sip:bob@example.com SIP/2.0\r\n")
        try server.write(Array("SIP/2.0 200 OK\r\n".utf8))
        Pump.run(&client, &server)
        #expect(try client.readAvailable() == Array("SIP/2.0 200 OK\r\n".utf8))

        // 1 MB in uneven pieces, read as it arrives: the receiver sees the same bytes in order.
        let big = (0..<1_000_000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 9) }
        var received: [UInt8] = []
        var offset = 0
        var piece = 1000
        while offset < big.count {
            let end = min(big.count, offset + piece)
            try client.write(big[offset..<end])
            offset = end
            piece = piece % 40_000 + 7_919
            while let bytes = client.takeOutgoing() { try server.receive(bytes); received += try server.readAvailable() }
        }
        #expect(received.count == big.count)
        #expect(received == big)

        client.close()
        #expect(client.state == .closed)
        try Pump.deliver(&client, to: &server)
        #expect(try server.readAvailable().isEmpty)
        #expect(server.state == .closed)
        #expect(throws: TLSError.closed) { try server.write([1, 2, 3]) }
    }

    @Test("A server whose minimum is TLS 1.3 accepts a default client")
    func minimumVersion() throws {
        let fixture = try Fixture()
        defer { fixture.directory.remove() }
        var configuration = TLSConfiguration.server(identity: fixture.identity)
        configuration.minimumVersion = .v1_3
        var server = try TLSContext(configuration).makeSession()
        var client = try fixture.clientContext().makeSession()
        Pump.run(&client, &server)
        #expect(client.state == .established && server.protocolVersion == "TLSv1.3")
    }

    @Test("Fingerprints: each side sees the other's certificate as the other computes it")
    func fingerprints() throws {
        let serverFixture = try Fixture()
        let clientIdentity = try TLSIdentity.generateSelfSigned(commonName: "client.callaudio.test")
        defer { serverFixture.directory.remove() }
        var serverConfiguration = TLSConfiguration.server(identity: serverFixture.identity)
        serverConfiguration.verifyPeer = true
        serverConfiguration.trust = .none  // client certificates checked by fingerprint
        var clientConfiguration = TLSConfiguration.client(serverName: "callaudio.test", trust: .caFile(serverFixture.caFile))
        clientConfiguration.identity = clientIdentity
        var server = try TLSContext(serverConfiguration).makeSession()
        var client = try TLSContext(clientConfiguration).makeSession()
        let pump = Pump.run(&client, &server)
        #expect(pump.clientError == nil && pump.serverError == nil)
        #expect(client.peerCertificateFingerprint() == serverFixture.identity.fingerprint())
        #expect(server.peerCertificateFingerprint() == clientIdentity.fingerprint())
        #expect(client.peerCertificateFingerprint(.sha512) == serverFixture.identity.fingerprint(.sha512))
        let sdp = serverFixture.identity.sdpFingerprint
        #expect(sdp.count == 32 * 3 - 1 && sdp.split(separator: ":").count == 32)
        #expect(sdp == sdp.uppercased())
        #expect(client.peerVerification == "ok")
    }

    @Test("An identity survives PEM export and reload; a key from another identity is refused")
    func identityPEM() throws {
        let a = try TLSIdentity.generateSelfSigned(commonName: "a.test")
        let b = try TLSIdentity.generateSelfSigned(commonName: "b.test")
        #expect(a.fingerprint() != b.fingerprint())
        let reloaded = try TLSIdentity(certificatePEM: a.certificatePEM, privateKeyPEM: a.privateKeyPEM)
        #expect(reloaded.fingerprint() == a.fingerprint())
        #expect(a.certificatePEM.hasPrefix("-----BEGIN CERTIFICATE-----"))
        #expect(throws: TLSError.keyMismatch) { try TLSIdentity(certificatePEM: a.certificatePEM, privateKeyPEM: b.privateKeyPEM) }
        #expect(throws: TLSError.self) { try TLSIdentity(certificatePEM: "not a certificate", privateKeyPEM: a.privateKeyPEM) }
    }

    @Test("An IP address as server name is verified against the certificate's IP entries")
    func ipAddressName() throws {
        let fixture = try Fixture(commonName: "127.0.0.1")
        defer { fixture.directory.remove() }
        var client = try fixture.clientContext(serverName: "127.0.0.1").makeSession()
        var server = try fixture.serverContext().makeSession()
        let pump = Pump.run(&client, &server)
        #expect(pump.clientError == nil && client.state == .established)
        var other = try fixture.clientContext(serverName: "127.0.0.2").makeSession()
        var server2 = try fixture.serverContext().makeSession()
        let failed = Pump.run(&other, &server2)
        #expect(failed.clientError == .certificateVerifyFailed)
        #expect(failed.clientError?.message.contains("IP address mismatch") == true, "\(String(describing: failed.clientError))")
    }
}
