import Opus
public import SDP
public import RTP

/// The Opus `a=fmtp` parameters of RFC 7587 section 6.1. Each describes what the
/// author of the description wants to *receive* (except `sprop-*`, which describe
/// what it sends). `nil` means absent (the default applies).
///
/// Thread safety: a value type; safe to use from any thread.
public struct OpusFormatParameters: Sendable, Equatable {
    /// `useinbandfec`: the receiver can use in-band FEC: please send it.
    public var useInbandFEC: Bool?
    /// `usedtx`: the receiver prefers DTX.
    public var useDTX: Bool?
    /// `maxaveragebitrate`: the most the receiver wants, in bits per second (6000 ... 510000).
    public var maxAverageBitrate: Int?
    /// `stereo`: the receiver prefers stereo.
    public var stereo: Bool?
    /// `sprop-stereo`: the sender is likely to send stereo.
    public var spropStereo: Bool?
    /// `maxplaybackrate`: the receiver's highest useful rate in Hz.
    public var maxPlaybackRate: Int?
    /// `cbr`: the receiver prefers constant bitrate.
    public var cbr: Bool?
    /// Parameters not listed above, kept in order.
    public var other: [String]

    public init(useInbandFEC: Bool? = nil, useDTX: Bool? = nil, maxAverageBitrate: Int? = nil, stereo: Bool? = nil,
                spropStereo: Bool? = nil, maxPlaybackRate: Int? = nil, cbr: Bool? = nil, other: [String] = []) {
        self.useInbandFEC = useInbandFEC
        self.useDTX = useDTX
        self.maxAverageBitrate = maxAverageBitrate
        self.stereo = stereo
        self.spropStereo = spropStereo
        self.maxPlaybackRate = maxPlaybackRate
        self.cbr = cbr
        self.other = other
    }

    /// Parses `key=value; key=value` (values that do not parse are ignored, as RFC 7587 asks).
    public init(parsing text: String) {
        self.init()
        for item in text.split(separator: ";") {
            let pair = item.split(separator: "=", maxSplits: 1).map { $0.trimmingSpaces }
            guard pair.count == 2 else {
                if !item.trimmingSpaces.isEmpty { other.append(String(item.trimmingSpaces)) }
                continue
            }
            let key = pair[0].lowercased(), value = String(pair[1])
            let flag: Bool? = value == "1" ? true : value == "0" ? false : nil
            switch key {
            case "useinbandfec": useInbandFEC = flag
            case "usedtx": useDTX = flag
            case "stereo": stereo = flag
            case "sprop-stereo": spropStereo = flag
            case "cbr": cbr = flag
            case "maxaveragebitrate": maxAverageBitrate = Int(value).flatMap { (6000...510_000).contains($0) ? $0 : nil }
            case "maxplaybackrate": maxPlaybackRate = Int(value).flatMap { (8000...48000).contains($0) ? $0 : nil }
            default: other.append("\(pair[0])=\(value)")
            }
        }
    }

    /// The parameters as an fmtp value (`useinbandfec=1; ...`), or nil if none.
    public var text: String? {
        var items: [String] = []
        func flag(_ name: String, _ value: Bool?) { if let value { items.append("\(name)=\(value ? 1 : 0)") } }
        if let maxPlaybackRate { items.append("maxplaybackrate=\(maxPlaybackRate)") }
        flag("stereo", stereo)
        flag("sprop-stereo", spropStereo)
        if let maxAverageBitrate { items.append("maxaveragebitrate=\(maxAverageBitrate)") }
        flag("cbr", cbr)
        flag("useinbandfec", useInbandFEC)
        flag("usedtx", useDTX)
        items += other
        return items.isEmpty ? nil : items.joined(separator: "; ")
    }
}

/// An audio stream as one side describes it: where to send, the codec, and what it asked for.
///
/// Thread safety: a value type; safe to use from any thread.
public struct AudioStreamDescription: Sendable, Equatable {
    /// Where that side receives RTP.
    public var address: String
    public var port: Int
    /// Where it receives RTCP (`a=rtcp`, RFC 3605), if given.
    public var rtcpPort: Int?
    public var rtcpMux: Bool
    public var payloadType: UInt8
    public var direction: MediaDirection
    public var parameters: OpusFormatParameters
    /// `a=ptime` and `a=maxptime`, in milliseconds.
    public var ptime: Int?
    public var maxptime: Int?
    /// Telephone events (RFC 4733 DTMF) in the stream, if described: `telephone-event/48000`, or
    /// `telephone-event/8000` when that is all there is.
    public var telephoneEvents: TelephoneEventFormat? = nil
    /// The codec chosen from the stream.
    public var codec: AudioCodec = .opus
    /// Comfort noise's payload type (`CN/8000`, RFC 3389), with an 8 kHz codec; nil: none.
    public var comfortNoise: UInt8? = nil

    /// A stream described without SDP (a conference server's plain-RTP address, say).
    public init(address: String, port: Int, payloadType: UInt8, codec: AudioCodec = .opus,
                parameters: OpusFormatParameters = OpusFormatParameters(), direction: MediaDirection = .sendrecv,
                rtcpMux: Bool = true, rtcpPort: Int? = nil, ptime: Int? = nil) {
        self.address = address
        self.port = port
        self.payloadType = payloadType
        self.codec = codec
        self.parameters = parameters
        self.direction = direction
        self.rtcpMux = rtcpMux
        self.rtcpPort = rtcpPort
        self.ptime = ptime
    }
}
