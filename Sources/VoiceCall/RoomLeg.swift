import Janus
import Synchronization

/// A call's place in a conference room: the AudioBridge client that joined it, and what the
/// room is told of our microphone (muted while the app mutes the call or holds it).
///
/// Thread safety: safe from any thread; the room is told of changes in order.
final class RoomLeg: Sendable {
    let client: AudioBridgeClient
    let room: UInt64
    let joined: AudioBridgeClient.Joined
    private let flags = Mutex<(muted: Bool, held: Bool, told: Bool?)>((false, false, nil))
    /// Changes to what the room is told, sent one at a time.
    private let updates: AsyncStream<Void>.Continuation
    private let closed = Atomic<Bool>(false)

    init(client: AudioBridgeClient, room: UInt64, joined: AudioBridgeClient.Joined) {
        self.client = client
        self.room = room
        self.joined = joined
        let (stream, continuation) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        updates = continuation
        Task { [weak self] in
            for await _ in stream { await self?.tell() }
        }
    }

    /// Tells the room whether we are muted, if that changed since it was last told.
    private func tell() async {
        let (muted, told) = flags.withLock { ($0.muted || $0.held, $0.told) }
        guard muted != told else { return }
        if (try? await client.configure(muted: muted)) != nil { flags.withLock { $0.told = muted } }
    }

    func setMuted(_ muted: Bool) { update { $0.muted = muted } }

    func setHeld(_ held: Bool) { update { $0.held = held } }

    private func update(_ change: (inout (muted: Bool, held: Bool, told: Bool?)) -> Void) {
        flags.withLock { change(&$0) }
        updates.yield()
    }

    /// Leaves the room and closes the Janus session, once.
    func close() async {
        guard !closed.exchange(true, ordering: .acquiringAndReleasing) else { return }
        updates.finish()
        try? await client.leave()
        await client.close()
    }
}
