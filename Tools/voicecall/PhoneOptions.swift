import ToolSupport
import ArgumentParser
import AudioIO
import Foundation
import MediaNegotiation
import Opus
import RTP
import SIP
import Platform
import VoiceCall
import VoiceProcessing

/// Where a phone's audio goes: the route asked for at the start of a call.
enum RouteChoice: String, ExpressibleByArgument, CaseIterable, Sendable {
    /// The session's policy: the receiver, a headset when one is plugged in, and (raise to ear)
    /// the receiver near the ear and the speaker away from it once the proximity sensor reads.
    case auto
    case receiver
    case speaker
    case headset
}

/// The options `voicecall listen` and `voicecall call` share: the SIP endpoint, the audio
/// (an ALSA PCM, a route map, or WAV files), the route and the call's length.
struct PhoneOptions: ParsableArguments {
    @Option(help: "SIP address to listen on and send from (HOST:PORT; port 0: any free port). Default: 0.0.0.0:5060 to listen, 0.0.0.0:0 to call.")
    var sip: String?
    @Option(help: "Our SIP user name.") var user = "voicecall"
    @Option(help: "Register at this SIP registrar first (sip:HOST[:PORT]): calls to sip:USER@HOST then reach us through it, and our calls come from that address.")
    var registrar: String?
    @Option(name: .customLong("auth-user"), help: "User name for digest authentication (default: --user).") var authUser: String?
    @Option(name: .customLong("account"), help: "Also register at --registrar as USER, answering its challenges with the password in PASSWORD-FILE (its first line): calls to sip:USER@HOST reach us too (USER:PASSWORD-FILE; repeatable).")
    var accounts: [String] = []
    @Option(name: .customLong("auth-realm"), help: "Answer digest challenges for this realm only (a PBX's or proxy's). Default: only the registrar's (--registrar), learned from its first challenge.")
    var authRealm: String?
    @Option(name: .customLong("password-file"), help: "Answer a proxy's or registrar's digest challenge (401/407) with the password in this file (its first line). Default: the environment variable \(Self.passwordVariable), if set.")
    var passwordFile: String?
    @Option(help: "ALSA PCM for capture and playback (default, pulse, pipewire, hw:0, plughw:1,0, ...). The default without --input/--output/--route-map.")
    var device: String?
    @Option(name: .customLong("route-map"), help: "A route map (JSON): which ALSA PCM and jack stand for each port (see Docs/audio-io.md).")
    var routeMap: String?
    @Option(help: "Instead of a microphone: this WAV file is the talker (any rate, mono or stereo).") var input: String?
    @Option(help: "Instead of a loudspeaker: write what we played (the peer's voice) to this WAV file.") var output: String?
    @Option(name: .customLong("acoustic-room"), help: "With WAV files: the room the phone is in (none, or speakerphone: a table 12 cm from the mic, 0.3 s reverberation).")
    var room: FileRoom = .none
    @Option(help: "Route at the start of the call: \(RouteChoice.allCases.map(\.rawValue).joined(separator: "|")).") var route: RouteChoice = .auto
    @Option(help: "Hang up after this many seconds of conversation (default: when the peer hangs up, q or Ctrl-C).") var seconds: Double?
    @Option(help: "Device and codec sample rate (8000, 12000, 16000, 24000 or 48000).") var rate = 16000
    @Option(name: .customLong("proximity-threshold"), help: "Read a Linux IIO proximity sensor; raw values at or above this mean near (default: a simulated sensor, key p).")
    var proximityThreshold: Int?
    @Option(help: "Opus bitrate we send at, bit/s (the peer's SDP maxaveragebitrate caps it).") var bitrate = 24000
    @Flag(name: .customLong("no-voice-processing"), help: "Send the microphone as it is: no echo cancellation, noise suppression or AGC (a headset, a measurement).")
    var noVoiceProcessing = false
    @Option(help: "DTMF keys (0-9, *, #, A-D) to send a second after the call connects, as RFC 4733 telephone events (an IVR menu, a PIN).")
    var dtmf: String?
    @Option(help: "SIP transport for targets that name none (udp, tcp, tls; sips: URIs always use TLS). With tcp or tls, also listen on it.")
    var transport: TransportChoice = .udp
    @Option(name: .customLong("tls-ca"), help: "Check TLS servers' certificates against the CAs in this PEM file (default: the system's store).")
    var tlsCA: String?
    @Option(name: .customLong("tls-cert"), help: "Our TLS certificate (PEM), to listen for TLS with --tls-key.") var tlsCert: String?
    @Option(name: .customLong("tls-key"), help: "The private key (PEM) of --tls-cert.") var tlsKey: String?
    @Option(name: .customLong("tls-port"), help: "The port to listen on for TLS (default: the SIP port + 1, or any free one for port 0).")
    var tlsPort: UInt16?
    @Option(name: .customLong("outbound-proxy"), help: "Send every request outside a call through this proxy first (sip:HOST[:PORT][;transport=tcp|tls]).")
    var outboundProxy: String?
    @Option(name: .customLong("dns-server"), help: "Ask this DNS server (ADDRESS:PORT) for the SRV and address records of the names given (registrar, proxy, target). Default: the system's.")
    var dnsServer: String?
    @Option(name: .customLong("media-encryption"), help: "Encrypt media with SRTP: off, sdes (keys in the SDP, over TLS signalling unless --allow-clear-keys) or dtls (DTLS-SRTP).")
    var mediaEncryption: MediaEncryptionChoice = .off
    @Option(help: "With --media-encryption: optional (a peer that cannot encrypt gets a call in clear) or mandatory (it gets 488, or the call ends).")
    var srtp: SRTPRequirementChoice = .optional
    @Flag(name: .customLong("allow-clear-keys"), help: "Let SDES keys travel over signalling that is not TLS (UDP, TCP): anyone on the path can then read them.")
    var allowClearKeys = false
    @Option(help: "The codecs to offer and accept, best first, comma-separated: opus, g722, pcmu, pcma (default: all four in that order).")
    var codecs: String?
    @Flag(help: "Send nothing while we are silent: Opus's DTX, or with G.711 and G.722 comfort noise (RFC 3389) to a peer that offered CN.")
    var dtx = false
    @Flag(help: "Print one JSON object as the last line.") var json = false
    @Option(name: .customLong("voice-tuning"), help: "The voice processing's tuning, JSON (`aecbench tuning --print`); missing keys keep their defaults.")
    var voiceTuning: String?

    enum FileRoom: String, ExpressibleByArgument, Sendable { case none, speakerphone }

    /// WAV files on a simulated phone instead of a sound card.
    var usesFiles: Bool { input != nil || output != nil }

    /// The sound card's ports: the route map given, or one PCM for them all; nil with WAV files.
    func soundCardPorts() throws -> RouteMap? {
        if let routeMap { return try RouteMap.load(routeMap) }
        return usesFiles ? nil : PhoneEndpoint.singlePCM(device ?? "default")
    }

    static let passwordVariable = "VOICECALL_SIP_PASSWORD"

    /// The credentials for digest challenges: --password-file, else $VOICECALL_SIP_PASSWORD; nil without either.
    func credentials() throws -> SIPCredentials? {
        let password: String
        if let passwordFile {
            guard let text = try? String(contentsOfFile: passwordFile, encoding: .utf8) else {
                throw ValidationError("--password-file: cannot read \(passwordFile)")
            }
            password = String(text.split(separator: "\n", omittingEmptySubsequences: false).first ?? "")
        } else if let value = ProcessInfo.processInfo.environment[Self.passwordVariable] {
            password = value
        } else {
            return nil
        }
        return SIPCredentials(username: authUser ?? user, password: password, realm: authRealm)
    }

    /// `--account USER:PASSWORD-FILE` values as users and their credentials (the digest user
    /// name is USER, for --auth-realm when given).
    func extraAccounts() throws -> [(user: String, credentials: SIPCredentials)] {
        try accounts.map { value in
            let parts = value.split(separator: ":", maxSplits: 1).map(String.init)
            guard parts.count == 2, !parts[0].isEmpty else { throw ValidationError("--account: '\(value)' is not USER:PASSWORD-FILE") }
            guard let text = try? String(contentsOfFile: parts[1], encoding: .utf8) else {
                throw ValidationError("--account: cannot read \(parts[1])")
            }
            let password = String(text.split(separator: "\n", omittingEmptySubsequences: false).first ?? "")
            return (parts[0], SIPCredentials(username: parts[0], password: password, realm: authRealm))
        }
    }

    /// `--codecs` as a list; throws naming a codec that is not one.
    func codecList() throws -> [AudioCodec] {
        guard let codecs else { return AudioCodec.preference }
        var list: [AudioCodec] = []
        for name in codecs.split(separator: ",") {
            guard let codec = AudioCodec(name: name.trimmingCharacters(in: .whitespaces)) else {
                throw ValidationError("--codecs: '\(name)' is not a codec (opus, g722, pcmu, pcma)")
            }
            if !list.contains(codec) { list.append(codec) }
        }
        guard !list.isEmpty else { throw ValidationError("--codecs: name at least one codec") }
        return list
    }

    /// The transport and codec options as a call configuration's (TLS only when asked for).
    func apply(to configuration: inout CallConfiguration) throws {
        configuration.codecs = try codecList()
        configuration.codec.dtx = dtx
        if let voiceTuning {
            configuration.voiceProcessing.tuning = try JSONDecoder().decode(VoiceProcessingTuning.self,
                                                                           from: Data(contentsOf: URL(fileURLWithPath: voiceTuning)))
            try configuration.voiceProcessing.tuning.validate()
        }
        configuration.mediaSecurity = MediaSecurityPolicy(encryption: mediaEncryption.value, requirement: srtp.value,
                                                          allowsClearKeys: allowClearKeys)
        configuration.sipTransport = transport.kind
        configuration.listensOnTCP = transport == .tcp
        configuration.outboundProxy = outboundProxy.flatMap(SIPURI.init)
        if let dnsServer { configuration.dnsServers = [try SocketAddress(parsing: dnsServer)] }
        guard transport == .tls || tlsCA != nil || tlsCert != nil else { return }
        let sipPort = try SocketAddress(parsing: configuration.sipAddress).port
        configuration.tls = SIPTLSConfiguration(caFile: tlsCA, certificateFile: tlsCert, keyFile: tlsKey,
                                                port: tlsPort ?? (sipPort == 0 ? 0 : sipPort &+ 1))
    }

    func validate() throws {
        if srtp == .mandatory, mediaEncryption == .off {
            throw ValidationError("--srtp mandatory needs --media-encryption sdes or dtls")
        }
        if let outboundProxy { guard SIPURI(outboundProxy) != nil else { throw ValidationError("--outbound-proxy: not a SIP URI: \(outboundProxy)") } }
        _ = try codecList()
        if let dnsServer { guard (try? SocketAddress(parsing: dnsServer)) != nil else { throw ValidationError("--dns-server: not ADDRESS:PORT: \(dnsServer)") } }
        guard (tlsCert == nil) == (tlsKey == nil) else { throw ValidationError("--tls-cert and --tls-key go together") }
        for file in [tlsCA, tlsCert, tlsKey].compactMap({ $0 }) where !FileManager.default.isReadableFile(atPath: file) {
            throw ValidationError("cannot read \(file)")
        }
        if let dtmf, let bad = dtmf.first(where: { TelephoneEvent.event(forKey: $0) == nil }) {
            throw ValidationError("--dtmf: '\(bad)' is not a DTMF key (0-9, *, #, A-D)")
        }
        if let registrar { guard SIPURI(registrar) != nil else { throw ValidationError("--registrar: not a SIP URI: \(registrar)") } }
        if authUser != nil || authRealm != nil || passwordFile != nil || registrar != nil { _ = try credentials() }
        let choices = [device != nil, routeMap != nil, input != nil || output != nil].filter { $0 }.count
        guard choices <= 1 else { throw ValidationError("give one of --device, --route-map, or --input/--output") }
        try OpusOptions.check(OpusCallConfiguration(sampleRate: rate, bitrate: bitrate))
        if let seconds { guard seconds > 0, seconds <= 86_400 else { throw ValidationError("--seconds must be in (0, 86400]") } }
        if room != .none, input == nil, output == nil { throw ValidationError("--acoustic-room needs WAV files (--input/--output)") }
        if proximityThreshold != nil, usesFiles { throw ValidationError("--proximity-threshold needs a sound card (--device or --route-map)") }
    }
}

/// `--media-encryption`.
enum MediaEncryptionChoice: String, ExpressibleByArgument, CaseIterable, Sendable {
    case off, sdes, dtls
    var value: MediaEncryption { MediaEncryption(rawValue: rawValue)! }
}

/// `--srtp`.
enum SRTPRequirementChoice: String, ExpressibleByArgument, CaseIterable, Sendable {
    case optional, mandatory
    var value: SRTPRequirement { SRTPRequirement(rawValue: rawValue)! }
}

/// `--transport`: the SIP transport for targets that name none.
enum TransportChoice: String, ExpressibleByArgument, CaseIterable, Sendable {
    case udp, tcp, tls
    var kind: SIPTransportKind { SIPTransportKind(uriParameter: rawValue)! }
}
