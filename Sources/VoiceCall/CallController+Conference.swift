import Logging

/// A local three-way conference: two calls mixed on one device, each peer hearing us and the
/// other peer (pjsua2's conference bridge with three ports). The call with the audio hosts it;
/// the other's media runs on the host's I/O thread.
extension CallController {
    /// Joins `call` and `other` (``Call/conference(with:)``): the call with the audio hosts (else
    /// `call`, taken off hold), and the other call is taken off hold at its peer.
    func conference(_ call: Call, with other: Call) throws(CallError) {
        guard call.id != other.id, let first = records[call.id], let second = records[other.id] else {
            throw .invalidState("a conference joins two of this controller's calls")
        }
        guard first.conference == nil, second.conference == nil else { throw .invalidState("a call is in a conference already") }
        for joining in [call, other] where joining.state != .active && joining.state != .held(.local) {
            throw .invalidState("only a call active or held by us joins a conference (\(joining.id) is \(joining.state))")
        }
        let hostID = audioCallID == other.id ? other.id : call.id
        let memberID = hostID == call.id ? other.id : call.id
        if audioCallID != hostID { try resumeAudio(hostID) }
        guard let host = records[hostID]?.media, let member = records[memberID], let memberMedia = member.media else {
            throw .invalidState("a call of the conference has no media")
        }
        if memberMedia.hasDevice { memberMedia.releaseDevice() }
        try host.host(memberMedia)
        records[hostID]?.conference = memberID
        records[memberID]?.conference = hostID
        if member.call.state == .held(.local) {
            member.call.apply(.resumed)
            tellPeer(held: false, memberID)
        }
        logger.info("calls \(hostID) and \(memberID) in a conference")
    }

    /// Ends the conference call `id` is in, as it leaves (held, ended, transferred): the host's
    /// audio goes on alone, and a member left without the host is held at its peer.
    func splitConference(_ id: String) {
        guard let partnerID = records[id]?.conference else { return }
        records[id]?.conference = nil
        records[partnerID]?.conference = nil
        let hostID = records[id]?.media?.member != nil ? id : partnerID
        do { try records[hostID]?.media?.dismissMember() } catch {
            logger.error("call \(hostID): the audio did not restart after the conference: \(error)")
        }
        logger.info("calls \(id) and \(partnerID) no longer in a conference")
        guard hostID == id, let partner = records[partnerID], partner.call.state == .active else { return }
        partner.call.apply(.hold)
        tellPeer(held: true, partnerID)
    }

    /// The other call of the conference `call` is in, if any.
    func conferencePartner(of call: Call) -> String? { records[call.id]?.conference }
}
