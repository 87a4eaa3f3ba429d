import Logging
import OpenSSL
import Platform

/// TLS for a user agent (SIP over TLS, RFC 3261 section 26.2; `sips:` URIs).
///
/// Thread safety: a value type; safe to use from any thread.
public struct SIPTLSConfiguration: Sendable, Hashable {
    /// A PEM file of the certificate authorities that sign servers' certificates; nil: the
    /// system's store.
    public var caFile: String?
    /// A PEM certificate (chain) and its key, for incoming TLS connections; without them the
    /// agent makes TLS connections but listens for none.
    public var certificateFile: String?
    public var keyFile: String?
    /// The port to listen on for TLS (0: any free one).
    public var port: UInt16
    /// Whether servers' certificates are checked (chain and name, RFC 5922): true unless a
    /// test talks to a peer with a self-signed certificate.
    public var verifiesServers: Bool

    public init(caFile: String? = nil, certificateFile: String? = nil, keyFile: String? = nil, port: UInt16 = 0,
                verifiesServers: Bool = true) {
        self.caFile = caFile
        self.certificateFile = certificateFile
        self.keyFile = keyFile
        self.port = port
        self.verifiesServers = verifiesServers
    }
}

extension SIPTransports {
    /// The sockets and TLS contexts a configuration asks for; all or nothing.
    static func make(for configuration: SIPUserAgent.Configuration) throws(SIPError) -> SIPTransports {
        do {
            let udp = try UDPSocket(bindingTo: configuration.localAddress)
            let tcp = configuration.listensOnTCP ? try TCPListener(bindingTo: udp.localAddress) : nil
            var tlsListener: TCPListener?, serverTLS: TLSContext?, clientTLS: TLSContext?
            if let tls = configuration.tls {
                var client = TLSConfiguration.client(serverName: nil, trust: tls.caFile.map { .caFile($0) } ?? .system)
                client.verifyPeer = tls.verifiesServers
                clientTLS = try TLSContext(client)
                if let certificate = tls.certificateFile, let key = tls.keyFile {
                    serverTLS = try TLSContext(.server(certificateChainFile: certificate, privateKeyFile: key))
                    tlsListener = try TCPListener(bindingTo: configuration.localAddress.with(port: tls.port))
                }
            }
            return try SIPTransports(udp: udp, tcpListener: tcp, tlsListener: tlsListener, serverTLS: serverTLS,
                                     clientTLS: clientTLS, limits: configuration.limits, logger: configuration.logger)
        } catch let error as SocketError {
            throw .cannotListen(error.description)
        } catch {
            throw .cannotListen("TLS: \(error)")
        }
    }
}
