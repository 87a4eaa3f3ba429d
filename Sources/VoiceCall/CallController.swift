public import AudioSession
import AudioIO
import Glibc
public import Logging
import Opus
public import RTP
public import SIP
import Synchronization
import VoiceProcessing

/// The call engine a softphone embeds: places and answers SIP calls, runs their media,
/// and drives the audio session through each call's life.
///
/// The session lifecycle is the one the mission prescribes: with no call the session is
/// inactive; when a call connects (answered by the peer, or by us) the controller sets
/// `playAndRecord` + `voiceChat`, activates the session and starts the voice-processing I/O;
/// after hang-up it stops the I/O and deactivates with `notifyOthersOnDeactivation`, so
/// interrupted audio (a music player) resumes. An interruption (a phone call) puts the call
/// on hold (no capture, no playout, the network side stays up) and `ended` + `shouldResume`
/// resumes it. Route changes move the I/O under the running call.
///
/// One call has media at a time; an INVITE arriving while a call is in progress is
/// answered 486 Busy Here.
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
    }

    public let configuration: CallConfiguration
    /// The audio session the controller drives.
    public nonisolated let session: AudioSession
    /// Calls from peers, in the incoming-ringing state; answer or reject them.
    public nonisolated let incomingCalls: AsyncStream<Call>
    /// Route changes and interruptions.
    public nonisolated let events: AsyncStream<Event>

    private let userAgent: SIPUserAgent
    let logger: Logger
    private let incomingContinuation: AsyncStream<Call>.Continuation
    private let eventContinuation: AsyncStream<Event>.Continuation
    var records: [String: CallRecord] = [:]
    private var mediaCallID: String?
    private var observer: AudioSessionObserverToken?
    private var listener: Task<Void, Never>?
    private var finishedUplinks: [String: [Int16]] = [:]
    /// Calls we hold (an interruption told the peer so); read on the SIP thread.
    let heldCalls: HeldCalls

    /// Creates a controller listening for SIP on `configuration.sipAddress`.
    ///
    /// - Parameter session: the audio session to drive (`AudioSession.shared` for an app).
    public init(configuration: CallConfiguration, session: AudioSession = .shared,
                logger: Logger = Logger(label: "callaudio.call")) throws(CallError) {
        self.configuration = configuration
        self.session = session
        self.logger = logger
        let heldCalls = HeldCalls()
        self.heldCalls = heldCalls
        do {
            let address = try SocketAddress(parsing: configuration.sipAddress)
            // While we hold a call, a peer's re-offer is answered `inactive`: it stays on hold.
            let answerer: SIPUserAgent.OfferAnswerer = { callID, offer, peerPrevious, ours in
                Self.answerChangedOffer(offer, peerPrevious: peerPrevious, ours: ours,
                                        wanting: heldCalls.contains(callID) ? .inactive : .sendrecv)
            }
            userAgent = try SIPUserAgent(configuration: .init(localAddress: address, user: configuration.userName,
                                                              answerChangedOffer: answerer,
                                                              credentials: configuration.credentials))
        } catch {
            throw .signalling("cannot listen on \(configuration.sipAddress): \(error)")
        }
        (incomingCalls, incomingContinuation) = AsyncStream.makeStream(bufferingPolicy: .unbounded)
        (events, eventContinuation) = AsyncStream.makeStream(bufferingPolicy: .unbounded)
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
    }

    /// The SIP address calls reach us at.
    public nonisolated var sipAddress: SocketAddress { userAgent.localAddress }

    /// SIP counters (messages, retransmissions, malformed input dropped).
    public nonisolated var sipStatistics: SIPStatistics { userAgent.statistics }

    /// Registers with a registrar, so calls to our address of record (`sip:user@host`) reach
    /// us through it; refreshed until ``unregister()`` or ``shutdown()`` (see
    /// ``SIP/SIPUserAgent/register(at:expires:)``).
    ///
    /// - Parameter registrar: `sip:host[:port]`.
    /// - Returns: the lifetime granted, in seconds.
    @discardableResult
    public nonisolated func register(at registrar: String, expires: Int = 3600) async throws(CallError) -> Int {
        guard let uri = SIPURI(registrar) else { throw .invalidTarget(registrar) }
        do { return try await userAgent.register(at: uri, expires: expires) } catch { throw .signalling("REGISTER: \(error)") }
    }

    /// Removes the registration.
    public nonisolated func unregister() async throws(CallError) {
        do { try await userAgent.unregister() } catch { throw .signalling("unREGISTER: \(error)") }
    }

    /// Unregisters, waiting at most `limit` (a registrar that challenges the REGISTER gets
    /// credentials, which `SIPUserAgent.close()` alone cannot give once closed).
    private func removeRegistration(within limit: Duration) async {
        guard userAgent.registrar != nil else { return }
        let userAgent = userAgent
        Task { try? await userAgent.unregister() }
        let deadline = ContinuousClock.now + limit
        while userAgent.registrar != nil, ContinuousClock.now < deadline { try? await Task.sleep(for: .milliseconds(10)) }
    }

    /// Hangs up every call, removes a registration (waiting up to 2 s for the registrar) and
    /// closes the SIP socket.
    public func shutdown() async {
        for record in records.values { await hangUp(record.call) }
        await removeRegistration(within: .seconds(2))
        listener?.cancel()
        if let observer { session.removeObserver(observer) }
        userAgent.close()
        incomingContinuation.finish()
        eventContinuation.finish()
    }

    // MARK: Outgoing

    /// Calls `target` (`sip:user@host:port`); returns at once with the call ringing.
    public func dial(_ target: String) async throws(CallError) -> Call {
        guard let uri = SIPURI(target) else { throw .invalidTarget(target) }
        guard mediaCallID == nil else { throw .busy }
        let host: String
        do { host = try userAgent.localHost(toward: uri) } catch { throw .signalling("\(error)") }
        let ports = try PortReservation(host: host)
        let sessionID = UInt64.random(in: 1...UInt64(Int64.max))
        let offer = OpusSDP.offer(address: ports.rtp, sessionID: sessionID, parameters: sdpParameters,
                                  ptime: configuration.codec.frameMilliseconds, rtcpMux: configuration.rtcpMux,
                                  telephoneEvents: OpusSDP.telephoneEventFormats)
        let sipCall: SIPCall
        do { sipCall = try userAgent.invite(to: uri, offer: .sdp(offer.text)) } catch { throw .signalling("\(error)") }
        let call = Call(id: sipCall.callID, direction: .outgoing, remoteURI: target, controller: self,
                        remoteAddress: sipCall.remoteAddress)
        call.apply(.dial)
        records[call.id] = CallRecord(call: call, sip: sipCall, ports: ports)
        mediaCallID = call.id
        follow(sipCall, call)
        return call
    }

    // MARK: Incoming

    private func incoming(_ sipCall: SIPCall) {
        guard configuration.acceptsCallsFrom?(sipCall.remoteAddress) ?? true else {
            logger.notice("call \(sipCall.callID) from \(sipCall.remoteAddress) refused: not an address calls are accepted from")
            try? sipCall.reject(status: 403, reason: "Forbidden")
            return
        }
        guard mediaCallID == nil else {
            try? sipCall.reject(status: 486, reason: "Busy Here")
            return
        }
        // An INVITE without a body (third-party call control, some PBXes) is answered with our
        // offer in the 2xx; the caller's answer comes with its ACK (RFC 3261 section 13.2.1).
        var offer: SessionDescription?
        if let body = sipCall.offer {
            guard let parsed = Self.usableOffer(body) else {
                try? sipCall.reject(status: 488, reason: "Not Acceptable Here")
                return
            }
            offer = parsed
        }
        let call = Call(id: sipCall.callID, direction: .incoming, remoteURI: "\(sipCall.remote)", controller: self,
                        remoteAddress: sipCall.remoteAddress)
        call.apply(.incoming)
        records[call.id] = CallRecord(call: call, sip: sipCall, ports: nil, offer: offer)
        mediaCallID = call.id
        try? sipCall.ringing()
        follow(sipCall, call)
        incomingContinuation.yield(call)
    }

    func answer(_ call: Call) async throws(CallError) {
        guard var record = records[call.id], call.direction == .incoming, call.state == .incomingRinging else {
            throw .invalidState("only an incoming call that is ringing can be answered (\(call.state))")
        }
        guard let offer = record.offer else { return try answerWithOffer(call, record) }
        do {
            let ports = try PortReservation(host: record.sip.localHost)
            let (answer, remote) = try OpusSDP.answer(offer, address: ports.rtp, sessionID: UInt64.random(in: 1...UInt64(Int64.max)),
                                                      parameters: sdpParameters, ptime: configuration.codec.frameMilliseconds,
                                                      rtcpMux: configuration.rtcpMux)
            record.ports = ports
            records[call.id] = record
            try startMedia(call.id, remote: remote)
            try record.sip.accept(answer: .sdp(answer.text))
            call.apply(.answer)
        } catch let error as CallError {
            try? record.sip.reject(status: 500, reason: "Server Internal Error")
            end(call.id, .failed("\(error)"))
            throw error
        } catch {
            try? record.sip.reject(status: 488, reason: "Not Acceptable Here")
            end(call.id, .notAcceptable)
            throw .media("\(error)")
        }
    }

    /// Answers an INVITE that had no offer: our offer goes in the 2xx, and media starts when
    /// the caller's answer arrives with its ACK (``signalling(_:_:)``, `.confirmed`).
    private func answerWithOffer(_ call: Call, _ record: CallRecord) throws(CallError) {
        var record = record
        let ports: PortReservation
        do {
            ports = try PortReservation(host: record.sip.localHost)
        } catch {
            try? record.sip.reject(status: 500, reason: "Server Internal Error")
            end(call.id, .failed("\(error)"))
            throw error
        }
        let offer = OpusSDP.offer(address: ports.rtp, sessionID: UInt64.random(in: 1...UInt64(Int64.max)), parameters: sdpParameters,
                                  ptime: configuration.codec.frameMilliseconds, rtcpMux: configuration.rtcpMux,
                                  telephoneEvents: OpusSDP.telephoneEventFormats)
        record.ports = ports
        records[call.id] = record
        do {
            try record.sip.accept(answer: .sdp(offer.text))
        } catch {
            end(call.id, .failed("\(error)"))
            throw .signalling("\(error)")
        }
        call.apply(.answer)
    }

    func reject(_ call: Call) async {
        guard let record = records[call.id], call.state == .incomingRinging else { return }
        try? record.sip.reject(status: 486, reason: "Busy Here")
        end(call.id, .rejected)
    }

    func hangUp(_ call: Call) async {
        guard let record = records[call.id] else { return }
        switch call.state {
        case .outgoingRinging: try? record.sip.cancel(); end(call.id, .cancelled)
        case .incomingRinging: try? record.sip.reject(status: 603, reason: "Decline"); end(call.id, .rejected)
        case .active, .held: try? record.sip.bye(); end(call.id, .localHangUp)
        case .idle: end(call.id, .localHangUp)
        case .ended: break
        }
    }

    /// The processed uplink of `call` so far, if ``CallConfiguration/recordUplinkSeconds`` asked for it.
    public func recordedUplink(of call: Call) -> [Int16] {
        records[call.id]?.media?.recordedUplink ?? finishedUplinks[call.id] ?? []
    }

    func statistics(of call: Call) -> CallStatistics? {
        guard let media = records[call.id]?.media else { return nil }
        return snapshot(media)
    }

    // MARK: Signalling events

    private func follow(_ sipCall: SIPCall, _ call: Call) {
        Task { [weak self] in
            for await event in sipCall.events { await self?.signalling(event, call) }
        }
    }

    private func signalling(_ event: SIPCallEvent, _ call: Call) {
        guard records[call.id] != nil else { return }
        switch event {
        case .trying:
            break
        case let .ringing(body):
            // Early media's answer: some peers send the answer in a 183 and not again in the 2xx.
            if let body { records[call.id]?.earlyAnswer = body }
        case let .confirmed(body):
            // An INVITE without an offer: the caller's answer came with the ACK.
            guard let record = records[call.id], call.state == .active else { return }
            if record.offer == nil, record.media == nil { startMedia(call.id, answer: body, then: {}) }
            dialogEstablished(call.id)
        case let .answered(body):
            guard call.state == .outgoingRinging, let record = records[call.id] else { return }
            startMedia(call.id, answer: body ?? record.earlyAnswer, then: { call.apply(.answered) })
            dialogEstablished(call.id)
        case let .reoffered(body):
            peerChanged(body, call)
        case let .reinviteAnswered(body):
            // The answer to our hold or resume: follow its address; its direction is ours mirrored.
            if let body { peerChanged(body, call, announcesHold: false) }
        case let .reinviteDeclined(status, reason):
            logger.warning("call \(call.id): the peer declined our re-INVITE: \(status) \(reason)")
        case let .ended(reason):
            end(call.id, Self.endReason(reason, call))
        }
    }

    /// The peer's description changed (a re-offer we answered, or its answer in the ACK of a
    /// re-INVITE without an offer): follow its address and its direction.
    private func peerChanged(_ body: SIPBody, _ call: Call, announcesHold: Bool = true) {
        guard let description = Self.description(in: body), let remote = try? OpusSDP.stream(in: description),
              var record = records[call.id], let media = record.media else { return }
        // `c=0.0.0.0` is the old way to hold (RFC 3264 section 8.4): send nothing, move nothing.
        let heldByAddress = remote.address == "0.0.0.0" || remote.address == "::"
        if !heldByAddress, let before = record.remote,
           (remote.address, remote.port, remote.rtcpPort) != (before.address, before.port, before.rtcpPort) {
            do {
                let (rtp, rtcp) = try destinations(of: remote, mux: media.rtp.configuration.rtcpMux)
                media.rtp.retarget(rtp: rtp, rtcp: rtcp)
                logger.info("call \(call.id): the peer moved its media to \(rtp)")
            } catch {
                logger.error("call \(call.id): cannot follow the peer's media to \(remote.address):\(remote.port): \(error)")
            }
        }
        if !heldByAddress { record.remote = remote }
        records[call.id] = record
        // While we hold the call we answered `inactive` (``HeldCalls``): nothing is sent, and
        // whatever the peer offered is not its hold.
        let weHold = heldCalls.contains(call.id)
        let sending = remote.direction.receives && !heldByAddress && !weHold
        guard media.rtp.isSending != sending else { return }
        media.rtp.isSending = sending
        guard announcesHold, !weHold else { return }
        logger.info("call \(call.id): \(sending ? "the peer took the call off hold" : "the peer put the call on hold")")
        eventContinuation.yield(.peerHold(callID: call.id, held: !sending))
    }

    /// The answer to a peer's changed offer in an established call (hold, resume, media moved
    /// to a new address or port): ``OpusSDP/reanswer(_:peerPrevious:ours:wanting:)`` within the
    /// directions we want (`inactive` while we hold the call); a new codec, address family or
    /// set of streams is declined (488) and the call goes on as it was. Runs on the SIP thread.
    static func answerChangedOffer(_ offer: SIPBody, peerPrevious: SIPBody?, ours: SIPBody,
                                   wanting wanted: MediaDirection = .sendrecv) -> SIPBody? {
        guard offer.contentType.lowercased() == "application/sdp",
              let new = description(in: offer), let previous = description(in: peerPrevious), let last = description(in: ours),
              let (answer, remote) = try? OpusSDP.reanswer(new, peerPrevious: previous, ours: last, wanting: wanted),
              Self.isNumericHost(remote.address) else { return nil }
        return .sdp(answer.text)
    }

    /// The session description a SIP body holds, if it is UTF-8 SDP that parses.
    static func description(in body: SIPBody?) -> SessionDescription? {
        guard let body, let text = String(validating: body.bytes, as: UTF8.self) else { return nil }
        return try? SessionDescription.parse(text)
    }

    /// Whether `host` is an IPv4 or IPv6 literal: a moved media address is followed only then,
    /// since the answer goes out at once and a name would need a lookup (getaddrinfo blocks).
    static func isNumericHost(_ host: String) -> Bool {
        var buffer = in6_addr()
        return inet_pton(AF_INET, host, &buffer) == 1 || inet_pton(AF_INET6, host, &buffer) == 1
    }

    /// Starts media towards the stream `answer` describes, then runs `then`; without a usable
    /// answer the call is hung up and ends as failed.
    private func startMedia(_ id: String, answer: SIPBody?, then: () -> Void) {
        do {
            guard let answer, let text = String(validating: answer.bytes, as: UTF8.self) else {
                throw CallError.signalling("the answer has no SDP")
            }
            try startMedia(id, remote: OpusSDP.stream(in: SessionDescription.parse(text)))
            then()
        } catch {
            logger.error("call \(id): cannot start media: \(error)")
            try? records[id]?.sip.bye()
            end(id, .failed("\(error)"))
        }
    }

    private static func endReason(_ reason: SIPCallEndReason, _ call: Call) -> CallEndReason {
        switch reason {
        case let .hungUp(byRemote): return byRemote ? .remoteHangUp : .localHangUp
        case let .cancelled(byRemote): return byRemote ? .remoteCancelled : .cancelled
        case let .failed(status, reason):
            switch status {
            case 486, 600, 603: return .busy
            case 488, 606: return .notAcceptable
            case 408, 480: return .noAnswer
            default: return .failed("\(status) \(reason)")
            }
        case .rejected: return .rejected
        case .shutdown: return .failed("SIP stopped")
        }
    }

    // MARK: Media and session lifecycle

    private var sdpParameters: OpusFormatParameters {
        OpusFormatParameters(useInbandFEC: configuration.codec.inbandFEC, useDTX: configuration.codec.dtx,
                             maxAverageBitrate: configuration.codec.bitrate, stereo: false, spropStereo: false)
    }

    /// Activates the session for the call, opens the device and starts media towards `remote`.
    private func startMedia(_ id: String, remote: OpusStreamDescription) throws(CallError) {
        guard var record = records[id], let ports = record.ports else { throw .invalidState("no call \(id)") }
        do {
            try session.setCategory(.playAndRecord, mode: .voiceChat, options: configuration.categoryOptions)
            try? session.setPreferredSampleRate(configuration.preferredSampleRate)
            try? session.setPreferredIOBufferDuration(configuration.preferredIOBufferDuration)
            try session.setActive(true)
        } catch {
            throw .audioSession("\(error)")
        }
        do {
            let device = try makeDevice()
            var codec = configuration.codec
            codec.sampleRate = device.format.sampleRate
            if let bitrate = remote.parameters.maxAverageBitrate { codec.bitrate = min(codec.bitrate, bitrate) }
            let mux = configuration.rtcpMux && remote.rtcpMux
            let (remoteAddress, rtcpAddress) = try destinations(of: remote, mux: mux)
            var rtpConfiguration = RTPSessionConfiguration(
                localAddress: ports.rtp, remoteAddress: remoteAddress, remoteRTCPAddress: rtcpAddress,
                rtcpMux: mux, payloadType: remote.payloadType, opus: codec)
            // Only the address the peer declared may become its source (a relay forwards from its own).
            if configuration.mediaPath == nil {
                let declared = try Self.peerAddress(remote)
                rtpConfiguration.validator.expectedSource = declared
                rtpConfiguration.validator.alternateSource = record.sip.remoteAddress.with(port: declared.port)
            }
            rtpConfiguration.telephoneEvents = remote.telephoneEvents
            // Another address family (a peer that advertises IPv6 while it talks to us over IPv4):
            // nothing we send there arrives.
            let unreachable = remoteAddress.family != ports.rtp.family
            if configuration.mediaPath == nil {
                rtpConfiguration.latchesToPeerSource = configuration.mediaLatching == .always
                    || (configuration.mediaLatching == .whenUnreachable && unreachable)
            }
            if unreachable && rtpConfiguration.latchesToPeerSource {
                logger.warning("the peer's media address is \(remoteAddress), which our \(ports.rtp) cannot reach: sending where its RTP comes from")
            }
            ports.release()
            let rtp = try RTPSession(configuration: rtpConfiguration, logger: logger)
            // A peer whose stream does not receive (offered or answered sendonly or inactive) gets no RTP.
            rtp.isSending = remote.direction.receives
            let media = try CallMedia(device: device, rtp: rtp, voice: configuration.voiceProcessing,
                                      capturesSilence: session.capturesSilence,
                                      recordUplinkSeconds: configuration.recordUplinkSeconds) { [weak self] error in
                Task { await self?.deviceFailed(id, error) }
            }
            record.media = media
            record.remote = remote
            records[id] = record
            try media.start()
            record.watchdog = watchMedia(id)
            let call = record.call
            Task { for await event in rtp.receivedTelephoneEvents { if let key = event.key { call.received(key) } } }
            record.io = try? beginIO(id, media)
            // Record permission is asked when input starts (in beginIO): follow the answer.
            media.setCapturesSilence(session.capturesSilence)
            records[id] = record
            (session.system.hardware as? ALSAAudioHardware)?.attach(media.engine)
        } catch let error as CallError {
            stopMedia(id)
            throw error
        } catch {
            stopMedia(id)
            throw .media("\(error)")
        }
    }

    func sendDTMF(_ keys: String, on call: Call) throws(CallError) {
        guard let media = records[call.id]?.media else { throw .dtmf("the call has no media") }
        do { try media.rtp.sendDTMF(keys) } catch { throw .dtmf("\(error)") }
    }

    /// Where RTP and RTCP go for the peer's stream `remote` (through `mediaPath` when set).
    private func destinations(of remote: OpusStreamDescription, mux: Bool) throws(CallError) -> (rtp: SocketAddress, rtcp: SocketAddress?) {
        let peer = try Self.peerAddress(remote)
        var rtcp = remote.rtcpPort.flatMap { try? SocketAddress(host: remote.address, port: UInt16(clamping: $0)) }
        if configuration.mediaPath != nil, rtcp == nil { rtcp = mux ? peer : peer.with(port: peer.port &+ 1) }
        return (configuration.mediaPath?(peer) ?? peer, rtcp)
    }

    private func makeDevice() throws -> any DuplexDevice {
        let rate = Int(session.sampleRate.rounded())
        let format = IOFormat(sampleRate: rate, ioBufferDuration: session.ioBufferDuration)
        switch configuration.audio {
        case .hardware:
            guard let hardware = session.system.hardware as? ALSAAudioHardware else {
                throw CallError.media("audio is .hardware but the session's hardware is not ALSA")
            }
            return try hardware.makeDevice(preferred: format)
        case let .device(make):
            return try make(format)
        }
    }

    /// Stops media and deactivates the session once no call needs it.
    private func stopMedia(_ id: String) {
        guard var record = records[id] else { return }
        if let media = record.media {
            (session.system.hardware as? ALSAAudioHardware)?.attach(nil)
            record.call.keep(snapshot(media))
            media.stop()
            if configuration.recordUplinkSeconds > 0 { finishedUplinks[id] = media.recordedUplink }
        }
        record.io?.end()
        record.io = nil
        record.media = nil
        record.watchdog?.cancel()
        record.watchdog = nil
        records[id] = record
        if session.isActive {
            do { try session.setActive(false, options: .notifyOthersOnDeactivation) } catch {
                logger.warning("deactivating the session after call \(id): \(error)")
            }
        }
    }

    /// The call's audio device failed and its I/O thread stopped: open the route's device again
    /// once (a sound server that restarted), or hang up with the reason. A device that fails
    /// again within `deviceRetryWindow` of being reopened (a server that stalls) ends the call.
    private func deviceFailed(_ id: String, _ error: IOError) {
        guard var record = records[id], let media = record.media else { return }
        logger.error("call \(id): the audio device failed: \(error)")
        let now = ContinuousClock.now
        if record.deviceReopenedAt.map({ now - $0 > Self.deviceRetryWindow }) ?? true {
            do {
                try media.restartAudio(on: makeDevice())
                (session.system.hardware as? ALSAAudioHardware)?.attach(media.engine)
                record.deviceReopenedAt = now
                records[id] = record
                logger.notice("call \(id): the audio device was opened again")
                return
            } catch {
                logger.error("call \(id): cannot open the audio device again: \(error)")
            }
        }
        try? record.sip.bye()
        end(id, .deviceFailed("\(error)"))
    }

    private static let deviceRetryWindow = Duration.seconds(2)

    func end(_ id: String, _ reason: CallEndReason) {
        guard let record = records[id] else { return }
        stopMedia(id)
        record.call.apply(.ended(reason))
        record.ports?.release()
        records[id] = nil
        heldCalls.set(id, held: false)
        if mediaCallID == id { mediaCallID = nil }
        logger.info("call \(id) ended: \(reason)")
    }

    private func interrupted(_ id: String) {
        guard let record = records[id], record.call.apply(.interrupted) else { return }
        record.io?.end()
        records[id]?.io = nil
        logger.info("call \(id) on hold: the audio session was interrupted")
        holdOnTheWire(true, id)
    }

    /// Holds the call on the wire too (or resumes it), if so configured: re-offers from the peer
    /// are answered within `inactive` until then (``HeldCalls``), and the peer is told with a
    /// re-INVITE offering `inactive` (or `sendrecv`) once the call is established.
    private func holdOnTheWire(_ held: Bool, _ id: String) {
        guard configuration.holdsPeerWhileInterrupted else { return }
        heldCalls.set(id, held: held)
        let direction: MediaDirection = held ? .inactive : .sendrecv
        guard let record = records[id], let ours = Self.description(in: record.sip.localDescription) else { return }
        do {
            let offer = try OpusSDP.reoffer(ours, direction: direction)
            try record.sip.reinvite(offer: .sdp(offer.text))
        } catch {
            logger.info("call \(id): the peer is not told (\(direction)): \(error)")
        }
    }

    private func sessionNotification(_ note: AudioSessionNotification) {
        switch note {
        case let .interruption(interruption):
            eventContinuation.yield(.interruption(interruption))
            if interruption.type == .ended, interruption.options.contains(.shouldResume), let id = mediaCallID {
                resume(id)
            }
        case let .routeChange(change):
            eventContinuation.yield(.routeChanged(reason: change.reason, route: session.currentRoute))
        default:
            break
        }
    }

    /// Tells the session the call's I/O runs; if the session stops it (an interruption), the
    /// call is held.
    private func beginIO(_ id: String, _ media: CallMedia) throws(AudioSessionError) -> IOActivity {
        try session.beginIO(named: "call \(id)") { [weak self, weak media] in
            media?.pauseAudio()
            if let self { Task { await self.interrupted(id) } }
        }
    }

    /// Reactivates the session and restarts capture and playout of a held call.
    private func resume(_ id: String) {
        guard var record = records[id], case .held = record.call.state, let media = record.media else { return }
        do {
            try session.setActive(true)
            record.io = try beginIO(id, media)
            try media.resumeAudio()
            records[id] = record
            record.call.apply(.resumed)
            logger.info("call \(id) resumed")
            holdOnTheWire(false, id)
        } catch {
            logger.error("call \(id): cannot resume: \(error)")
        }
    }

    private func snapshot(_ media: CallMedia) -> CallStatistics {
        let network = media.rtp.statistics
        let jitter = media.jitterBufferStatistics
        let voice = media.voice.statistics
        var s = CallStatistics()
        s.packetsSent = network.packetsSent
        s.packetsReceived = network.packetsReceived
        s.packetsLost = network.packetsLost
        s.jitterMs = network.jitterMs
        s.rttMs = network.rttMs
        s.packetsDropped = network.droppedTotal
        s.fecRecovered = jitter.fecRecovered
        s.framesEncodedWithFEC = network.framesEncodedWithFEC
        s.concealedMs = jitter.concealedMs
        s.concealedWithoutLossMs = jitter.concealedWithoutLossMs
        s.jitterBufferDelayMs = jitter.currentDelayMs
        s.jitterBufferTargetMs = jitter.targetDelayMs
        s.erleDB = voice.erleDB
        // The device delay stands in until the estimator locks; with no echo there is no delay to report.
        s.echoDelayMs = voice.echoPath == .absent ? nil : voice.estimatedDelayMs
        s.echoPath = "\(voice.echoPath)"
        s.driftPPM = voice.driftPPM
        s.processingLatencyMs = voice.addedLatencyMs
        s.codecLookaheadMs = media.codecLookaheadMs
        s.xruns = media.engine?.statistics.xruns ?? 0
        s.captureLevelDBFS = media.captureLevelDBFS
        s.playbackLevelDBFS = media.playbackLevelDBFS
        s.route = session.currentRoute.outputs.map(\.portType.rawValue).joined(separator: "+")
        s.cpuLoad = media.cpuLoad
        return s
    }
}

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

/// What the controller keeps per call.
struct CallRecord {
    let call: Call
    let sip: SIPCall
    var ports: PortReservation?
    var offer: SessionDescription?
    /// The answer in a provisional response (early media), for a 2xx that does not repeat it.
    var earlyAnswer: SIPBody?
    /// The peer's stream as it last described it (where media goes).
    var remote: OpusStreamDescription?
    var media: CallMedia?
    var io: IOActivity?
    /// When the audio device was last opened again after a failure.
    var deviceReopenedAt: ContinuousClock.Instant?
    /// Ends the call when the peer falls silent (``CallConfiguration/mediaTimeout``).
    var watchdog: Task<Void, Never>?
    /// When the media started or was last excepted from the timeout (a hold), monotonic nanoseconds.
    var mediaQuietSince: UInt64 = 0

    init(call: Call, sip: SIPCall, ports: PortReservation?, offer: SessionDescription? = nil) {
        self.call = call
        self.sip = sip
        self.ports = ports
        self.offer = offer
    }
}
