import AudioSession
import Logging

/// The local ringback: what our loudspeaker plays while a call we placed rings without early media.
extension CallController {
    /// Plays ``CallConfiguration/ringback`` for call `id`, which rings with no early media, when
    /// no other call has the audio (one that has keeps it: the tone would take its device).
    func startRingback(_ id: String) {
        guard let tone = configuration.ringback, var record = records[id], record.ringback == nil, record.media == nil,
              audioCallID == nil else { return }
        do {
            try activateSession()
            let player = try LocalTone(device: makeDevice(), tone: tone)
            // An interruption stops the tone at once; the call rings on in silence.
            record.ringbackIO = try session.beginIO(named: "ringback \(id)") { [weak player] in player?.stop() }
            try player.start()
            record.ringback = player
            records[id] = record
        } catch {
            record.ringbackIO?.end()
            logger.warning("call \(id): cannot play the ringback: \(error)")
            deactivateSessionIfIdle(after: id)
        }
    }

    /// Stops the ringback of call `id`, if one plays (the session stays for what comes next).
    func stopRingback(_ id: String) {
        guard var record = records[id], let player = record.ringback else { return }
        player.stop()
        record.ringbackIO?.end()
        record.ringback = nil
        record.ringbackIO = nil
        records[id] = record
    }
}
