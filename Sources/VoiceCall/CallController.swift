import MediaNegotiation
import OpenSSL
import SDP
public import Platform
public import AudioSession
import AudioIO
import Glibc
public import Logging
import Opus
import RTP

public import SIP
public import Janus
import Synchronization
import VoiceProcessing

/// The call engine a softphone embeds: places and answers SIP calls, runs their media,
/// and drives the audio session through each call's life.
///
/// The session lifecycle: with no call the session is
/// inactive; when a call connects (answered by the peer, or by us) the controller sets
/// `playAndRecord` + `voiceChat`, activates the session and starts the voice-processing I/O;
/// after hang-up it stops the I/O and deactivates with `notifyOthersOnDeactivation`, so
/// interrupted audio (a music player) resumes. An interruption (a phone call) puts the call
/// on hold (no capture, no playout, the network side stays up) and `ended` + `shouldResume`
/// resumes it. Route changes move the I/O under the running call.
///
/// Several calls: up to ``CallConfiguration/maximumCalls`` at once, ringing, active or held.
/// One has the audio at a time: answering a call, a call that connects, or resuming one holds
/// the call that had the audio (the peer is told, as with ``Call/hold()``), so a second call
/// rings while one is up (call waiting) and resuming a held call swaps the two. A held call
/// closes its device, so a sound card that takes one stream serves each call in turn.
///
/// Thread safety: an actor; every method may be called from any task. Calls' state streams
/// and ``events`` deliver in order.
public actor CallController {
    /// Something the controller reports besides calls' own state changes.
    public enum Event: Sendable {
        /// The session's route changed (the call continues on the new route).
        case routeChanged(reason: AudioSession.RouteChangeReason, route: AudioSessionRouteDescription)
        /// The session was interrupted or the interruption ended.
        case interruption(AudioSession.Interruption)
        /// The peer put a call on hold (`held` true: it no longer receives, so no RTP goes to
        /// it) or took it off hold, with a re-INVITE. The call stays active and keeps playing
        /// whatever the peer sends (its music on hold, or nothing).
        case peerHold(callID: String, held: Bool)
        /// The peer of call `from` transferred it (a REFER, RFC 3515): we called its target, and
        /// `to` is that call. The old call ends when the transferor hangs it up.
        case transferred(from: String, to: Call)
        /// A new call (an INVITE whose `Replaces` named call `callID`: an attended transfer's
        /// transferee, or a pickup) took the place of call `callID`, which ended as
        /// ``CallEndReason/replaced``; `by` is answered at once and has the audio.
        case replaced(callID: String, by: Call)
        /// The registration of the account of user `account` changed (``register(at:expires:)``
        /// for ``CallConfiguration/userName``, `SIP/SIPAccount/register(at:expires:)` for one from
        /// ``addAccount(user:displayName:credentials:)``): registering, registered with its
        /// lifetime, failed with the registrar's status (and when it is tried again), unregistered.
        case registration(account: String, SIPRegistrationState)
        /// Something happened in the conference room call `callID` is in (``join(_:)``):
        /// participants joined, changed or left, someone talks.
        case room(callID: String, AudioBridgeEvent)
    }

    public let configuration: CallConfiguration
    /// The audio session the controller drives.
    public nonisolated let session: AudioSession
    /// Calls from peers, in the incoming-ringing state; answer or reject them. Each use is a
    /// subscription of its own, so any number of readers each get every call: first the calls
    /// still ringing, then each new one. A reader that falls behind keeps the newest 16.
    public nonisolated var incomingCalls: AsyncStream<Call> { incomingBroadcast.subscribe() }
    /// Route changes, interruptions and the peers' holds, from the moment of each use: a
    /// subscription of its own (any number of readers), which keeps the newest 64 events while
    /// its reader is behind.
    public nonisolated var events: AsyncStream<Event> { eventBroadcast.subscribe() }

    let userAgent: SIPUserAgent
    let logger: Logger
    let incomingBroadcast = Broadcast<Call>(limit: 16) { $0.state == .incomingRinging }
    let eventBroadcast = Broadcast<Event>(limit: 64)
    var records: [String: CallRecord] = [:]
    /// The call whose audio runs (or was stopped by an interruption).
    var audioCallID: String?
    var observer: AudioSessionObserverToken?
    var listener: Task<Void, Never>?
    var finishedUplinks: [String: [Int16]] = [:]
    /// The accounts ``addAccount(user:displayName:credentials:)`` added, oldest first.
    var addedAccounts: [SIPAccount] = []
    /// Calls we hold (an interruption told the peer so); read on the SIP thread.
    let heldCalls: HeldCalls
    /// Each call's agreed encryption; read on the SIP thread.
    let securities: CallSecurities
    /// Our DTLS-SRTP certificate and its fingerprint (nil without DTLS).
    let dtlsIdentity: TLSIdentity?
    let dtlsFingerprint: SDPFingerprint?

    /// Creates a controller listening for SIP on `configuration.sipAddress`.
    ///
    /// - Parameter configuration: addresses, codec, voice processing, audio and media policy.
    /// - Parameter session: the audio session to drive. Nil: with the default
    ///   ``CallConfiguration/Audio/hardware`` audio, a session of its own on the sound card
    ///   (`AudioIO/ALSAAudioHardware` with its laptop route map: ALSA's `default` PCM), so the
    ///   defaults place a call on this machine's sound card; with devices made per call,
    ///   `AudioSession.shared`.
    /// - Parameter logger: where the controller, its SIP user agent and its calls log.
    public init(configuration: CallConfiguration, session: AudioSession? = nil,
                logger: Logger = Logger(label: "callaudio.call")) throws(CallError) {
        guard configuration.maximumCalls >= 1 else { throw .invalidState("maximumCalls is \(configuration.maximumCalls); at least 1") }
        guard !configuration.codecs.isEmpty, configuration.codec.channels == 1 || configuration.codecs == [.opus] else {
            throw .media(configuration.codecs.isEmpty ? "no codec allowed (CallConfiguration.codecs is empty)"
                                                      : "G.711 and G.722 are mono; a stereo call allows only Opus")
        }
        self.configuration = configuration
        self.session = session ?? Self.defaultSession(for: configuration)
        self.logger = logger
        let heldCalls = HeldCalls()
        self.heldCalls = heldCalls
        (dtlsIdentity, dtlsFingerprint) = try Self.dtlsIdentity(configuration)
        let securities = CallSecurities()
        self.securities = securities
        do {
            let address = try SocketAddress(parsing: configuration.sipAddress)
            // While we hold a call, a peer's re-offer is answered `inactive`: it stays on hold.
            let answerer: SIPUserAgent.OfferAnswerer = { callID, offer, peerPrevious, ours in
                Self.answerChangedOffer(offer, peerPrevious: peerPrevious, ours: ours,
                                        wanting: heldCalls.contains(callID) ? .inactive : .sendrecv,
                                        security: securities[callID])
            }
            var sip = SIPUserAgent.Configuration(localAddress: address, user: configuration.userName,
                                                 displayName: configuration.displayName,
                                                 answerChangedOffer: answerer, credentials: configuration.credentials)
            sip.transport = configuration.sipTransport
            sip.listensOnTCP = configuration.listensOnTCP
            sip.tls = configuration.tls
            sip.outboundProxy = configuration.outboundProxy
            sip.dnsServers = configuration.dnsServers
            userAgent = try SIPUserAgent(configuration: sip)
        } catch {
            throw .signalling("cannot listen on \(configuration.sipAddress): \(error)")
        }
    }

    /// The session a controller drives when none is given (see ``init(configuration:session:logger:)``).
    static func defaultSession(for configuration: CallConfiguration) -> AudioSession {
        guard case .hardware = configuration.audio else { return .shared }
        return AudioSystem(hardware: ALSAAudioHardware()).makeSession(name: "call")
    }

    /// Starts answering SIP and observing the session. Call once.
    public func start() {
        guard listener == nil else { return }
        observer = session.addObserver { [weak self] note in
            guard let self else { return }
            Task { await self.sessionNotification(note) }
        }
        let calls = userAgent.incomingCalls
        listener = Task { [weak self] in
            for await sipCall in calls { await self?.incoming(sipCall) }
        }
        forwardRegistrationStates(userAgent.registrationStates, of: configuration.userName)
    }

    /// The calls now (ringing, active or held), oldest first.
    public var calls: [Call] { records.values.map(\.call).sorted { $0.createdAt < $1.createdAt } }

    /// The SIP address calls reach us at.
    public nonisolated var sipAddress: SocketAddress { userAgent.localAddress }

    /// SIP counters (messages, retransmissions, malformed input dropped).
    public nonisolated var sipStatistics: SIPStatistics { userAgent.statistics }

    /// Hangs up every call, removes every account's registration (waiting up to 2 s for the
    /// registrars) and closes the SIP socket.
    public func shutdown() async {
        for record in records.values { await hangUp(record.call) }
        await removeRegistrations(within: .seconds(2))
        listener?.cancel()
        if let observer { session.removeObserver(observer) }
        userAgent.close()
        incomingBroadcast.finish()
        eventBroadcast.finish()
    }

    // MARK: Outgoing

    /// Calls `target` (`sip:user@host:port`); returns at once with the call ringing.
    ///
    /// - Parameter target: whom to call.
    /// - Parameter account: the account it is placed from (its address of record, display
    ///   name and credentials, ``addAccount(user:displayName:credentials:)``); nil: the
    ///   configuration's.
    public func dial(_ target: String, from account: SIPAccount? = nil) async throws(CallError) -> Call {
        guard let uri = SIPURI(target) else { throw .invalidTarget(target) }
        return try dial(uri, replaces: nil, from: account)
    }

    /// Calls `uri`, its INVITE taking over the target's dialog `replaces` names, if any.
    func dial(_ uri: SIPURI, replaces: SIPReplaces?, from account: SIPAccount? = nil) throws(CallError) -> Call {
        let target = uri.description
        guard records.count < configuration.maximumCalls else { throw .busy }
        // Located once: the offer's host and the servers the INVITE goes to come from one lookup.
        let located: SIPLocatedTarget
        do { located = try userAgent.locate(uri) } catch { throw .signalling("\(error)") }
        do { try configuration.mediaSecurity.checkOffer(overSecureSignalling: located.isSecure) } catch {
            throw .mediaSecurity("\(error)")
        }
        let ports = try PortReservation(host: located.localHost)
        let sessionID = UInt64.random(in: 1...UInt64(Int64.max))
        let security = configuration.mediaSecurity.makeOffer(fingerprint: dtlsFingerprint)
        let offer = AudioSDP.offer(address: ports.rtp, sessionID: sessionID, parameters: sdpParameters,
                                  codecs: configuration.codecs, comfortNoise: ComfortNoisePayload.payloadType,
                                  ptime: configuration.codec.frameMilliseconds, rtcpMux: configuration.rtcpMux,
                                  telephoneEvents: AudioSDP.telephoneEventFormats, security: security)
        let sipCall: SIPCall
        do { sipCall = try userAgent.invite(located, offer: .sdp(offer.text), replaces: replaces, from: account) } catch {
            throw .signalling("\(error)")
        }
        let call = Call(id: sipCall.callID, direction: .outgoing, remoteURI: target, controller: self,
                        remoteAddress: sipCall.remoteAddress, transport: sipCall.transport.uriParameter, account: sipCall.account)
        call.apply(.dial)
        records[call.id] = CallRecord(call: call, sip: sipCall, ports: ports)
        records[call.id]?.securityOffer = security
        follow(sipCall, call)
        return call
    }

    // MARK: Incoming

    func incoming(_ sipCall: SIPCall) {
        guard configuration.acceptsCallsFrom?(sipCall.remoteAddress) ?? true else {
            logger.notice("call \(sipCall.callID) from \(sipCall.remoteAddress) refused: not an address calls are accepted from")
            try? sipCall.reject(status: 403, reason: "Forbidden")
            return
        }
        // A call that replaces one of ours takes its place, not another.
        let replaced = sipCall.replacedCallID.flatMap { records[$0] != nil ? $0 : nil }
        guard records.count < configuration.maximumCalls || replaced != nil else {
            try? sipCall.reject(status: 486, reason: "Busy Here")
            return
        }
        // An INVITE without a body (third-party call control, some PBXes) is answered with our
        // offer in the 2xx; the caller's answer comes with its ACK (RFC 3261 section 13.2.1).
        var offer: SessionDescription?
        var securityAnswer: (proto: String, attributes: [SessionDescription.Attribute], negotiated: NegotiatedMediaSecurity)?
        if let body = sipCall.offer {
            guard let parsed = usableOffer(body), let media = AudioSDP.streamMedia(in: parsed, codecs: configuration.codecs) else {
                try? sipCall.reject(status: 488, reason: "Not Acceptable Here")
                return
            }
            do {
                securityAnswer = try configuration.mediaSecurity.answer(parsed, media: media, fingerprint: dtlsFingerprint,
                                                                       overSecureSignalling: sipCall.transport == .tls)
            } catch {
                logger.notice("call \(sipCall.callID) from \(sipCall.remoteAddress) declined (488): \(error)")
                try? sipCall.reject(status: 488, reason: "Not Acceptable Here")
                return
            }
            offer = parsed
        }
        let call = Call(id: sipCall.callID, direction: .incoming, remoteURI: "\(sipCall.remote)", controller: self,
                        remoteAddress: sipCall.remoteAddress, transport: sipCall.transport.uriParameter, account: sipCall.account)
        call.apply(.incoming)
        records[call.id] = CallRecord(call: call, sip: sipCall, ports: nil, offer: offer)
        records[call.id]?.securityAnswer = securityAnswer
        follow(sipCall, call)
        if let replaced {
            Task { await self.takeOver(replaced, by: call) }
            return
        }
        try? sipCall.ringing()
        incomingBroadcast.yield(call)
    }

    func answer(_ call: Call) async throws(CallError) {
        guard var record = records[call.id], let sip = record.sip, call.direction == .incoming, call.state == .incomingRinging else {
            throw .invalidState("only an incoming call that is ringing can be answered (\(call.state))")
        }
        guard let offer = record.offer else { return try answerWithOffer(call, record) }
        do {
            let ports = try PortReservation(host: sip.localHost)
            let security = record.securityAnswer
            let (answer, remote) = try AudioSDP.answer(offer, address: ports.rtp, sessionID: UInt64.random(in: 1...UInt64(Int64.max)),
                                                      parameters: sdpParameters, ptime: configuration.codec.frameMilliseconds,
                                                      rtcpMux: configuration.rtcpMux, codecs: configuration.codecs,
                                                      security: security.map { ($0.proto, $0.attributes) })
            record.ports = ports
            records[call.id] = record
            // No RTP until the ACK or the peer's first packet (checked with the media watchdog).
            try startMedia(call.id, remote: remote, security: security?.negotiated ?? .clear, awaitingConsent: true)
            try record.sip?.accept(answer: .sdp(answer.text))
            call.apply(.answer)
        } catch let error as CallError {
            try? record.sip?.reject(status: 500, reason: "Server Internal Error")
            end(call.id, .failed("\(error)"))
            throw error
        } catch {
            try? record.sip?.reject(status: 488, reason: "Not Acceptable Here")
            end(call.id, .notAcceptable(SIPFinalResponse(status: 488, reason: "Not Acceptable Here")))
            throw .media("\(error)")
        }
    }

    /// Answers an INVITE that had no offer: our offer goes in the 2xx, and media starts when
    /// the caller's answer arrives with its ACK (``signalling(_:_:)``, `.confirmed`).
    func answerWithOffer(_ call: Call, _ record: CallRecord) throws(CallError) {
        var record = record
        let ports: PortReservation
        do {
            try configuration.mediaSecurity.checkOffer(overSecureSignalling: record.sip?.transport == .tls)
        } catch {
            try? record.sip?.reject(status: 488, reason: "Not Acceptable Here")
            end(call.id, .notAcceptable(SIPFinalResponse(status: 488, reason: "Not Acceptable Here")))
            throw .mediaSecurity("\(error)")
        }
        do {
            ports = try PortReservation(host: record.sip?.localHost ?? "0.0.0.0")
        } catch {
            try? record.sip?.reject(status: 500, reason: "Server Internal Error")
            end(call.id, .failed("\(error)"))
            throw error
        }
        let security = configuration.mediaSecurity.makeOffer(fingerprint: dtlsFingerprint)
        let offer = AudioSDP.offer(address: ports.rtp, sessionID: UInt64.random(in: 1...UInt64(Int64.max)), parameters: sdpParameters,
                                  codecs: configuration.codecs, comfortNoise: ComfortNoisePayload.payloadType,
                                  ptime: configuration.codec.frameMilliseconds, rtcpMux: configuration.rtcpMux,
                                  telephoneEvents: AudioSDP.telephoneEventFormats, security: security)
        record.ports = ports
        record.securityOffer = security
        records[call.id] = record
        do {
            try record.sip?.accept(answer: .sdp(offer.text))
        } catch {
            end(call.id, .failed("\(error)"))
            throw .signalling("\(error)")
        }
        call.apply(.answer)
    }

    func reject(_ call: Call) async {
        guard let record = records[call.id], call.state == .incomingRinging else { return }
        try? record.sip?.reject(status: 486, reason: "Busy Here")
        end(call.id, .rejected(SIPFinalResponse(status: 486, reason: "Busy Here")))
    }

    func hangUp(_ call: Call) async {
        guard let record = records[call.id] else { return }
        switch call.state {
        case .outgoingRinging: try? record.sip?.cancel(); end(call.id, .cancelled)
        case .incomingRinging:
            try? record.sip?.reject(status: 603, reason: "Decline")
            end(call.id, .rejected(SIPFinalResponse(status: 603, reason: "Decline")))
        case .active, .held:
            try? record.sip?.bye()
            await record.room?.close()
            end(call.id, .localHangUp)
        case .idle: end(call.id, .localHangUp)
        case .ended: break
        }
    }

    /// The processed uplink of `call` so far, if `CallConfiguration.recordUplinkSeconds` asked
    /// for it: for the demo and the tests, not the public API (`Call.startRecording(to:)` records a call).
    package func recordedUplink(of call: Call) -> [Int16] {
        records[call.id]?.media?.recordedUplink ?? finishedUplinks[call.id] ?? []
    }

    func statistics(of call: Call) -> CallStatistics? {
        guard let media = records[call.id]?.media else { return nil }
        return snapshot(media)
    }
}
