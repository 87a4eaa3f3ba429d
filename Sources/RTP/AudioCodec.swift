import Opus

/// The audio codecs a call can use, as RTP payload formats.
///
/// | codec | SDP `rtpmap` | payload type | audio | RTP clock |
/// |---|---|---|---|---|
/// | ``opus`` | `opus/48000/2` | dynamic (96) | 8 to 48 kHz, the call's rate | 48 kHz (RFC 7587) |
/// | ``g722`` | `G722/8000` | 9 | 16 kHz | 8 kHz (RFC 3551 section 4.5.2) |
/// | ``pcmu`` | `PCMU/8000` | 0 | 8 kHz | 8 kHz |
/// | ``pcma`` | `PCMA/8000` | 8 | 8 kHz | 8 kHz |
///
/// G.722's clock runs at half its sampling rate, an error RFC 1890 made and RFC 3551 keeps
/// for compatibility: a 20 ms packet advances the timestamp by 160, not 320.
///
/// Thread safety: a value type; safe from any thread.
public enum AudioCodec: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    case opus
    case g722
    case pcmu
    case pcma

    /// What calls offer by default, best first: Opus, then G.722 for wideband telephony, then
    /// G.711 in both laws for the PSTN.
    public static let preference: [AudioCodec] = [.opus, .g722, .pcmu, .pcma]

    /// The codec named `name` (`opus`, `g722`, `pcmu`, `pcma`, or an SDP encoding name such as
    /// `PCMU`, any case); nil for any other.
    public init?(name: String) {
        self.init(rawValue: name.lowercased())
    }

    /// The encoding name in SDP (`a=rtpmap`).
    public var encodingName: String {
        switch self {
        case .opus: "opus"
        case .g722: "G722"
        case .pcmu: "PCMU"
        case .pcma: "PCMA"
        }
    }

    /// The `a=rtpmap` encoding: name, clock rate and, for Opus, channels.
    public var rtpmap: String {
        self == .opus ? "opus/48000/2" : "\(encodingName)/\(rtpClockRate)"
    }

    /// The payload type RFC 3551 assigns; nil for Opus, whose type is dynamic.
    public var staticPayloadType: UInt8? {
        switch self {
        case .opus: nil
        case .g722: 9
        case .pcmu: 0
        case .pcma: 8
        }
    }

    /// The RTP clock rate in Hz.
    public var rtpClockRate: Int { self == .opus ? OpusCallConfiguration.rtpClockRate : 8000 }

    /// The rate the codec codes audio at, in Hz; nil for Opus, which codes at the call's rate.
    public var codedSampleRate: Int? {
        switch self {
        case .opus: nil
        case .g722: 16000
        case .pcmu, .pcma: 8000
        }
    }

    /// Units of the jitter buffer's 48 kHz timeline per unit of this codec's RTP clock.
    var timelineUnitsPerTimestamp: Int { OpusCallConfiguration.rtpClockRate / rtpClockRate }

    public var description: String { encodingName }

    /// Whether `payload` can be a packet of this codec: a valid Opus packet (RFC 6716 section
    /// 3), or 1 to 960 bytes of G.711 or G.722 (120 ms, the longest packet a call takes).
    func isWellFormed(_ payload: UnsafeRawBufferPointer) -> Bool {
        self == .opus ? OpusPayload.parse(payload) != nil : (1...960).contains(payload.count)
    }
}
