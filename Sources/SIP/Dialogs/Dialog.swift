/// What identifies a dialog (RFC 3261 section 12): the Call-ID and both tags.
struct DialogID: Sendable, Hashable, CustomStringConvertible {
    var callID: String
    var localTag: String
    var remoteTag: String

    var description: String { "\(callID);local=\(localTag);remote=\(remoteTag)" }
}

/// The state of a dialog (RFC 3261 section 12.1): the peer's target and route set, and the
/// sequence numbers of each side. A UAC keeps one only from a 2xx (early dialogs are not
/// kept), so a UAC's dialog is always confirmed; a UAS keeps one from the INVITE.
struct Dialog: Sendable {
    var id: DialogID
    /// Our party (`From` of our requests), without the tag.
    var local: SIPNameAddress
    /// The peer's party (`To` of our requests), without the tag.
    var remote: SIPNameAddress
    /// Where in-dialog requests go: the peer's `Contact`.
    var remoteTarget: SIPURI
    /// `Route` headers for in-dialog requests (loose routing), in the order they are sent.
    var routeSet: [SIPNameAddress]
    /// The CSeq of our last request.
    var localSequence: UInt32
    /// The CSeq of the peer's last request (nil before its first, for a UAC).
    var remoteSequence: UInt32?

    /// A dialog created by a UAC from a response with a To tag (section 12.1.2).
    static func uac(invite: SIPRequest, response: SIPResponse) -> Dialog? {
        guard let from = try? invite.headers.from(), let localTag = from.tag, let to = try? response.headers.to(),
              let cseq = try? invite.headers.cseq(),
              var dialog = make(invite, local: from, localTag: localTag, remote: to, peer: response.headers,
                                fallbackTarget: invite.uri)
        else { return nil }
        dialog.routeSet.reverse()
        dialog.localSequence = cseq.sequence
        return dialog
    }

    /// A dialog created by a UAS for a request that creates one (section 12.1.1).
    static func uas(request: SIPRequest, localTag: String) -> Dialog? {
        guard let from = try? request.headers.from(), let to = try? request.headers.to(),
              let cseq = try? request.headers.cseq(),
              var dialog = make(request, local: to, localTag: localTag, remote: from, peer: request.headers,
                                fallbackTarget: from.uri)
        else { return nil }
        dialog.remoteSequence = cseq.sequence
        return dialog
    }

    /// What both sides share: the Call-ID, the parties without their tags, and the peer's
    /// `Contact` (else `fallbackTarget`) and `Record-Route` from `peer`, the headers of the
    /// peer's message (the response for a UAC, the request for a UAS). Nil without a remote tag.
    private static func make(_ request: SIPRequest, local: SIPNameAddress, localTag: String, remote: SIPNameAddress,
                             peer: SIPHeaders, fallbackTarget: SIPURI) -> Dialog? {
        guard let callID = try? request.headers.callID(), let remoteTag = remote.tag else { return nil }
        var local = local, remote = remote
        local.tag = nil
        remote.tag = nil
        let target = peer.firstContact?.uri
        return Dialog(id: DialogID(callID: callID, localTag: localTag, remoteTag: remoteTag),
                      local: local, remote: remote, remoteTarget: target ?? fallbackTarget,
                      routeSet: (try? peer.recordRoutes()) ?? [], localSequence: 0, remoteSequence: nil)
    }

    /// A request within the dialog (section 12.2.1.1), without `Via`; ACK and CANCEL reuse
    /// a sequence number, every other method takes the next one.
    mutating func makeRequest(_ method: SIPMethod, sequence: UInt32? = nil) -> SIPRequest {
        let cseq: UInt32
        if let sequence {
            cseq = sequence
        } else {
            localSequence &+= 1
            cseq = localSequence
        }
        var headers = SIPHeaders()
        var from = local, to = remote
        from.tag = id.localTag
        to.tag = id.remoteTag
        headers.add("Max-Forwards", "70")
        headers.add("From", from.description)
        headers.add("To", to.description)
        headers.add("Call-ID", id.callID)
        headers.add("CSeq", "\(cseq) \(method)")
        for route in routeSet { headers.add("Route", route.description) }
        return SIPRequest(method: method, uri: remoteTarget, headers: headers)
    }
}
