/// A Janus AudioBridge room to join as a conference leg (``CallController/join(_:)``).
///
/// Thread safety: a value; safe from any thread.
public struct ConferenceRoom: Sendable, Equatable {
    /// Janus's HTTP API, `http://host:8088/janus`.
    public var server: String
    /// The room's number.
    public var room: UInt64
    /// Create the room (mixing at 16 kHz, plain-RTP participants allowed, talk events) when it
    /// does not exist.
    public var createsRoom: Bool
    /// The name the others see.
    public var display: String?
    /// The room's PIN, if it has one.
    public var pin: String?
    /// The loss Janus should expect on its way to us, 0 to 20 %: above 0 the Opus it sends us
    /// carries FEC.
    public var expectedLoss: Int

    public init(server: String, room: UInt64, createsRoom: Bool = false, display: String? = nil, pin: String? = nil,
                expectedLoss: Int = 0) {
        self.server = server
        self.room = room
        self.createsRoom = createsRoom
        self.display = display
        self.pin = pin
        self.expectedLoss = expectedLoss
    }
}
