/// AudioBridge's room requests.
extension AudioBridgeClient {
    /// Where Janus takes a plain-RTP participant's packets, and what it sends.
    ///
    /// Thread safety: a value; safe from any thread.
    public struct Joined: Sendable, Equatable {
        /// Our id in the room.
        public let participantID: UInt64
        /// The others in the room when we joined.
        public let participants: [AudioBridgeParticipant]
        /// Janus's RTP address for us: its socket is connected to the address we gave, so our
        /// RTP must leave from exactly that address (symmetric RTP).
        public let rtpHost: String
        public let rtpPort: UInt16
        /// The payload type Janus sends Opus with.
        public let payloadType: UInt8
    }

    /// AudioBridge's error code for a room that exists already.
    public static let roomExists = 486

    /// Whether room `room` exists.
    public func exists(room: UInt64) async throws(JanusError) -> Bool {
        let data = try await request(["request": .string("exists"), "room": .identifier(room)])
        guard let exists = data.exists else { throw .malformed("an exists reply without 'exists'") }
        return exists
    }

    /// Creates room `room` for plain-RTP participants, mixing at `samplingRate`, with talk events.
    ///
    /// - Throws: ``JanusError/audioBridge(code:reason:)`` when it exists (486) or Janus refuses.
    public func create(room: UInt64, description: String, samplingRate: Int = 16000) async throws(JanusError) {
        _ = try await request([
            "request": .string("create"), "room": .identifier(room), "description": .string(description),
            "sampling_rate": .integer(samplingRate), "allow_rtp_participants": .bool(true),
            "audiolevel_event": .bool(true), "permanent": .bool(false),
        ])
    }

    /// Joins `room` as a plain-RTP participant whose RTP comes from, and goes to, `host`:`port`.
    ///
    /// - Parameters:
    ///   - room: the room's number.
    ///   - display: the name the others see.
    ///   - host: our RTP address, as Janus reaches it.
    ///   - port: our RTP port: the one our packets leave from.
    ///   - payloadType: the payload type of the Opus we send.
    ///   - fec: whether we send Opus in-band FEC (Janus decodes it on loss).
    ///   - pin: the room's PIN, if it has one.
    ///   - bitrate: the bitrate of the Opus Janus sends us, bit/s (nil: libopus chooses).
    /// - Throws: ``JanusError/audioBridge(code:reason:)`` for a room that does not exist (485)
    ///   or does not allow plain-RTP participants; ``JanusError/malformed(_:)`` when the reply
    ///   has no RTP address.
    public func join(room: UInt64, display: String?, host: String, port: UInt16, payloadType: UInt8 = 111,
                     fec: Bool = true, pin: String? = nil, bitrate: Int? = nil) async throws(JanusError) -> Joined {
        var body: [String: JSONValue] = [
            "request": .string("join"), "room": .identifier(room),
            "rtp": .object(["ip": .string(host), "port": .integer(Int(port)), "payload_type": .integer(Int(payloadType)),
                            "fec": .bool(fec)]),
        ]
        if let display { body["display"] = .string(display) }
        if let pin { body["pin"] = .string(pin) }
        if let bitrate { body["bitrate"] = .integer(bitrate) }
        let data = try await request(body)
        guard data.audiobridge == "joined", let id = data.id else { throw .malformed("a join answered '\(data.audiobridge)'") }
        guard let rtp = data.rtp, let rtpPort = UInt16(exactly: rtp.port), rtpPort != 0 else {
            throw .audioBridge(code: 0, reason: "the room gave no RTP address (does it allow plain-RTP participants?)")
        }
        let payloadType = rtp.payloadType.flatMap { UInt8(exactly: $0) } ?? payloadType
        return Joined(participantID: id, participants: data.participants ?? [], rtpHost: rtp.ip, rtpPort: rtpPort,
                      payloadType: payloadType)
    }

    /// Mutes or unmutes us in the room (the others see it), and tells Janus the loss to expect,
    /// so the Opus it sends us carries FEC (0 to 20 %).
    public func configure(muted: Bool? = nil, expectedLoss: Int? = nil) async throws(JanusError) {
        var body: [String: JSONValue] = ["request": .string("configure")]
        if let muted { body["muted"] = .bool(muted) }
        if let expectedLoss { body["expected_loss"] = .integer(min(max(expectedLoss, 0), 20)) }
        _ = try await request(body)
    }

    /// The participants of `room` now (ourselves included once joined).
    public func participants(room: UInt64) async throws(JanusError) -> [AudioBridgeParticipant] {
        let data = try await request(["request": .string("listparticipants"), "room": .identifier(room)])
        guard let participants = data.participants else { throw .malformed("a participant list without 'participants'") }
        return participants
    }

    /// Leaves the room (the session stays, to join another or ``close()``).
    public func leave() async throws(JanusError) {
        _ = try await request(["request": .string("leave")])
    }
}
