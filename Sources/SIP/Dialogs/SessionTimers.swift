import Logging

// Session timers (RFC 4028): a dialog is refreshed every half interval by the side chosen as
// refresher (ours by re-INVITE; the peer's by re-INVITE or UPDATE), and the other side ends it
// with a BYE when no refresh came before the interval (less a margin) is over. Providers put `Require: timer` in their INVITEs and
// answer 420 or 422 to a UA that does not take part.

/// A dialog's session timer: its interval and who refreshes.
struct SessionTimer: Sendable, Equatable {
    /// Seconds (RFC 4028 `Session-Expires`).
    var interval: Int
    var weRefresh: Bool
    /// A later refresh makes the timers armed before it stale.
    var generation: UInt64 = 0
}

/// The largest interval we take from a peer (a day): a longer one is shortened in our answer.
let maximumSessionInterval = 86_400

extension SIPHeaders {
    /// `Session-Expires: N[;refresher=uac|uas]` (compact `x`); nil when absent or malformed.
    func sessionExpires() -> (seconds: Int, refresher: String?)? {
        guard let value = self["Session-Expires"] else { return nil }
        let parts = value.split(separator: ";")
        guard let first = parts.first, let seconds = Int(first.trimmed), seconds > 0 else { return nil }
        let refresher = parts.dropFirst().first { $0.trimmed.lowercased().hasPrefix("refresher=") }
            .map { String($0.trimmed.dropFirst("refresher=".count)).lowercased() }
        return (seconds, refresher)
    }

    /// `Min-SE: N` (RFC 4028 section 5); nil when absent or malformed.
    func minimumSessionExpires() -> Int? {
        self["Min-SE"].flatMap { Int($0.split(separator: ";").first?.trimmed ?? "") }
    }

    /// Whether the message lists `timer` in `Supported` (or `Require`).
    var supportsSessionTimer: Bool {
        (tokens("Supported") + tokens("Require")).contains { $0.lowercased() == "timer" }
    }
}

extension CoreState {
    /// The headers of a request we send in a dialog with a session timer, or of our INVITE.
    func sessionTimerRequestHeaders(_ timer: SessionTimer?) -> SIPHeaders {
        var headers = SIPHeaders()
        guard let interval = timer?.interval ?? env.configuration.sessionInterval else { return headers }
        headers.add("Supported", "timer")
        headers.add("Session-Expires", timer.map { "\(interval);refresher=\($0.weRefresh ? "uac" : "uas")" } ?? String(interval))
        headers.add("Min-SE", String(timers.minimumSessionSeconds))
        return headers
    }

    /// The session timer an incoming INVITE or re-INVITE asks for, as seen from us, the UAS
    /// (RFC 4028 section 9): nil without `Session-Expires`.
    func sessionTimer(requestedBy request: SIPRequest) -> SessionTimer? {
        guard let (seconds, refresher) = request.headers.sessionExpires() else { return nil }
        let interval = min(max(seconds, timers.minimumSessionSeconds), maximumSessionInterval)
        // The UAC refreshes when it says so, or when it supports timers and leaves it to us to choose.
        let uacRefreshes = refresher.map { $0 == "uac" } ?? request.headers.supportsSessionTimer
        return SessionTimer(interval: interval, weRefresh: !uacRefreshes)
    }

    /// `Session-Expires` (and `Require: timer` when the peer supports it) for our 2xx to a
    /// request that carried a session timer.
    func sessionTimerResponseHeaders(_ timer: SessionTimer, request: SIPRequest) -> SIPHeaders {
        var headers = SIPHeaders()
        headers.add("Session-Expires", "\(timer.interval);refresher=\(timer.weRefresh ? "uas" : "uac")")
        if request.headers.supportsSessionTimer { headers.add("Require", "timer") }
        return headers
    }

    /// Starts (or restarts, after a refresh) the call's session timer.
    mutating func startSessionTimer(_ callKey: CallKey, _ timer: SessionTimer) {
        guard calls[callKey] != nil else { return }
        var timer = timer
        timer.generation = (calls[callKey]!.sessionTimer?.generation ?? 0) &+ 1
        calls[callKey]!.sessionTimer = timer
        if timer.weRefresh {
            schedule(.seconds(timer.interval / 2), .call(callKey, .sessionRefresh(timer.generation)))
        } else {
            // RFC 4028 section 10: the interval less a third of it, at most 32 s.
            schedule(.seconds(timer.interval - min(32, timer.interval / 3)), .call(callKey, .sessionExpiry(timer.generation)))
        }
    }

    /// A session timer fired: refresh with our last description, or end a session nobody refreshed.
    mutating func sessionTimerFired(_ callKey: CallKey, refresh: Bool, generation: UInt64) {
        guard let call = calls[callKey], call.phase == .established, let timer = call.sessionTimer,
              timer.generation == generation else { return }
        if refresh, let ours = call.localBody {
            logger.debug("SIP: call \(call.dialog?.id.callID ?? "?"): session refresh")
            _ = reinvite(callKey, offer: ours)
            return
        }
        logger.warning("SIP: call \(call.dialog?.id.callID ?? "?"): no session refresh in \(timer.interval) s; ending it")
        sendBYE(callKey)
        end(callKey, .failed(status: 408, reason: "Session Expired"))
    }

    /// Our INVITE got 422 (Session Interval Too Small): sent again once, with the peer's minimum.
    mutating func retryWithLongerSession(_ callKey: CallKey, _ response: SIPResponse) -> Bool {
        guard let call = calls[callKey], !call.retriedSessionInterval, let invite = call.invite,
              let minimum = response.headers.minimumSessionExpires(), minimum <= maximumSessionInterval,
              minimum > (invite.headers.sessionExpires()?.seconds ?? 0)
        else { return false }
        calls[callKey]!.retriedSessionInterval = true
        logger.info("SIP: 422 Session Interval Too Small: asking for \(minimum) s")
        return resendInvite(callKey) { headers in
            headers.set("Session-Expires", String(minimum))
            headers.set("Min-SE", String(minimum))
        }
    }

    /// An UPDATE (RFC 3311) in an established call: a session refresh (RFC 4028 section 7.4)
    /// when it carries no offer or the same one as before (then our last description answers it).
    /// A changed offer gets 488 and the session stays as it was: media changes come by
    /// re-INVITE, which every peer sends. Before the call is established: 491.
    mutating func handleUPDATE(_ request: SIPRequest, key: ServerKey, callKey: CallKey) {
        guard let call = calls[callKey], call.phase == .established, call.reofferKey == nil else {
            respond(key, status: 491)
            return
        }
        guard request.body.isEmpty || request.body == call.remoteBody?.bytes else {
            respond(key, status: 488, toTag: call.localTag)
            return
        }
        // A target refresh request (RFC 3311 section 5.2).
        if let target = request.headers.firstContact?.uri { calls[callKey]!.dialog?.remoteTarget = target }
        var response = makeResponse(to: request, status: 200, toTag: call.localTag)
        response.headers.add("Contact", "<\(contactURI(user: call.account, localHost: call.localHost, transport: call.peer.transport))>")
        if let timer = sessionTimer(requestedBy: request) ?? call.sessionTimer {
            for field in sessionTimerResponseHeaders(timer, request: request) { response.headers.add(field) }
            startSessionTimer(callKey, timer)
        }
        if !request.body.isEmpty, let ours = call.localBody {
            response.headers.add("Content-Type", ours.contentType)
            response.body = ours.bytes
        }
        respond(key, response)
    }
}
