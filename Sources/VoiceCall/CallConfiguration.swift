public import Platform
public import AudioIO
public import AudioSession
public import Opus
public import RTP
public import VoiceProcessing
public import MediaNegotiation
public import OpenSSL

public import SIP

/// How a ``CallController`` places and answers calls.
///
/// Thread safety: a value type; safe to use from any thread.
public struct CallConfiguration: Sendable {
    /// Where the audio comes from and goes to.
    public enum Audio: Sendable {
        /// The session's hardware (an `AudioIO/AudioDeviceProvider` such as `AudioIO/ALSAAudioHardware`): the current route's PCMs,
        /// moved to another PCM when the route changes.
        case hardware
        /// A device made per call (a simulated room, WAV files), given the format the session negotiated.
        case device(@Sendable (IOFormat) throws -> any DuplexDevice)
    }

    /// The SIP address to listen on and send from, e.g. "127.0.0.1:5060" (port 0: any free port).
    public var sipAddress: String
    /// The user part of our SIP URI.
    public var userName: String
    /// The display name in our `From` (none when nil).
    public var displayName: String?
    public var audio: Audio
    /// The call's audio and Opus's settings; its rate follows the device's (an Opus rate), and
    /// its frame duration is the packet time whatever the codec.
    public var codec: OpusCallConfiguration
    /// The codecs calls offer and accept, best first (`AudioCodec.preference` by default: Opus,
    /// G.722, PCMU, PCMA). An answer takes the first of these the offer has; a peer that offers
    /// none of them gets 488. G.711 and G.722 need a mono call.
    public var codecs: [AudioCodec] = AudioCodec.preference
    /// Category options for `playAndRecord` + `voiceChat` (for example `.defaultToSpeaker`, `.allowBluetooth`).
    /// By default `.overrideMutedMicrophoneInterruption`: a microphone muted in the desktop's
    /// mixer mutes the call instead of holding it (leave it out to hold, as iOS does by default).
    public var categoryOptions: AudioSession.CategoryOptions
    /// Preferred hardware values set on the session before activation.
    public var preferredSampleRate: Double
    public var preferredIOBufferDuration: Double
    /// Echo cancellation, noise suppression, AGC.
    public var voiceProcessing: VoiceProcessingConfiguration
    /// RTP and RTCP on one port (RFC 5761), offered to the peer.
    public var rtcpMux: Bool
    /// Where RTP for the peer's SDP address is really sent: an impairment relay in tests and
    /// demos (RTCP still goes straight to the peer). Nil: straight to the peer.
    public var mediaPath: (@Sendable (SocketAddress) -> SocketAddress)?
    /// When our RTP goes where the peer's RTP comes from instead of to the address in its SDP.
    public var mediaLatching: MediaLatching = .whenUnreachable
    /// Whether an interruption that holds a call tells the peer, with a re-INVITE offering
    /// `a=inactive`, and the interruption's end takes it off hold with `a=sendrecv` (RFC 3264
    /// section 8.4). The peer then stops sending, shows the call as held, and does not take
    /// the silence for a dead call (PBXes hang up after some time without RTP). Off: the call
    /// is held on our side only.
    public var holdsPeerWhileInterrupted = true
    /// Answers digest challenges from a proxy or registrar (see ``CallController/register(at:expires:)``).
    public var credentials: SIPCredentials?
    /// The SIP transport for targets that name none (`sips:` always uses TLS).
    public var sipTransport: SIPTransportKind = .udp
    /// Also listen for SIP over TCP on ``sipAddress``'s port.
    public var listensOnTCP = false
    /// SIP over TLS: the CAs servers are checked against, and a certificate to listen with.
    public var tls: SIPTLSConfiguration?
    /// Every request outside a dialog goes through this proxy first (a preloaded route).
    public var outboundProxy: SIPURI?
    /// DNS servers for the names given (registrar, proxy, call target); nil: the system's.
    public var dnsServers: [SocketAddress]?
    /// Media encryption: the mechanism (SDES or DTLS-SRTP), whether it is mandatory, the SDES
    /// suites, and whether SDES keys may travel over signalling that is not TLS. Off by default.
    public var mediaSecurity = MediaSecurityPolicy()
    /// Our DTLS-SRTP certificate; nil: the controller generates one (ECDSA P-256, self-signed)
    /// when ``mediaSecurity`` uses DTLS.
    public var dtlsIdentity: TLSIdentity?
    /// How long the peer may send neither RTP nor RTCP before the call ends with
    /// ``CallEndReason/mediaTimeout`` (and a BYE): a peer that vanished without one would leave
    /// the call up for ever. Not counted while the call is on hold (by either side) or the peer
    /// does not send. Nil: never.
    public var mediaTimeout: Duration? = .seconds(30)
    /// How long a peer that holds the call (it offered or answered `recvonly` or `inactive`, so
    /// it sends no RTP) may also send no RTCP before the call ends with
    /// ``CallEndReason/mediaTimeout``, as Asterisk's `rtpholdtimeout`: a peer that vanished while
    /// holding would otherwise keep the call for ever. Nil: never. Needs ``mediaTimeout``.
    public var holdTimeout: Duration? = .seconds(300)
    /// Which peers may call: given the source address of an INVITE, whether to consider it; the
    /// others get 403 Forbidden and no call is made. Runs on the controller. Nil: anyone.
    public var acceptsCallsFrom: (@Sendable (SocketAddress) -> Bool)?
    /// Whether a peer may transfer a call to someone else (a REFER, RFC 3515): we then call
    /// the target, tell the peer how it goes, and report the new call with
    /// ``CallController/Event/transferred(from:to:)``. Off: every REFER is declined (603).
    public var acceptsTransfers = true
    /// How many calls a controller keeps at once (ringing, active or held); one more is refused:
    /// ``CallController/dial(_:from:)`` throws ``CallError/busy`` and an INVITE gets 486 Busy Here.
    /// At least 1; 4 by default, as pjsua's.
    public var maximumCalls = 4
    /// What our loudspeaker plays while a call we placed rings with no early media (the peer
    /// sent 180 without SDP), until it is answered or ends; a peer's early media (183 with
    /// SDP) is played instead. Nil: silence. The European ringback by default.
    public var ringback: CallTone? = .ringback
    /// Seconds of the processed uplink to keep for analysis (`CallController.recordedUplink(of:)`,
    /// for the demo and the tests); 0: none.
    package var recordUplinkSeconds: Double = 0

    public init(sipAddress: String = "127.0.0.1:5060", userName: String = "callaudio", audio: Audio = .hardware,
                codec: OpusCallConfiguration = .init(),
                categoryOptions: AudioSession.CategoryOptions = [.overrideMutedMicrophoneInterruption],
                preferredSampleRate: Double = 16000, preferredIOBufferDuration: Double = 0.02,
                voiceProcessing: VoiceProcessingConfiguration = .init(), rtcpMux: Bool = false) {
        self.sipAddress = sipAddress
        self.userName = userName
        self.audio = audio
        self.codec = codec
        self.categoryOptions = categoryOptions
        self.preferredSampleRate = preferredSampleRate
        self.preferredIOBufferDuration = preferredIOBufferDuration
        self.voiceProcessing = voiceProcessing
        self.rtcpMux = rtcpMux
    }
}

/// When a call sends its RTP and RTCP to where the peer's RTP comes from (once the peer's source
/// is locked) rather than to the address in the peer's SDP: symmetric RTP. Never with
/// ``CallConfiguration/mediaPath`` set (media then comes through a relay on purpose).
///
/// Thread safety: a value type.
public enum MediaLatching: Sendable, Equatable {
    /// RTP always goes to the SDP address.
    case never
    /// Only when our media socket cannot send to the SDP address at all (another address family:
    /// a peer that advertises IPv6 while it talks to us over IPv4). The default: it can only help.
    case whenUnreachable
    /// Whenever the peer's source differs from its SDP address: a peer behind NAT that advertises
    /// its private address. The first source that passes validation gets our media, so use it
    /// where peers are known to be behind NAT.
    case always
}
