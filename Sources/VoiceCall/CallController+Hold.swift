import AudioIO
import AudioSession
import Logging
import MediaNegotiation
import SDP
import SIP
import Synchronization

/// Holding and resuming calls (by the app, by another call taking the audio, or by an
/// interruption of the audio session), mute, and declining with a chosen status.
extension CallController {
    /// The session was interrupted under call `id`: it is held, and the peer told if so configured.
    func interrupted(_ id: String) {
        guard let record = records[id], record.call.apply(.interrupted) else { return }
        record.io?.end()
        records[id]?.io = nil
        logger.info("call \(id) on hold: the audio session was interrupted")
        if configuration.holdsPeerWhileInterrupted { tellPeer(held: true, id) }
    }

    /// The app holds `call` (``Call/hold()``).
    func hold(_ call: Call) throws(CallError) {
        guard records[call.id] != nil else { throw .invalidState("no call \(call.id)") }
        if call.state == .active { splitConference(call.id) }
        switch call.state {
        case .held(.local):
            return
        case .held(.interrupted):
            // Audio already stopped; the peer may not have been told (holdsPeerWhileInterrupted).
            releaseAudio(call.id)
            call.apply(.hold)
            if !configuration.holdsPeerWhileInterrupted { tellPeer(held: true, call.id) }
        case .active:
            releaseAudio(call.id)
            call.apply(.hold)
            tellPeer(held: true, call.id)
        default:
            throw .invalidState("only an active call can be held (\(call.state))")
        }
        logger.info("call \(call.id) held")
    }

    /// Stops the audio of call `id` and closes its device (the network side stays up).
    private func releaseAudio(_ id: String) {
        guard let record = records[id] else { return }
        if audioCallID == id {
            deviceProvider?.attach(nil)
            audioCallID = nil
        }
        record.media?.releaseDevice()
        record.io?.end()
        records[id]?.io = nil
    }

    /// Holds the call that has the audio, if it is not `id`: one call has the audio at a time.
    func yieldAudio(to id: String) throws(CallError) {
        guard let current = audioCallID, current != id, let record = records[current] else { return }
        // A call still ringing with early media just goes quiet: its 2xx starts media again.
        if record.call.state == .outgoingRinging { return stopMedia(current) }
        try hold(record.call)
    }

    /// The app takes `call` off hold (``Call/resume()``).
    func resumeHeld(_ call: Call) throws(CallError) {
        guard case .held = call.state else { throw .invalidState("only a held call can be resumed (\(call.state))") }
        try resumeAudio(call.id)
    }

    /// Reactivates the session, restarts capture and playout of held call `id`, and tells the
    /// peer if it was told of the hold.
    func resumeAudio(_ id: String) throws(CallError) {
        guard var record = records[id], case let .held(reason) = record.call.state, let media = record.media else {
            throw .invalidState("call \(id) is not held")
        }
        try yieldAudio(to: id)
        do {
            try session.setActive(true)
            record.io = try beginIO(id, media)
        } catch {
            logger.error("call \(id): cannot resume: \(error)")
            throw .audioSession("\(error)")
        }
        do {
            if media.hasDevice { try media.resumeAudio() } else { try media.restartAudio(on: makeDevice()) }
        } catch {
            record.io?.end()
            logger.error("call \(id): cannot resume its audio: \(error)")
            throw error as? CallError ?? .media("\(error)")
        }
        deviceProvider?.attach(media.engine)
        audioCallID = id
        records[id] = record
        record.call.apply(.resumed)
        logger.info("call \(id) resumed")
        if reason == .local || configuration.holdsPeerWhileInterrupted { tellPeer(held: false, id) }
    }

    /// Tells the peer of our hold (or its end): re-offers from it are answered within `inactive`
    /// meanwhile (``HeldCalls``), and it gets a re-INVITE offering `inactive` (or `sendrecv`)
    /// once the call is established.
    func tellPeer(held: Bool, _ id: String) {
        heldCalls.set(id, held: held)
        if let room = records[id]?.room { return room.setHeld(held) }
        let direction: MediaDirection = held ? .inactive : .sendrecv
        guard let sip = records[id]?.sip, let ours = Self.description(in: sip.localDescription) else { return }
        do {
            let offer = try AudioSDP.reoffer(ours, direction: direction)
            try sip.reinvite(offer: .sdp(offer.text))
        } catch {
            logger.info("call \(id): the peer is not told (\(direction)): \(error)")
        }
    }

    /// Mutes or unmutes `call`'s microphone (the choice outlives a hold and a device restart).
    func setMuted(_ muted: Bool, on call: Call) {
        call.muted.store(muted, ordering: .relaxed)
        records[call.id]?.media?.setMuted(muted)
        records[call.id]?.room?.setMuted(muted)
    }

    /// Declines a ringing incoming call with `status` and `reason`.
    func reject(_ call: Call, status: Int, reason: String?) throws(CallError) {
        guard (400...699).contains(status) else { throw .invalidState("\(status) is not a final error status (400 to 699)") }
        guard reason.map({ !$0.contains { $0.isNewline } }) ?? true else { throw .invalidState("a reason phrase is one line") }
        guard let record = records[call.id], call.state == .incomingRinging else {
            throw .invalidState("only an incoming call that is ringing can be rejected (\(call.state))")
        }
        let response = SIPFinalResponse(status: status, reason: reason ?? Self.reasonPhrase(status))
        try? record.sip?.reject(status: status, reason: response.reason)
        end(call.id, .rejected(response))
    }

    /// RFC 3261's phrase for the statuses an app declines with, else a generic one.
    static func reasonPhrase(_ status: Int) -> String {
        switch status {
        case 403: "Forbidden"
        case 404: "Not Found"
        case 480: "Temporarily Unavailable"
        case 486: "Busy Here"
        case 488: "Not Acceptable Here"
        case 600: "Busy Everywhere"
        case 603: "Decline"
        case 604: "Does Not Exist Anywhere"
        default: status < 500 ? "Request Failed" : status < 600 ? "Server Error" : "Global Failure"
        }
    }
}
