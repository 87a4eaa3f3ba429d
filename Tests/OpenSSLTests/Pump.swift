import Foundation
import OpenSSL
import TestSupport

/// Test fixtures: a fresh identity written as PEM files, and contexts over it.
struct Fixture: Sendable {
    let directory = TemporaryDirectory(prefix: "callaudio-tls")
    let identity: TLSIdentity
    let caFile: String
    let certificateFile: String
    let keyFile: String

    init(commonName: String = "callaudio.test", alternativeNames: [String] = []) throws {
        identity = try TLSIdentity.generateSelfSigned(commonName: commonName, alternativeNames: alternativeNames)
        caFile = directory.file("ca.pem")
        certificateFile = caFile
        keyFile = directory.file("key.pem")
        try write(identity.certificatePEM, to: caFile)
        try write(identity.privateKeyPEM, to: keyFile)
    }

    func write(_ text: String, to path: String) throws {
        try text.write(toFile: path, atomically: true, encoding: .utf8)
    }

    func serverContext(transport: TLSConfiguration.Transport = .stream) throws -> TLSContext {
        try TLSContext(.server(certificateChainFile: certificateFile, privateKeyFile: keyFile, transport: transport))
    }

    func clientContext(serverName: String = "callaudio.test") throws -> TLSContext {
        try TLSContext(.client(serverName: serverName, trust: .caFile(caFile)))
    }
}

/// Moves ciphertext both ways until neither side has anything to send, advancing both;
/// returns the first error either side throws. `drop` may discard datagrams in flight
/// (returns true to drop), `tamper` may change what is delivered.
struct Pump {
    var clientError: TLSError?
    var serverError: TLSError?

    @discardableResult
    static func run(_ client: inout TLSSession, _ server: inout TLSSession, rounds: Int = 50,
                    drop: (_ fromClient: Bool, _ packet: [UInt8]) -> Bool = { _, _ in false }) -> Pump {
        var result = Pump()
        for _ in 0..<rounds {
            var moved = false
            while let packet = client.takeOutgoing() {
                moved = true
                if !drop(true, packet) { do { try server.receive(packet) } catch { result.serverError = result.serverError ?? error } }
            }
            while let packet = server.takeOutgoing() {
                moved = true
                if !drop(false, packet) { do { try client.receive(packet) } catch { result.clientError = result.clientError ?? error } }
            }
            do { try client.advance() } catch { result.clientError = result.clientError ?? error }
            do { try server.advance() } catch { result.serverError = result.serverError ?? error }
            if !moved, client.outgoingByteCount == 0, server.outgoingByteCount == 0 { break }
        }
        return result
    }

    /// Moves ciphertext one way only.
    static func deliver(_ from: inout TLSSession, to: inout TLSSession) throws(TLSError) {
        while let packet = from.takeOutgoing() { try to.receive(packet) }
    }
}
