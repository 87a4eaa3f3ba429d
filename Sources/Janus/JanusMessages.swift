/// The parts of Janus's JSON API the AudioBridge client reads. Unknown fields are ignored;
/// a field of the wrong type makes the whole message malformed.

/// One message from Janus: a reply to a request, or an event from the long poll.
struct JanusMessage: Decodable, Sendable {
    /// `success`, `ack`, `error`, `event`, `keepalive`, `timeout`, `detached`, `hangup`, ...
    let janus: String
    let transaction: String?
    let sender: UInt64?
    /// `{"id": N}` of a `create` (the session) or an `attach` (the handle).
    let data: Identifier?
    let error: APIError?
    let plugindata: PluginData?

    struct Identifier: Decodable, Sendable { let id: UInt64 }
    struct APIError: Decodable, Sendable { let code: Int; let reason: String }
    struct PluginData: Decodable, Sendable {
        let plugin: String
        let data: AudioBridgeData
    }
}

/// What the AudioBridge plugin puts in `plugindata.data`.
struct AudioBridgeData: Decodable, Sendable {
    /// `success`, `joined`, `event`, `participants`, `created`, `left`, `destroyed`,
    /// `talking`, `stopped-talking`, ...
    let audiobridge: String
    let room: UInt64?
    let id: UInt64?
    let exists: Bool?
    let participants: [AudioBridgeParticipant]?
    let rtp: RTPEndpoint?
    let leaving: UInt64?
    let kicked: UInt64?
    let result: String?
    let errorCode: Int?
    let error: String?

    /// Where Janus receives a plain-RTP participant's packets (the `joined` event's `rtp`).
    struct RTPEndpoint: Decodable, Sendable {
        let ip: String
        let port: Int
        let payloadType: Int?

        enum CodingKeys: String, CodingKey { case ip, port, payloadType = "payload_type" }
    }

    enum CodingKeys: String, CodingKey {
        case audiobridge, room, id, exists, participants, rtp, leaving, kicked, result, error
        case errorCode = "error_code"
    }

    /// The plugin's error, if this is one.
    var failure: JanusError? {
        errorCode.map { .audioBridge(code: $0, reason: error ?? "no reason given") }
    }
}

/// A participant of an AudioBridge room, as Janus lists it.
///
/// Thread safety: a value; safe from any thread.
public struct AudioBridgeParticipant: Decodable, Sendable, Equatable, Identifiable {
    /// Janus's id of the participant in the room.
    public let id: UInt64
    /// The name it joined with, if any.
    public let display: String?
    /// Whether its media is set up (a plain-RTP participant: once Janus has its first packet).
    public let setup: Bool?
    /// Whether it is muted in the room.
    public let muted: Bool?
    /// Whether it talks now (rooms with talk events only).
    public let talking: Bool?

    public init(id: UInt64, display: String? = nil, setup: Bool? = nil, muted: Bool? = nil, talking: Bool? = nil) {
        self.id = id
        self.display = display
        self.setup = setup
        self.muted = muted
        self.talking = talking
    }
}

/// Something that happened in the room, from Janus's events.
///
/// Thread safety: a value; safe from any thread.
public enum AudioBridgeEvent: Sendable, Equatable {
    /// Participants that joined, or whose state changed (muted, set up).
    case participants([AudioBridgeParticipant])
    /// A participant left the room (or was kicked out of it).
    case left(UInt64)
    /// A participant started or stopped talking (rooms with `audiolevel_event`).
    case talking(UInt64, Bool)
    /// The room was destroyed: the leg is over.
    case roomDestroyed
    /// Janus ended our session or handle (a timeout, a restart), or stopped answering.
    case serverGone(String)
}
