import Foundation
import OpenSSL
import Testing
import TestSupport

@Suite("DTLS over memory")
struct DTLSTests {
    static let profiles = "SRTP_AES128_CM_SHA1_80:SRTP_AEAD_AES_128_GCM"

    /// DTLS-SRTP as WebRTC and SIP endpoints do it: both sides present a generated certificate,
    /// neither verifies a chain (the SDP fingerprint is checked instead).
    func contexts(serverProfiles: String = profiles) throws -> (client: TLSContext, server: TLSContext,
                                                                 clientIdentity: TLSIdentity, serverIdentity: TLSIdentity) {
        let clientIdentity = try TLSIdentity.generateSelfSigned(commonName: "caller")
        let serverIdentity = try TLSIdentity.generateSelfSigned(commonName: "callee")
        var client = TLSConfiguration.client(serverName: nil, trust: .none, transport: .datagram)
        client.identity = clientIdentity
        client.srtpProfiles = Self.profiles
        var server = TLSConfiguration.server(identity: serverIdentity, transport: .datagram)
        server.trust = .none
        server.verifyPeer = true
        server.srtpProfiles = serverProfiles
        return (try TLSContext(client), try TLSContext(server), clientIdentity, serverIdentity)
    }

    @Test("A DTLS-SRTP handshake: the same profile and keying material on both sides, fingerprints as sent")
    func srtpHandshake() throws {
        let (clientContext, serverContext, clientIdentity, serverIdentity) = try contexts(serverProfiles: "SRTP_AEAD_AES_128_GCM:SRTP_AES128_CM_SHA1_80")
        var client = try clientContext.makeSession()
        var server = try serverContext.makeSession()
        var largest = 0
        let pump = Pump.run(&client, &server) { _, packet in largest = max(largest, packet.count); return false }
        #expect(pump.clientError == nil && pump.serverError == nil, "\(String(describing: pump.clientError)) \(String(describing: pump.serverError))")
        #expect(client.state == .established && server.state == .established)
        #expect(client.protocolVersion == "DTLSv1.2")
        #expect(largest <= 1200, "a datagram of \(largest) bytes")
        // The server picks from the client's list by its own preference... or the client's: both agree.
        let profileValue = client.selectedSRTPProfile
        let profile = try #require(profileValue)
        #expect(profile == server.selectedSRTPProfile)
        #expect(Self.profiles.split(separator: ":").contains { $0 == profile })
        // RFC 5764: 2 * (16-byte key + 14-byte salt) for AES-CM.
        let clientKeys = try client.exportKeyingMaterial(label: "EXTRACTOR-dtls_srtp", length: 60)
        let serverKeys = try server.exportKeyingMaterial(label: "EXTRACTOR-dtls_srtp", length: 60)
        #expect(clientKeys == serverKeys)
        #expect(Set(clientKeys).count > 10)
        #expect(try client.exportKeyingMaterial(label: "EXTRACTOR-other", length: 60) != clientKeys)
        #expect(client.peerCertificateFingerprint() == serverIdentity.fingerprint())
        #expect(server.peerCertificateFingerprint() == clientIdentity.fingerprint())
        let seen = client.peerCertificateFingerprint()
        #expect(seen.map(TLSFingerprintAlgorithm.format) == serverIdentity.sdpFingerprint)

        // Application data: each write is one datagram.
        try client.write(Array("ping".utf8))
        try Pump.deliver(&client, to: &server)
        #expect(try server.readAvailable() == Array("ping".utf8))
        client.close()
        try Pump.deliver(&client, to: &server)
        _ = try server.readAvailable()
        #expect(server.state == .closed)
    }

    @Test("A lost flight is sent again when its retransmission timer expires")
    func retransmission() async throws {
        let (clientContext, serverContext, _, _) = try contexts()
        var client = try clientContext.makeSession()
        var server = try serverContext.makeSession()
        #expect(client.retransmissionDeadline == nil)
        try client.advance()  // the ClientHello
        let deadlineValue = client.retransmissionDeadline
        let deadline = try #require(deadlineValue)
        #expect(deadline > .now && deadline < .now + .seconds(2))
        // Lose the ClientHello.
        var lost = 0
        while client.takeOutgoing() != nil { lost += 1 }
        #expect(lost >= 1)
        let early = try client.handleTimeout()
        #expect(early == false)  // not due yet
        #expect(client.takeOutgoing() == nil)
        try await Task.sleep(until: deadline + .milliseconds(20), clock: .continuous)
        let resentNow = try client.handleTimeout()
        #expect(resentNow)
        var resent = 0
        while let packet = client.takeOutgoing() { resent += 1; try server.receive(packet) }
        #expect(resent >= 1)
        try server.advance()
        // Then lose the server's first flight once too, and let the server's timer resend it.
        while server.takeOutgoing() != nil {}
        let serverDeadlineValue = server.retransmissionDeadline
        let serverDeadline = try #require(serverDeadlineValue)
        try await Task.sleep(until: serverDeadline + .milliseconds(20), clock: .continuous)
        let serverResent = try server.handleTimeout()
        #expect(serverResent)
        let pump = Pump.run(&client, &server)
        #expect(pump.clientError == nil && pump.serverError == nil)
        #expect(client.state == .established && server.state == .established)
        #expect(try client.exportKeyingMaterial(label: "EXTRACTOR-dtls_srtp", length: 60)
                == server.exportKeyingMaterial(label: "EXTRACTOR-dtls_srtp", length: 60))
    }

    @Test("Garbage datagrams are errors or ignored, never a crash")
    func garbageDatagrams() throws {
        let (_, serverContext, _, _) = try contexts()
        var generator = SystemRandomNumberGenerator()
        for trial in 0..<200 {
            var server = try serverContext.makeSession()
            var bytes = (0..<Int.random(in: 1...1500, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) }
            if trial % 2 == 0, bytes.count > 13 { bytes.replaceSubrange(0..<3, with: [0x16, 0xFE, 0xFD]) }
            do {
                try server.receive(bytes)
                try server.advance()
            } catch {
                #expect(server.state == .failed)
            }
        }
    }

    @Test("No common SRTP profile: the handshake still completes without one (RFC 5764 leaves SRTP to fail later)")
    func noCommonProfile() throws {
        let (clientContext, serverContext, _, _) = try contexts(serverProfiles: "SRTP_AEAD_AES_256_GCM")
        var client = try clientContext.makeSession()
        var server = try serverContext.makeSession()
        Pump.run(&client, &server)
        #expect(client.state == .established)
        #expect(client.selectedSRTPProfile == nil && server.selectedSRTPProfile == nil)
    }
}
