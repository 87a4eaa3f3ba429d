import Synchronization

/// One named telephone event in an RTP payload (RFC 4733 section 2.3): DTMF keys travel as
/// events 0 to 15 instead of tones in the audio, so a codec cannot distort them.
///
/// ```
///  0                   1                   2                   3
///  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
/// |     event     |E|R| volume    |          duration             |
/// ```
///
/// Thread safety: a value type; nothing here allocates (real-time safe).
public struct TelephoneEvent: Sendable, Equatable {
    /// The event code (0 to 15 for the keys 0-9, *, #, A-D; RFC 4733 section 3.2).
    public var event: UInt8
    /// The event has ended (the last packets of an event carry it, three times).
    public var end: Bool
    /// The tone's power, in -dBm0 (0 to 63).
    public var volume: UInt8
    /// How long the event has lasted so far, in RTP units of the audio's clock.
    public var duration: UInt16

    /// Bytes of one event.
    public static let size = 4
    /// The keys of events 0 to 15.
    public static let keys: [Character] = Array("0123456789*#ABCD")

    public init(event: UInt8, end: Bool = false, volume: UInt8 = 10, duration: UInt16) {
        self.event = event
        self.end = end
        self.volume = volume & 0x3F
        self.duration = duration
    }

    /// Reads a payload of one event; nil unless it is exactly ``size`` bytes.
    public static func parse(_ payload: UnsafeRawBufferPointer) -> TelephoneEvent? {
        guard payload.count == size else { return nil }
        return TelephoneEvent(event: payload[0], end: payload[1] & 0x80 != 0, volume: payload[1] & 0x3F,
                              duration: UInt16(payload[2]) << 8 | UInt16(payload[3]))
    }

    /// Writes the event into the first ``size`` bytes of `buffer`.
    ///
    /// - Precondition: `buffer.count >= size`.
    public func write(into buffer: UnsafeMutableRawBufferPointer) {
        precondition(buffer.count >= Self.size, "a telephone event needs 4 bytes")
        buffer[0] = event
        buffer[1] = (end ? 0x80 : 0) | (volume & 0x3F)
        buffer[2] = UInt8(duration >> 8)
        buffer[3] = UInt8(truncatingIfNeeded: duration)
    }

    /// The DTMF key of this event; nil for events beyond the keypad (flash, tones of other signals).
    public var key: Character? { event < 16 ? Self.keys[Int(event)] : nil }

    /// The event code of a DTMF key (`0`-`9`, `*`, `#`, `A`-`D`, case-insensitive), or nil.
    public static func event(forKey key: Character) -> UInt8? {
        keys.firstIndex(of: Character(key.uppercased())).map { UInt8($0) }
    }
}

/// How a stream carries telephone events: their payload type and the clock their durations
/// count in. RFC 4733 section 7.1.1 puts events on the audio's clock (48 kHz for Opus), but
/// many endpoints (baresip, older PBXes) know only `telephone-event/8000`.
///
/// Thread safety: a value type.
public struct TelephoneEventFormat: Sendable, Equatable {
    public var payloadType: UInt8
    /// 48000 or 8000.
    public var clockRate: Int

    public init(payloadType: UInt8, clockRate: Int) {
        self.payloadType = payloadType
        self.clockRate = clockRate
    }
}

/// Why DTMF keys could not be queued (nothing was).
///
/// Thread safety: a value type.
public enum DTMFError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The peer did not accept telephone events (`telephone-event/48000`) in the SDP.
    case notNegotiated
    /// Not one of `0`-`9`, `*`, `#`, `A`-`D`.
    case invalidKey(Character)
    /// More keys than the queue holds are waiting.
    case queueFull

    public var description: String {
        switch self {
        case .notNegotiated: "the peer did not accept telephone events (DTMF)"
        case .invalidKey(let key): "'\(key)' is not a DTMF key (0-9, *, #, A-D)"
        case .queueFull: "too many DTMF keys waiting"
        }
    }
}

/// Keys to send, from the control thread to the I/O thread: a lock-free single-producer
/// single-consumer ring of event codes.
///
/// Thread safety: ``push(_:)`` from one thread at a time (the control side), ``pop()`` from
/// the I/O thread only; neither side allocates, locks or blocks.
public final class TelephoneEventQueue: @unchecked Sendable {
    // @unchecked: `slots` is plain memory shared by the two sides; the release store of
    // `tail` publishes a slot, the release store of `head` frees it.
    public let capacity = 64
    private let slots: UnsafeMutablePointer<UInt8>
    private let head = Atomic<Int>(0)
    private let tail = Atomic<Int>(0)

    public init() {
        slots = .allocate(capacity: capacity)
        slots.initialize(repeating: 0, count: capacity)
    }

    deinit { slots.deallocate() }

    /// Queues an event code; false when the queue is full.
    public func push(_ event: UInt8) -> Bool {
        let t = tail.load(ordering: .relaxed)
        guard t - head.load(ordering: .acquiring) < capacity else { return false }
        slots[t % capacity] = event
        tail.store(t + 1, ordering: .releasing)
        return true
    }

    /// The oldest queued event code, or nil.
    public func pop() -> UInt8? {
        let h = head.load(ordering: .relaxed)
        guard tail.load(ordering: .acquiring) != h else { return nil }
        let event = slots[h % capacity]
        head.store(h + 1, ordering: .releasing)
        return event
    }

    /// Codes waiting (a snapshot).
    public var count: Int { tail.load(ordering: .acquiring) - head.load(ordering: .acquiring) }
}

/// Turns queued keys into the telephone-event packets of one RTP stream, frame by frame, on
/// the I/O thread (RFC 4733 section 2.5.1): each key replaces the audio of ``toneFrames``
/// frames with updates of one event (the first with the marker, all with the event's start
/// timestamp and the duration so far), then its final packet three times; then at least
/// ``gapFrames`` frames of audio before the next key.
///
/// Thread safety: a value type owned by the I/O thread; nothing here allocates.
public struct TelephoneEventSender: Sendable {
    /// What to send in place of a frame's audio.
    public struct Packet: Sendable, Equatable {
        public var event: TelephoneEvent
        /// The event's first packet (the RTP marker bit).
        public var marker: Bool
        /// The RTP timestamp of the event's start.
        public var timestamp: UInt32
    }

    /// Frames of tone per key (100 ms at 20 ms frames: twice the 40 ms ITU-T Q.24 minimum).
    public let toneFrames: Int
    /// Frames of audio between keys (60 ms at 20 ms frames: over the 40 ms minimum pause).
    public let gapFrames: Int
    /// RTP units per frame (of the audio's 48 kHz clock).
    public let frameDuration: Int
    /// The clock the events' durations count in (48000, or 8000 for `telephone-event/8000`).
    public let clockRate: Int

    private var current: UInt8?
    private var start: UInt32 = 0
    private var framesSent = 0
    private var gapLeft = 0

    /// - Parameters:
    ///   - frameDuration: one frame in RTP units of the 48 kHz clock (960 for 20 ms).
    ///   - clockRate: the events' clock; their start timestamps stay on the audio's clock (the
    ///     stream's), their durations count in this one.
    ///   - toneMs: how long each key sounds.
    ///   - gapMs: the pause between keys.
    public init(frameDuration: Int, clockRate: Int = 48000, toneMs: Int = 100, gapMs: Int = 60) {
        precondition(frameDuration > 0 && clockRate > 0)
        self.frameDuration = frameDuration
        self.clockRate = clockRate
        let frameMs = max(1, frameDuration / 48)
        toneFrames = max(1, (toneMs + frameMs - 1) / frameMs)
        gapFrames = max(1, (gapMs + frameMs - 1) / frameMs)
    }

    /// Whether an event is being sent.
    public var isSending: Bool { current != nil }

    /// The packet to send instead of the frame whose timestamp is `timestamp`, or nil to send
    /// the audio: takes the next key from `queue` when no event is under way.
    public mutating func nextFrame(timestamp: UInt32, queue: TelephoneEventQueue) -> Packet? {
        if current == nil {
            guard gapLeft == 0 else {
                gapLeft -= 1
                return nil
            }
            guard let event = queue.pop() else { return nil }
            current = event
            start = timestamp
            framesSent = 0
        }
        framesSent += 1
        // Updates until the tone's length, then the final packet three times (section 2.5.1.4).
        let elapsed = min(framesSent, toneFrames) * frameDuration * clockRate / 48000
        let duration = UInt16(min(elapsed, Int(UInt16.max)))
        let end = framesSent >= toneFrames
        let packet = Packet(event: TelephoneEvent(event: current!, end: end, duration: duration),
                            marker: framesSent == 1, timestamp: start)
        if framesSent >= toneFrames + 2 {
            current = nil
            gapLeft = gapFrames
        }
        return packet
    }
}

/// Reports each telephone event once, from the packets of one source (the network thread):
/// an event is new when its start timestamp is; updates and the retransmitted final packets
/// of an event already reported are not reported again.
///
/// Thread safety: a value type owned by the network thread.
public struct TelephoneEventReceiver: Sendable {
    private var lastTimestamp: UInt32?
    private var lastGeneration: UInt32 = 0

    public init() {}

    /// The event to report for this packet, or nil when it was reported already.
    public mutating func receive(_ event: TelephoneEvent, timestamp: UInt32, sourceGeneration: UInt32) -> TelephoneEvent? {
        if sourceGeneration != lastGeneration {
            lastGeneration = sourceGeneration
            lastTimestamp = nil
        }
        // Newer than the last event (wrap-around safe): a late update of an older one is not new.
        if let lastTimestamp, Int32(bitPattern: timestamp &- lastTimestamp) <= 0 { return nil }
        lastTimestamp = timestamp
        return event
    }
}
