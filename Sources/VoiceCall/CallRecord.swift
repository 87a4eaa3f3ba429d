import AudioSession
import MediaNegotiation
import Platform
import SDP
import SIP
import Synchronization

/// The calls this endpoint holds, shared between the controller (which writes) and the SIP
/// thread (which reads when it answers a re-offer).
///
/// Thread safety: safe from any thread; a leaf lock.
final class HeldCalls: Sendable {
    private let ids = Mutex<Set<String>>([])

    func contains(_ id: String) -> Bool { ids.withLock { $0.contains(id) } }

    func set(_ id: String, held: Bool) {
        ids.withLock { ids in
            if held { ids.insert(id) } else { ids.remove(id) }
        }
    }
}

/// The media encryption each call agreed, shared between the controller (which writes) and the
/// SIP thread (which checks a re-offer against it before answering).
///
/// Thread safety: safe from any thread; a leaf lock.
final class CallSecurities: Sendable {
    private let byCall = Mutex<[String: NegotiatedMediaSecurity]>([:])

    subscript(id: String) -> NegotiatedMediaSecurity? {
        get { byCall.withLock { $0[id] } }
        set { byCall.withLock { $0[id] = newValue } }
    }
}

/// What the controller keeps per call.
struct CallRecord {
    let call: Call
    /// How the call is signalled: a SIP dialog, or a conference room (``RoomLeg``).
    let signalling: Signalling
    var ports: PortReservation?
    var offer: SessionDescription?
    /// The answer in a provisional response (early media), for a 2xx that does not repeat it.
    var earlyAnswer: SIPBody?
    /// The peer's stream as it last described it (where media goes).
    var remote: AudioStreamDescription?
    var media: CallMedia?
    var io: IOActivity?
    /// The tone our loudspeaker plays while the call rings without early media, and its I/O's
    /// place in the session (``CallController/startRingback(_:)``).
    var ringback: LocalTone?
    var ringbackIO: IOActivity?
    /// When the audio device was last opened again after a failure.
    var deviceReopenedAt: ContinuousClock.Instant?
    /// Ends the call when the peer falls silent (``CallConfiguration/mediaTimeout``).
    var watchdog: Task<Void, Never>?
    /// When the media started or was last excepted from the timeout (a hold), monotonic nanoseconds.
    var mediaQuietSince: UInt64 = 0
    /// An incoming call we answered sends no RTP until the peer consents: its ACK, or its first
    /// packet from the address its SDP declared (a spoofed INVITE must not aim our microphone's
    /// stream at a third party).
    var awaitsConsent = false
    /// Our offer's encryption (keys by tag), to read the answer with.
    var securityOffer: SecurityOffer?
    /// Our answer's encryption to the peer's offer, chosen when the INVITE came.
    var securityAnswer: (proto: String, attributes: [SessionDescription.Attribute], negotiated: NegotiatedMediaSecurity)?
    /// The encryption agreed (clear until media starts).
    var security: NegotiatedMediaSecurity = .clear
    /// Our transfer of this call in progress: told its outcome once.
    var transferOutcome: AsyncStream<Result<Void, CallError>>.Continuation?
    /// For a call we placed because a peer referred us (REFER): the call whose peer hears how it goes.
    var referredBy: String?
    /// The recording of the call's two directions, while one runs (``CallController/startRecording(_:to:)``).
    var recording: CallRecordingJob?
    /// What is being played to the peer (``Call/play(_:mix:loops:)``).
    var playback: CallPlayback?
    /// The other call of the three-way conference this call is in (``CallController/conference(_:with:)``).
    var conference: String?

    enum Signalling {
        case sip(SIPCall)
        case room(RoomLeg)
    }

    /// The call's SIP dialog (nil for a conference room leg).
    var sip: SIPCall? { if case let .sip(sip) = signalling { sip } else { nil } }
    /// The call's conference room (nil for a SIP call).
    var room: RoomLeg? { if case let .room(room) = signalling { room } else { nil } }

    init(call: Call, sip: SIPCall, ports: PortReservation?, offer: SessionDescription? = nil) {
        self.init(call: call, signalling: .sip(sip), ports: ports, offer: offer)
    }

    init(call: Call, signalling: Signalling, ports: PortReservation?, offer: SessionDescription? = nil) {
        self.call = call
        self.signalling = signalling
        self.ports = ports
        self.offer = offer
    }
}
