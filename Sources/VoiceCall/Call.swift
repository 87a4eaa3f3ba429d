public import Platform
public import Janus

import RTP
import Synchronization

/// One call: its direction, its peer, where it is in its life, and its media statistics.
///
/// Made by a ``CallController`` (``CallController/dial(_:from:)`` or an incoming INVITE); act on it
/// with ``answer()``, ``hangUp()`` and ``reject()``, which the controller carries out.
///
/// Thread safety: safe from any thread. ``states`` delivers every state change in order.
public final class Call: Sendable, Identifiable, CustomStringConvertible {
    public enum Direction: String, Sendable { case outgoing, incoming }

    /// The SIP Call-ID.
    public let id: String
    public let direction: Direction
    /// The peer's SIP URI.
    public let remoteURI: String
    /// Where the peer's SIP comes from (the INVITE's source, or where ours went): the next hop,
    /// which is the peer itself without a proxy.
    public let remoteAddress: SocketAddress
    /// The SIP transport to the next hop: `udp`, `tcp` or `tls`.
    public let transport: String
    /// The user of our account the call is placed from or addressed to
    /// (``CallConfiguration/userName``, or one ``CallController/addAccount(user:displayName:credentials:)`` added).
    public let account: String
    /// Every state the call enters, from the one after ``CallState/idle`` to ``CallState/ended(_:)``.
    public let states: AsyncStream<CallState>
    /// The DTMF keys the peer presses (RFC 4733 telephone events), each once, in order.
    /// Finishes when the call ends. Keeps the newest 64 when nobody reads.
    public let dtmf: AsyncStream<Character>

    private let machine = Mutex(CallStateMachine())
    private let continuation: AsyncStream<CallState>.Continuation
    private let dtmfContinuation: AsyncStream<Character>.Continuation
    private let lastStatistics = Mutex(CallStatistics())
    private let controller: CallController
    private let waiters = Mutex<[Waiter]>([])
    let muted = Atomic<Bool>(false)
    /// When the call was made (monotonic nanoseconds), to list calls in order.
    let createdAt = MonotonicClock.nanoseconds()

    /// Someone waiting for the call to reach a state.
    private struct Waiter {
        let isReached: @Sendable (CallState) -> Bool
        let continuation: CheckedContinuation<CallState, Never>
    }

    init(id: String, direction: Direction, remoteURI: String, controller: CallController, remoteAddress: SocketAddress,
         transport: String, account: String) {
        self.id = id
        self.account = account
        self.remoteAddress = remoteAddress
        self.transport = transport
        self.direction = direction
        self.remoteURI = remoteURI
        self.controller = controller
        (states, continuation) = AsyncStream.makeStream(bufferingPolicy: .unbounded)
        (dtmf, dtmfContinuation) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(64))
    }

    /// Where the call is now.
    public var state: CallState { machine.withLock { $0.state } }

    /// The media statistics now (the last ones, once the call has ended).
    public var statistics: CallStatistics {
        get async { await controller.statistics(of: self) ?? lastStatistics.withLock { $0 } }
    }

    /// Answers an incoming call: the session is activated and media starts.
    public func answer() async throws(CallError) { try await controller.answer(self) }

    /// Ends the call: cancels it while ringing, else hangs up (BYE). The session is deactivated
    /// with `notifyOthersOnDeactivation` once no call needs it.
    public func hangUp() async { await controller.hangUp(self) }

    /// Sends DTMF keys (`0`-`9`, `*`, `#`, `A`-`D`) to the peer as RFC 4733 telephone events
    /// (an IVR menu, a PIN): 100 ms each, in place of the audio meanwhile, 200 ms a key in all.
    ///
    /// - Throws: ``CallError/dtmf(_:)``, sending nothing, when the call has no media, the peer did
    ///   not accept telephone events, a key is not a DTMF key, or too many keys are waiting.
    public func sendDTMF(_ keys: String) async throws(CallError) { try await controller.sendDTMF(keys, on: self) }

    /// The participants of the conference room this call is (``CallController/join(_:)``),
    /// ourselves included, as Janus lists them now.
    ///
    /// - Throws: ``CallError/invalidState(_:)`` for a call that is not in a room,
    ///   ``CallError/conference(_:)`` when Janus does not answer.
    public func roomParticipants() async throws(CallError) -> [AudioBridgeParticipant] {
        try await controller.participants(of: self)
    }

    /// Declines an incoming call (486 Busy Here).
    public func reject() async { await controller.reject(self) }

    /// Declines an incoming call with `status` (a final response, 400 to 699: 486 Busy Here,
    /// 603 Decline, 480 Temporarily Unavailable, ...) and `reason`, by default the status's own phrase.
    ///
    /// - Throws: ``CallError/invalidState(_:)``, sending nothing, for a status outside 400...699,
    ///   a reason with line breaks, or a call that is not ringing.
    public func reject(status: Int, reason: String? = nil) async throws(CallError) {
        try await controller.reject(self, status: status, reason: reason)
    }

    /// Holds the call: capture and playout stop, and the peer is told with a re-INVITE offering
    /// `a=inactive` (so it stops sending and shows the call as held). The call stays
    /// ``CallState/held(_:)`` with ``HoldReason/local`` until ``resume()``, whatever an
    /// interruption does meanwhile.
    ///
    /// - Throws: ``CallError/invalidState(_:)`` when the call is not active or held.
    public func hold() async throws(CallError) { try await controller.hold(self) }

    /// Takes a held call off hold: the session is activated again, capture and playout restart,
    /// and the peer gets a re-INVITE offering `a=sendrecv`.
    ///
    /// - Throws: ``CallError/invalidState(_:)`` when the call is not held,
    ///   ``CallError/audioSession(_:)`` when the audio cannot be had (a phone call holds it).
    public func resume() async throws(CallError) { try await controller.resumeHeld(self) }

    /// Transfers the call to `target` (`sip:user@host`) without consulting it (blind transfer):
    /// the peer gets a REFER (RFC 3515) and calls the target; once it reports that call
    /// answered, this call is hung up and ends as ``CallEndReason/transferred``. Waits for that
    /// outcome.
    ///
    /// - Throws: ``CallError/transferFailed(status:reason:)`` when the peer refuses the REFER or
    ///   its call to the target fails (this call goes on, as it was);
    ///   ``CallError/invalidTarget(_:)``; ``CallError/invalidState(_:)`` unless the call is
    ///   active or held, or when another transfer of it is in progress.
    public func transfer(to target: String) async throws(CallError) { try await controller.transfer(self, to: target) }

    /// Transfers the call to the peer of `other` (attended transfer, after talking to it): the
    /// peer gets a REFER whose target carries `Replaces` for `other`'s dialog (RFC 3891), so
    /// its call takes `other`'s place at the target. On success both calls end: this one as
    /// ``CallEndReason/transferred``, `other` when the target hangs it up.
    ///
    /// - Throws: as ``transfer(to:)-(String)``; ``CallError/invalidState(_:)`` also when `other`
    ///   is this call or not established.
    public func transfer(to other: Call) async throws(CallError) { try await controller.transfer(self, to: other) }

    /// Joins this call and `other` in a local three-way conference: the peers hear us and each
    /// other, and we hear both. The call with the audio hosts it (or this one, taken off hold);
    /// the other is taken off hold at its peer. Holding, transferring or ending either call ends
    /// the conference: the host goes on alone, and a call left without the host is held.
    ///
    /// - Throws: ``CallError/invalidState(_:)`` unless both calls are this controller's,
    ///   different, active or held by us, and in no conference; ``CallError/audioSession(_:)``
    ///   when the audio cannot be had.
    public func conference(with other: Call) async throws(CallError) { try await controller.conference(self, with: other) }

    /// The id of the call this one is in a conference with, if any.
    public var conferencePartnerID: String? { get async { await controller.conferencePartner(of: self) } }

    /// Records the call's two directions to a stereo 16-bit WAV file at `path`, at the device's
    /// rate: left what we send (the processed microphone, silence while muted), right what we
    /// play. From now until ``stopRecording()`` or the call's end; while the call is held its
    /// audio stops, and so does the file (it has no gap for the hold). The I/O thread copies
    /// each period into a ring made with the call; a task writes it out every 100 ms.
    ///
    /// - Throws: ``CallError/invalidState(_:)`` when the call has no media or is being recorded;
    ///   ``CallError/media(_:)`` when the file cannot be created.
    public func startRecording(to path: String) async throws(CallError) { try await controller.startRecording(self, to: path) }

    /// Stops the recording and waits until its file is complete.
    ///
    /// - Returns: the seconds the file holds.
    /// - Throws: ``CallError/invalidState(_:)`` when no recording runs; ``CallError/media(_:)``
    ///   when the file could not be written.
    @discardableResult
    public func stopRecording() async throws(CallError) -> Double { try await controller.stopRecording(self) }

    /// Mutes or unmutes the microphone: while muted the peer gets silence, and the voice
    /// processing keeps running on the real microphone, so the echo canceller stays converged
    /// and unmuting is clean at once.
    public func setMuted(_ muted: Bool) async { await controller.setMuted(muted, on: self) }

    /// Whether the microphone is muted (``setMuted(_:)``).
    public var isMuted: Bool { muted.load(ordering: .relaxed) }

    /// Plays `source` to the peer: an announcement, hold music, a tone. It replaces a playback
    /// in progress, goes into the uplink after the voice processing (the echo canceller never
    /// sees it), plays while the microphone is muted, and stops at the call's end.
    ///
    /// - Parameters:
    ///   - source: a WAV file (read and resampled to the call's rate first) or a tone.
    ///   - mix: whether the peer hears it alone or over our voice.
    ///   - loops: play it again and again until ``CallPlayback/stop()``.
    /// - Returns: the playback, to stop it or wait for its end.
    /// - Throws: ``CallError/media(_:)`` for a file that cannot be read (or is longer than
    ///   ``CallAudioSource/maximumSeconds``), ``CallError/invalidState(_:)`` for a tone out of
    ///   range or a call without media (not connected yet, or ended).
    public func play(_ source: CallAudioSource, mix: CallAudioMix = .replacesMicrophone,
                     loops: Bool = false) async throws(CallError) -> CallPlayback {
        try await controller.play(source, mix: mix, loops: loops, on: self)
    }

    /// Waits until the call has ended and returns why (any number of waiters, independent of ``states``).
    public func ended() async -> CallEndReason {
        guard case let .ended(reason) = await firstState(where: \.isEnded) else { preconditionFailure("not an end") }
        return reason
    }

    /// Waits until the call stops ringing and returns the state it reached: ``CallState/active``
    /// when answered, ``CallState/ended(_:)`` when not (any number of waiters, independent of ``states``).
    public func connected() async -> CallState {
        await firstState { $0 != .idle && $0 != .outgoingRinging && $0 != .incomingRinging }
    }

    private func firstState(where isReached: @escaping @Sendable (CallState) -> Bool) async -> CallState {
        await withCheckedContinuation { continuation in
            let now = machine.withLock { m -> CallState? in
                if isReached(m.state) { return m.state }
                waiters.withLock { $0.append(Waiter(isReached: isReached, continuation: continuation)) }
                return nil
            }
            if let now { continuation.resume(returning: now) }
        }
    }

    public var description: String { "\(direction) call \(id) with \(remoteURI): \(state)" }

    // MARK: Controller side

    /// Applies an event; returns whether it applied.
    @discardableResult
    func apply(_ event: CallEvent) -> Bool {
        let next = machine.withLock { m -> CallState? in
            do { try m.apply(event) } catch { return nil }
            return m.state
        }
        guard let next else { return false }
        continuation.yield(next)
        if next.isEnded {
            continuation.finish()
            dtmfContinuation.finish()
        }
        let reached = waiters.withLock { w in
            defer { w.removeAll { $0.isReached(next) } }
            return w.filter { $0.isReached(next) }
        }
        for waiter in reached { waiter.continuation.resume(returning: next) }
        return true
    }

    func keep(_ statistics: CallStatistics) { lastStatistics.withLock { $0 = statistics } }

    /// A key the peer pressed.
    func received(_ key: Character) { dtmfContinuation.yield(key) }
}
