import MediaNegotiation
import SDP
import Platform
import AudioSession
import AudioIO
import Glibc
import Logging
import Opus
import RTP
import SIP
import Synchronization
import VoiceProcessing

extension CallController {
    // MARK: Signalling events

    func follow(_ sipCall: SIPCall, _ call: Call) {
        Task { [weak self] in
            for await event in sipCall.events { await self?.signalling(event, call) }
        }
    }

    func signalling(_ event: SIPCallEvent, _ call: Call) {
        guard records[call.id] != nil else { return }
        reportToReferrer(event, call)
        switch event {
        case .trying:
            break
        case let .ringing(body):
            guard call.state == .outgoingRinging else { return }
            if let body {
                // Early media's answer: some peers send it in a 183 and not again in the 2xx.
                records[call.id]?.earlyAnswer = body
                startEarlyMedia(call.id, answer: body)
            } else {
                startRingback(call.id)
            }
        case let .confirmed(body):
            // An INVITE without an offer: the caller's answer came with the ACK.
            guard let record = records[call.id], call.state == .active else { return }
            if record.offer == nil, record.media == nil { startMedia(call.id, answer: body, then: {}) }
            grantConsent(call.id)  // the ACK
            dialogEstablished(call.id)
        case let .answered(body):
            guard call.state == .outgoingRinging, let record = records[call.id] else { return }
            stopRingback(call.id)
            if record.media != nil {
                // Early media runs: a 2xx with another answer (another fork) moves it there.
                if let body, body != record.earlyAnswer { peerChanged(body, call, announcesHold: false) }
                grantConsent(call.id)
                call.apply(.answered)
            } else {
                startMedia(call.id, answer: body ?? record.earlyAnswer, then: { call.apply(.answered) })
            }
            dialogEstablished(call.id)
        case let .reoffered(body):
            peerChanged(body, call)
        case let .reinviteAnswered(body):
            // The answer to our hold or resume: follow its address; its direction is ours mirrored.
            if let body { peerChanged(body, call, announcesHold: false) }
        case let .reinviteDeclined(status, reason):
            logger.warning("call \(call.id): the peer declined our re-INVITE: \(status) \(reason)")
        case let .referred(referral):
            referred(referral, on: call)
        case let .referProgress(status, reason, final):
            referProgress(call.id, status: status, reason: reason, final: final)
        case let .referDeclined(status, reason):
            finishTransfer(call.id, .failure(.transferFailed(status: status, reason: reason)))
        case let .ended(reason):
            end(call.id, Self.endReason(reason, call))
        }
    }

    /// The peer's description changed (a re-offer we answered, or its answer in the ACK of a
    /// re-INVITE without an offer): follow its address and its direction.
    func peerChanged(_ body: SIPBody, _ call: Call, announcesHold: Bool = true) {
        guard let description = Self.description(in: body), var record = records[call.id], let media = record.media,
              let remote = try? AudioSDP.stream(in: description, codecs: [record.remote?.codec ?? .opus]) else { return }
        followKeys(description, &record)
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
        // A peer that resumes sending: the media timeout counts from now, not from its hold.
        if let before = record.remote, !before.direction.sends, remote.direction.sends {
            record.mediaQuietSince = MonotonicClock.nanoseconds()
        }
        if !heldByAddress { record.remote = remote }
        records[call.id] = record
        // While we hold the call we answered `inactive` (``HeldCalls``): nothing is sent, and
        // whatever the peer offered is not its hold.
        let weHold = heldCalls.contains(call.id)
        let sending = remote.direction.receives && !heldByAddress && !weHold && !record.awaitsConsent
        guard media.rtp.isSending != sending else { return }
        media.rtp.isSending = sending
        guard announcesHold, !weHold else { return }
        logger.info("call \(call.id): \(sending ? "the peer took the call off hold" : "the peer put the call on hold")")
        eventBroadcast.yield(.peerHold(callID: call.id, held: !sending))
    }

    /// The answer to a peer's changed offer in an established call (hold, resume, media moved
    /// to a new address or port): ``AudioSDP/reanswer(_:peerPrevious:ours:wanting:)`` within the
    /// directions we want (`inactive` while we hold the call); a new codec, address family or
    /// set of streams is declined (488) and the call goes on as it was. Runs on the SIP thread.
    static func answerChangedOffer(_ offer: SIPBody, peerPrevious: SIPBody?, ours: SIPBody,
                                   wanting wanted: MediaDirection = .sendrecv,
                                   security: NegotiatedMediaSecurity? = nil) -> SIPBody? {
        guard offer.contentType.lowercased() == "application/sdp",
              let new = description(in: offer), let previous = description(in: peerPrevious), let last = description(in: ours),
              let media = AudioSDP.streamMedia(in: new), (try? (security ?? .clear).following(new, media: media)) != nil,
              let (answer, remote) = try? AudioSDP.reanswer(new, peerPrevious: previous, ours: last, wanting: wanted),
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
    func startMedia(_ id: String, answer: SIPBody?, then: () -> Void) {
        do {
            try startMedia(id, answer: answer)
            then()
        } catch {
            logger.error("call \(id): cannot start media: \(error)")
            try? records[id]?.sip?.bye()
            if case .mediaSecurity = error as? CallError { end(id, .notAcceptable(nil)) } else { end(id, .failed("\(error)")) }
        }
    }

    /// Starts media towards the stream `answer` describes.
    private func startMedia(_ id: String, answer: SIPBody?, awaitingConsent: Bool = false) throws {
        guard let answer, let text = String(validating: answer.bytes, as: UTF8.self) else {
            throw CallError.signalling("the answer has no SDP")
        }
        let description = try SessionDescription.parse(text)
        let remote = try AudioSDP.stream(in: description, codecs: configuration.codecs, order: .theirs)
        try startMedia(id, remote: remote, security: acceptedSecurity(id, answer: description), awaitingConsent: awaitingConsent)
    }

    /// Plays the early media of a call we placed (a 183 with an answer, RFC 3960's gateway
    /// model): the peer's announcement or ringback is heard; ours is sent once its first packet
    /// comes from the address it declared (media consent), so an IVR hears our DTMF. A 2xx
    /// confirms it. An answer we cannot use leaves the call ringing, in silence.
    func startEarlyMedia(_ id: String, answer: SIPBody) {
        guard records[id]?.media == nil else { return }
        stopRingback(id)
        do {
            try startMedia(id, answer: answer, awaitingConsent: true)
            logger.info("call \(id): early media")
        } catch {
            stopMedia(id)
            logger.warning("call \(id): cannot play the early media: \(error)")
        }
    }

    /// The encryption the peer's `answer` agrees to our offer.
    private func acceptedSecurity(_ id: String, answer: SessionDescription) throws(CallError) -> NegotiatedMediaSecurity {
        guard let offered = records[id]?.securityOffer else { return .clear }
        guard let media = AudioSDP.streamMedia(in: answer, codecs: configuration.codecs) else {
            throw .signalling("the answer has no stream in a codec we offered")
        }
        do {
            return try configuration.mediaSecurity.acceptAnswer(answer, media: media, offered: offered)
        } catch {
            throw .mediaSecurity("\(error)")
        }
    }

    static func endReason(_ reason: SIPCallEndReason, _ call: Call) -> CallEndReason {
        switch reason {
        case let .hungUp(byRemote): return byRemote ? .remoteHangUp : .localHangUp
        case let .cancelled(byRemote): return byRemote ? .remoteCancelled : .cancelled
        case let .failed(status, reason):
            let response = SIPFinalResponse(status: status, reason: reason)
            switch status {
            case 486, 600, 603: return .busy(response)
            case 488, 606: return .notAcceptable(response)
            case 408, 480: return .noAnswer(response)
            default: return .refused(response)
            }
        case let .rejected(status): return .rejected(SIPFinalResponse(status: status, reason: reasonPhrase(status)))
        case .shutdown: return .failed("SIP stopped")
        }
    }
}
