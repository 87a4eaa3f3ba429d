import Foundation
import OpenSSL
import Testing
import TestSupport

@Suite("TLS failures")
struct TLSFailureTests {
    @Test("A host-name mismatch fails with the verify result's text")
    func hostnameMismatch() throws {
        let fixture = try Fixture()
        defer { fixture.directory.remove() }
        var client = try fixture.clientContext(serverName: "other.test").makeSession()
        var server = try fixture.serverContext().makeSession()
        let pump = Pump.run(&client, &server)
        let error = try #require(pump.clientError)
        #expect(error == .certificateVerifyFailed)
        #expect(error.message.contains("certificate verify failed: hostname mismatch"), "\(error)")
        #expect(error.verifyResult != nil)
        #expect(client.state == .failed)
        // The client's alert reached the server, which fails too rather than waiting.
        #expect(pump.serverError != nil)
    }

    @Test("An untrusted (self-signed, not in the CA file) certificate is refused")
    func untrusted() throws {
        let trusted = try Fixture(), stranger = try Fixture()
        defer { trusted.directory.remove(); stranger.directory.remove() }
        var client = try trusted.clientContext().makeSession()
        var server = try stranger.serverContext().makeSession()
        let error = try #require(Pump.run(&client, &server).clientError)
        #expect(error == .certificateVerifyFailed)
        #expect(error.message.contains("self-signed certificate"), "\(error)")
    }

    @Test("The system trust store does not trust a generated certificate")
    func systemTrust() throws {
        let fixture = try Fixture()
        defer { fixture.directory.remove() }
        var client = try TLSContext(.client(serverName: "callaudio.test")).makeSession()
        var server = try fixture.serverContext().makeSession()
        #expect(Pump.run(&client, &server).clientError == .certificateVerifyFailed)
    }

    @Test("Bad configurations throw typed errors when the context is made")
    func badConfigurations() throws {
        let fixture = try Fixture(), other = try Fixture()
        defer { fixture.directory.remove(); other.directory.remove() }
        // A server with no certificate.
        #expect(throws: TLSError.invalidConfiguration) { try TLSContext(TLSConfiguration(role: .server)) }
        // Missing files.
        let missing = fixture.directory.file("missing.pem")
        let noKey = #expect(throws: TLSError.fileNotReadable) {
            try TLSContext(.server(certificateChainFile: fixture.certificateFile, privateKeyFile: missing))
        }
        #expect(noKey?.message.contains("missing.pem") == true)
        #expect(throws: TLSError.fileNotReadable) { try TLSContext(.client(serverName: "x", trust: .caFile(missing))) }
        // A key that is not the certificate's.
        #expect(throws: TLSError.keyMismatch) {
            try TLSContext(.server(certificateChainFile: fixture.certificateFile, privateKeyFile: other.keyFile))
        }
        // A file that is not PEM.
        try fixture.write("garbage\n", to: fixture.directory.file("garbage.pem"))
        let garbage = #expect(throws: TLSError.self) {
            try TLSContext(.server(certificateChainFile: fixture.directory.file("garbage.pem"), privateKeyFile: fixture.keyFile))
        }
        #expect(garbage?.message.hasPrefix("SSL_CTX_use_certificate_chain_file") == true, "\(String(describing: garbage))")
        // SRTP over a stream, DTLS 1.3.
        var srtp = TLSConfiguration.server(identity: fixture.identity)
        srtp.srtpProfiles = "SRTP_AES128_CM_SHA1_80"
        #expect(throws: TLSError.invalidConfiguration) { try TLSContext(srtp) }
        var dtls13 = TLSConfiguration.server(identity: fixture.identity, transport: .datagram)
        dtls13.minimumVersion = .v1_3
        #expect(throws: TLSError.invalidConfiguration) { try TLSContext(dtls13) }
        var badProfile = TLSConfiguration.server(identity: fixture.identity, transport: .datagram)
        badProfile.srtpProfiles = "SRTP_NOT_A_PROFILE"
        #expect(throws: TLSError.self) { try TLSContext(badProfile) }
    }

    @Test("A TLS 1.1-only ClientHello is refused with a protocol-version error")
    func tls11Refused() throws {
        // OpenSSL 3 here refuses to build a 1.1 client at its default security level (and
        // Debian's openssl.cnf sets MinProtocol TLSv1.2), so the hello is written by hand:
        // client_version 3.2, no supported_versions extension, 1.1-era suites.
        let fixture = try Fixture()
        defer { fixture.directory.remove() }
        var server = try fixture.serverContext().makeSession()
        var body: [UInt8] = [0x03, 0x02] + [UInt8](repeating: 0x42, count: 32) + [0x00]  // version, random, no session id
        body += [0x00, 0x06, 0xC0, 0x09, 0xC0, 0x13, 0x00, 0x2F]  // ECDHE-ECDSA/RSA-AES128-SHA, AES128-SHA
        body += [0x01, 0x00]  // null compression
        body += [0x00, 0x00]  // no extensions
        let handshake: [UInt8] = [0x01, 0x00, UInt8(body.count >> 8), UInt8(body.count & 0xFF)] + body
        let record: [UInt8] = [0x16, 0x03, 0x01, UInt8(handshake.count >> 8), UInt8(handshake.count & 0xFF)] + handshake
        try server.receive(record)
        #expect(throws: TLSError.unsupportedProtocol) { try server.advance() }
        #expect(server.state == .failed)
        let alertValue = server.takeOutgoing()
        let alert = try #require(alertValue)
        #expect(alert.first == 0x15)  // an alert record (protocol_version) for the client
    }

    @Test("Garbage fed to a server is an error, never a crash, in bounded memory")
    func garbage() throws {
        let fixture = try Fixture()
        defer { fixture.directory.remove() }
        let context = try fixture.serverContext()
        var generator = SystemRandomNumberGenerator()
        for trial in 0..<200 {
            var server = try context.makeSession()
            let count = Int.random(in: 1...4096, using: &generator)
            var bytes = (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) }
            // Half the trials start like a handshake record so the parser goes deeper.
            if trial % 2 == 0, bytes.count > 5 { bytes.replaceSubrange(0..<3, with: [0x16, 0x03, 0x01]) }
            do {
                try server.receive(bytes)
                try server.advance()
                #expect(server.state == .handshaking, "trial \(trial): garbage was accepted")
            } catch {
                #expect(server.state == .failed)
            }
        }
        var server = try context.makeSession()
        // OpenSSL recognises a plain-HTTP client, and anything else that is not a record.
        let http = #expect(throws: TLSError.self) {
            try server.receive(Array("GET / HTTP/1.1\r\nHost: x\r\n\r\n".utf8))
            try server.advance()
        }
        #expect(http?.message.contains("http request") == true, "\(String(describing: http))")
        var other = try context.makeSession()
        #expect(throws: TLSError.wrongVersionNumber) {
            try other.receive([0x16, 0x07, 0x07, 0x00, 0x10] + [UInt8](repeating: 0, count: 16))
            try other.advance()
        }
        // The buffer limit: a peer that sends without end is refused, not buffered.
        var flooded = try context.makeSession()
        try flooded.receive([UInt8](repeating: 0x16, count: 200 * 1024))
        #expect(throws: TLSError.bufferLimitExceeded) { try flooded.receive([UInt8](repeating: 0x16, count: 100 * 1024)) }
    }

    @Test("Truncated and duplicated records are errors, not crashes")
    func truncatedAndDuplicated() throws {
        let fixture = try Fixture()
        defer { fixture.directory.remove() }
        let clientContext = try fixture.clientContext(), serverContext = try fixture.serverContext()

        func established() throws -> Connected {
            var pair = Connected(client: try clientContext.makeSession(), server: try serverContext.makeSession())
            Pump.run(&pair.client, &pair.server)
            try #require(pair.client.state == .established && pair.server.state == .established)
            return pair
        }

        // Truncated: half a record waits for the rest (nothing read), the rest completes it.
        var pair = try established()
        try pair.client.write(Array("hello".utf8))
        let recordValue = pair.client.takeOutgoing()
        let record = try #require(recordValue)
        try pair.server.receive(record[0..<(record.count / 2)])
        #expect(try pair.server.readAvailable().isEmpty)
        try pair.server.receive(record[(record.count / 2)...])
        #expect(try pair.server.readAvailable() == Array("hello".utf8))

        // Duplicated: a replayed record fails its authentication (sequence numbers moved on).
        try pair.server.receive(record)
        #expect(throws: TLSError.self) { _ = try pair.server.readAvailable() }
        #expect(pair.server.state == .failed)

        // A record cut short and followed by another: the length runs into the next one.
        pair = try established()
        try pair.client.write(Array("first".utf8))
        let firstValue = pair.client.takeOutgoing()
        let first = try #require(firstValue)
        try pair.client.write(Array("second".utf8))
        let secondValue = pair.client.takeOutgoing()
        let second = try #require(secondValue)
        try pair.server.receive(first.dropLast(3))
        try pair.server.receive(second)
        #expect(throws: TLSError.self) { _ = try pair.server.readAvailable() }

        // A flipped bit in the ciphertext.
        pair = try established()
        try pair.client.write(Array("third".utf8))
        let flippedValue = pair.client.takeOutgoing()
        var flipped = try #require(flippedValue)
        flipped[flipped.count - 4] ^= 0x01
        try pair.server.receive(flipped)
        #expect(throws: TLSError.self) { _ = try pair.server.readAvailable() }
    }
}

/// An established client and server (tuples cannot hold non-copyable sessions).
struct Connected: ~Copyable {
    var client: TLSSession
    var server: TLSSession
}
