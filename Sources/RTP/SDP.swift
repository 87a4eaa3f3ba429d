public import Opus

/// Why a session description was rejected.
///
/// Thread safety: a value type; safe to use from any thread.
public enum SDPError: Error, Sendable, Equatable {
    /// A line is not `<letter>=<value>`, or its type letter is unknown (RFC 4566 section 5).
    case badLine(Int)
    /// `v=0` is not the first line.
    case missingVersion
    /// No valid `o=` line, or no `s=` line.
    case missingOrigin
    case missingSessionName
    /// An `m=` or `c=` line does not parse.
    case badMedia(Int)
    case badConnection(Int)
    /// No audio stream offers `opus/48000/2`.
    case noOpus
    /// A new offer in an established session changes something this endpoint cannot change
    /// mid-call (the codec, the peer's address, the streams); the detail says what.
    case unsupportedChange(String)
}

/// A session description (RFC 4566): the subset a VoIP endpoint needs, kept
/// faithfully enough to answer it (RFC 3264).
///
/// Thread safety: a value type; safe to use from any thread. Parsing and writing
/// allocate: control thread only.
public struct SessionDescription: Sendable, Equatable {
    /// `o=`: the originator and session identifier.
    public struct Origin: Sendable, Equatable {
        public var username: String
        public var sessionID: String
        public var sessionVersion: String
        public var networkType: String
        public var addressType: String
        public var address: String

        /// Marks a changed description (RFC 3264 section 8): the version plus one, or 1 when it
        /// is not a number.
        public mutating func increaseVersion() {
            sessionVersion = UInt64(sessionVersion).map { "\($0 &+ 1)" } ?? "1"
        }

        public init(username: String = "-", sessionID: String, sessionVersion: String, networkType: String = "IN",
                    addressType: String, address: String) {
            self.username = username
            self.sessionID = sessionID
            self.sessionVersion = sessionVersion
            self.networkType = networkType
            self.addressType = addressType
            self.address = address
        }
    }

    /// `c=`: where media goes.
    public struct Connection: Sendable, Equatable {
        public var networkType: String
        /// `IP4` or `IP6`.
        public var addressType: String
        public var address: String

        public init(networkType: String = "IN", addressType: String, address: String) {
            self.networkType = networkType
            self.addressType = addressType
            self.address = address
        }

        /// A connection line for a socket address.
        public init(_ address: SocketAddress) {
            self.init(addressType: address.family == .ipv6 ? "IP6" : "IP4", address: address.host)
        }
    }

    /// `a=name[:value]`.
    public struct Attribute: Sendable, Equatable {
        public var name: String
        public var value: String?

        public init(_ name: String, _ value: String? = nil) {
            self.name = name
            self.value = value
        }
    }

    /// An `m=` section.
    public struct Media: Sendable, Equatable {
        public var media: String
        public var port: Int
        public var portCount: Int?
        public var proto: String
        public var formats: [String]
        public var connection: Connection?
        /// `b=` lines, as written.
        public var bandwidths: [String]
        public var attributes: [Attribute]

        public init(media: String, port: Int, portCount: Int? = nil, proto: String, formats: [String],
                    connection: Connection? = nil, bandwidths: [String] = [], attributes: [Attribute] = []) {
            self.media = media
            self.port = port
            self.portCount = portCount
            self.proto = proto
            self.formats = formats
            self.connection = connection
            self.bandwidths = bandwidths
            self.attributes = attributes
        }

        /// The value of the first attribute called `name`.
        public func attribute(_ name: String) -> String? { attributes.first { $0.name == name }?.value }

        /// Whether an attribute called `name` is present.
        public func has(_ name: String) -> Bool { attributes.contains { $0.name == name } }

        /// The format (payload type) whose `a=rtpmap` names `encoding` (case-insensitive), e.g. `opus/48000/2`.
        public func payloadType(for encoding: String) -> String? {
            for attribute in attributes where attribute.name == "rtpmap" {
                guard let value = attribute.value, let space = value.firstIndex(of: " ") else { continue }
                let format = String(value[..<space])
                let name = value[value.index(after: space)...].trimmingSpaces
                if name.lowercased() == encoding.lowercased(), formats.contains(format) { return format }
            }
            return nil
        }

        /// The `a=fmtp` parameters of `format`.
        public func formatParameters(for format: String) -> String? {
            for attribute in attributes where attribute.name == "fmtp" {
                guard let value = attribute.value, let space = value.firstIndex(of: " ") else { continue }
                if value[..<space] == format { return String(value[value.index(after: space)...].trimmingSpaces) }
            }
            return nil
        }

        /// The media direction attribute (`sendrecv` when absent; see also
        /// ``SessionDescription/direction(of:)``, which applies a session-level one).
        public var direction: MediaDirection { explicitDirection ?? .sendrecv }

        /// Sets the stream's direction attribute (replacing the one it has, else appended).
        public mutating func setDirection(_ direction: MediaDirection) {
            let attribute = Attribute(direction.rawValue)
            if let at = attributes.firstIndex(where: { MediaDirection(rawValue: $0.name) != nil }) {
                attributes[at] = attribute
            } else {
                attributes.append(attribute)
            }
        }

        /// The media-level direction attribute, if the stream has one.
        public var explicitDirection: MediaDirection? {
            for attribute in attributes { if let d = MediaDirection(rawValue: attribute.name) { return d } }
            return nil
        }
    }

    /// A stream's direction: its own attribute, else the session-level one (RFC 4566 section 6,
    /// as holding clients often write `a=sendonly` once for the session), else `sendrecv`.
    public func direction(of media: Media) -> MediaDirection {
        if let d = media.explicitDirection { return d }
        for attribute in attributes { if let d = MediaDirection(rawValue: attribute.name) { return d } }
        return .sendrecv
    }

    public var origin: Origin
    public var sessionName: String
    public var connection: Connection?
    public var bandwidths: [String]
    /// `t=` (`0 0`: unbounded).
    public var timing: String
    public var attributes: [Attribute]
    public var media: [Media]

    public init(origin: Origin, sessionName: String = "-", connection: Connection? = nil, bandwidths: [String] = [],
                timing: String = "0 0", attributes: [Attribute] = [], media: [Media] = []) {
        self.origin = origin
        self.sessionName = sessionName
        self.connection = connection
        self.bandwidths = bandwidths
        self.timing = timing
        self.attributes = attributes
        self.media = media
    }

    /// The type letters RFC 4566 defines; any other is an error.
    private static let knownTypes: Set<Character> = ["v", "o", "s", "i", "u", "e", "p", "c", "b", "t", "r", "z", "k", "a", "m"]

    /// Parses a description. Lines may end in CRLF or LF; `i=`, `u=`, `e=`, `p=`, `r=`,
    /// `z=` and `k=` are accepted and not kept.
    public static func parse(_ text: String) throws(SDPError) -> SessionDescription {
        var description: SessionDescription?
        var sawVersion = false
        var sessionName: String?
        var lineNumber = 0
        // "\r\n" is one Character in Swift: split on it as well as on a bare LF or CR.
        let lines = text.split(omittingEmptySubsequences: false) { $0 == "\n" || $0 == "\r\n" || $0 == "\r" }
        for line in lines {
            lineNumber += 1
            if line.isEmpty { continue }
            guard line.count >= 2, let type = line.first, knownTypes.contains(type),
                  line[line.index(after: line.startIndex)] == "=" else { throw .badLine(lineNumber) }
            let value = line.dropFirst(2)
            if !sawVersion {
                guard type == "v", value == "0" else { throw .missingVersion }
                sawVersion = true
                continue
            }
            if description == nil {
                guard type == "o" else { throw .missingOrigin }
                let f = value.split(separator: " ", omittingEmptySubsequences: true)
                guard f.count == 6 else { throw .missingOrigin }
                description = SessionDescription(origin: Origin(username: String(f[0]), sessionID: String(f[1]),
                                                                sessionVersion: String(f[2]), networkType: String(f[3]),
                                                                addressType: String(f[4]), address: String(f[5])))
                continue
            }
            switch type {
            case "s":
                sessionName = String(value)
            case "c":
                let f = value.split(separator: " ", omittingEmptySubsequences: true)
                guard f.count == 3 else { throw .badConnection(lineNumber) }
                let connection = Connection(networkType: String(f[0]), addressType: String(f[1]), address: String(f[2]))
                if description!.media.isEmpty {
                    description!.connection = connection
                } else {
                    description!.media[description!.media.count - 1].connection = connection
                }
            case "b":
                if description!.media.isEmpty {
                    description!.bandwidths.append(String(value))
                } else {
                    description!.media[description!.media.count - 1].bandwidths.append(String(value))
                }
            case "t":
                description!.timing = String(value)
            case "a":
                let attribute: Attribute
                if let colon = value.firstIndex(of: ":") {
                    attribute = Attribute(String(value[..<colon]), String(value[value.index(after: colon)...]))
                } else {
                    attribute = Attribute(String(value))
                }
                if description!.media.isEmpty {
                    description!.attributes.append(attribute)
                } else {
                    description!.media[description!.media.count - 1].attributes.append(attribute)
                }
            case "m":
                let f = value.split(separator: " ", omittingEmptySubsequences: true)
                guard f.count >= 4 else { throw .badMedia(lineNumber) }
                let portParts = f[1].split(separator: "/", omittingEmptySubsequences: false)
                guard portParts.count <= 2, let port = Int(portParts[0]), (0...65535).contains(port) else {
                    throw .badMedia(lineNumber)
                }
                var count: Int?
                if portParts.count == 2 {
                    guard let c = Int(portParts[1]), c > 0 else { throw .badMedia(lineNumber) }
                    count = c
                }
                description!.media.append(Media(media: String(f[0]), port: port, portCount: count, proto: String(f[2]),
                                                formats: f[3...].map(String.init)))
            default:
                break  // i, u, e, p, r, z, k: informational
            }
        }
        guard sawVersion else { throw .missingVersion }
        guard var result = description else { throw .missingOrigin }
        guard let sessionName else { throw .missingSessionName }
        result.sessionName = sessionName
        return result
    }

    /// The description as text, lines ending in CRLF.
    public var text: String {
        var lines = ["v=0",
                     "o=\(origin.username) \(origin.sessionID) \(origin.sessionVersion) \(origin.networkType) \(origin.addressType) \(origin.address)",
                     "s=\(sessionName.isEmpty ? "-" : sessionName)"]
        func connectionLine(_ c: Connection) -> String { "c=\(c.networkType) \(c.addressType) \(c.address)" }
        func attributeLine(_ a: Attribute) -> String { a.value.map { "a=\(a.name):\($0)" } ?? "a=\(a.name)" }
        if let connection { lines.append(connectionLine(connection)) }
        lines += bandwidths.map { "b=\($0)" }
        lines.append("t=\(timing)")
        lines += attributes.map(attributeLine)
        for m in media {
            let port = m.portCount.map { "\(m.port)/\($0)" } ?? "\(m.port)"
            lines.append("m=\(m.media) \(port) \(m.proto) \(m.formats.joined(separator: " "))")
            if let c = m.connection { lines.append(connectionLine(c)) }
            lines += m.bandwidths.map { "b=\($0)" }
            lines += m.attributes.map(attributeLine)
        }
        return lines.joined(separator: "\r\n") + "\r\n"
    }
}

/// A media direction attribute (RFC 4566 section 6, RFC 3264 section 6.1).
public enum MediaDirection: String, Sendable, CaseIterable {
    case sendrecv, sendonly, recvonly, inactive

    /// The answer to an offer in this direction from an answerer that wants at most `wanted`
    /// (RFC 3264 section 6.1): it sends only if the offerer receives and it wants to send, and
    /// receives only if the offerer sends and it wants to receive. With `sendrecv` that is the
    /// offer's mirror; a side that holds the call answers `inactive` whatever the offer.
    public func answer(wanting wanted: MediaDirection = .sendrecv) -> MediaDirection {
        MediaDirection(sends: receives && wanted.sends, receives: sends && wanted.receives)
    }

    /// The direction that sends and receives as given.
    public init(sends: Bool, receives: Bool) {
        switch (sends, receives) {
        case (true, true): self = .sendrecv
        case (true, false): self = .sendonly
        case (false, true): self = .recvonly
        case (false, false): self = .inactive
        }
    }

    public var sends: Bool { self == .sendrecv || self == .sendonly }
    public var receives: Bool { self == .sendrecv || self == .recvonly }
}

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

/// An Opus audio stream as one side describes it: where to send, and what it asked for.
///
/// Thread safety: a value type; safe to use from any thread.
public struct OpusStreamDescription: Sendable, Equatable {
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
}

/// Offers and answers for one Opus audio stream (RFC 3264 with RFC 7587).
///
/// Thread safety: stateless; safe from any thread (allocates: control thread).
public enum OpusSDP {
    /// The rtpmap encoding for Opus: always 48 kHz and 2 channels (RFC 7587 section 7).
    public static let encoding = "opus/48000/2"
    /// What calls offer for DTMF: events on Opus's clock (RFC 4733 section 7.1.1), and at
    /// 8 kHz for the many endpoints that know only that (as WebRTC offers both).
    public static let telephoneEventFormats = [TelephoneEventFormat(payloadType: 101, clockRate: 48000),
                                               TelephoneEventFormat(payloadType: 102, clockRate: 8000)]

    /// The media section for an Opus stream received at `address`.
    /// With `telephoneEvents`, the stream also carries DTMF events (the keys 0-15) in those formats.
    public static func media(address: SocketAddress, payloadType: UInt8 = 96, parameters: OpusFormatParameters,
                             ptime: Int? = 20, maxptime: Int? = 120, direction: MediaDirection? = .sendrecv,
                             rtcpMux: Bool = false, rtcpPort: Int? = nil,
                             telephoneEvents: [TelephoneEventFormat] = []) -> SessionDescription.Media {
        var attributes = [SessionDescription.Attribute("rtpmap", "\(payloadType) \(encoding)")]
        if let fmtp = parameters.text { attributes.append(.init("fmtp", "\(payloadType) \(fmtp)")) }
        var formats = ["\(payloadType)"]
        for events in telephoneEvents {
            formats.append("\(events.payloadType)")
            attributes.append(.init("rtpmap", "\(events.payloadType) telephone-event/\(events.clockRate)"))
            attributes.append(.init("fmtp", "\(events.payloadType) 0-15"))
        }
        if let ptime { attributes.append(.init("ptime", "\(ptime)")) }
        if let maxptime { attributes.append(.init("maxptime", "\(maxptime)")) }
        if let rtcpPort { attributes.append(.init("rtcp", "\(rtcpPort)")) }
        if rtcpMux { attributes.append(.init("rtcp-mux")) }
        if let direction { attributes.append(.init(direction.rawValue)) }
        return .init(media: "audio", port: Int(address.port), proto: "RTP/AVP", formats: formats, attributes: attributes)
    }

    /// An offer for one Opus stream received at `address`.
    public static func offer(address: SocketAddress, sessionID: UInt64, payloadType: UInt8 = 96,
                             parameters: OpusFormatParameters = .init(useInbandFEC: true, maxAverageBitrate: 24000,
                                                                      stereo: false, spropStereo: false),
                             ptime: Int = 20, maxptime: Int = 120, direction: MediaDirection = .sendrecv,
                             rtcpMux: Bool = false, telephoneEvents: [TelephoneEventFormat] = []) -> SessionDescription {
        let connection = SessionDescription.Connection(address)
        return SessionDescription(
            origin: .init(sessionID: "\(sessionID)", sessionVersion: "1", addressType: connection.addressType,
                          address: connection.address),
            sessionName: "CallAudio", connection: connection,
            media: [media(address: address, payloadType: payloadType, parameters: parameters, ptime: ptime,
                          maxptime: maxptime, direction: direction, rtcpMux: rtcpMux, telephoneEvents: telephoneEvents)])
    }

    /// The first audio stream offering Opus in `description`, as its author describes it.
    public static func stream(in description: SessionDescription) throws(SDPError) -> OpusStreamDescription {
        for m in description.media where m.media == "audio" && m.port != 0 {
            guard let format = m.payloadType(for: encoding), let payloadType = UInt8(format), payloadType < 128 else {
                continue
            }
            guard let connection = m.connection ?? description.connection else { continue }
            let rtcpPort = m.attribute("rtcp").flatMap { value in Int(value.split(separator: " ").first ?? "") }
            return OpusStreamDescription(
                address: connection.address, port: m.port, rtcpPort: rtcpPort, rtcpMux: m.has("rtcp-mux"),
                payloadType: payloadType, direction: description.direction(of: m),
                parameters: OpusFormatParameters(parsing: m.formatParameters(for: format) ?? ""),
                ptime: m.attribute("ptime").flatMap { Int($0.trimmingSpaces) },
                maxptime: m.attribute("maxptime").flatMap { Int($0.trimmingSpaces) },
                telephoneEvents: [48000, 8000].lazy.compactMap { rate -> TelephoneEventFormat? in
                    guard let events = m.payloadType(for: "telephone-event/\(rate)").flatMap(UInt8.init),
                          events < 128, events != payloadType else { return nil }
                    return TelephoneEventFormat(payloadType: events, clockRate: rate)
                }.first)
        }
        throw .noOpus
    }

    /// Answers `offer` (RFC 3264 section 6): the Opus stream is accepted with the
    /// offerer's payload type and the reverse direction; every other stream is
    /// rejected with port 0. rtcp-mux is kept only if offered and `rtcpMux` allows it;
    /// telephone events (at 48 kHz, else 8 kHz) with the offerer's payload type if offered and
    /// `telephoneEvents`.
    ///
    /// - Returns: the answer, and the offerer's stream (where to send, what it asked for).
    public static func answer(_ offer: SessionDescription, address: SocketAddress, sessionID: UInt64,
                              parameters: OpusFormatParameters, ptime: Int = 20, maxptime: Int = 120,
                              direction: MediaDirection = .sendrecv, rtcpMux: Bool = true,
                              telephoneEvents: Bool = true) throws(SDPError) -> (answer: SessionDescription, remote: OpusStreamDescription) {
        var remote = try stream(in: offer)
        if !telephoneEvents { remote.telephoneEvents = nil }
        let connection = SessionDescription.Connection(address)
        var answer = SessionDescription(
            origin: .init(sessionID: "\(sessionID)", sessionVersion: "1", addressType: connection.addressType,
                          address: connection.address),
            sessionName: "CallAudio", connection: connection)
        var accepted = false
        for m in offer.media {
            if !accepted, m.media == "audio", m.port != 0, let format = m.payloadType(for: encoding),
               UInt8(format) == remote.payloadType {
                accepted = true
                answer.media.append(media(address: address, payloadType: remote.payloadType, parameters: parameters,
                                          ptime: ptime, maxptime: maxptime, direction: remote.direction.answer(wanting: direction),
                                          rtcpMux: rtcpMux && remote.rtcpMux,
                                          telephoneEvents: remote.telephoneEvents.map { [$0] } ?? []))
            } else {
                // Rejected: same media and protocol, port 0 (RFC 3264 section 6).
                answer.media.append(.init(media: m.media, port: 0, proto: m.proto, formats: m.formats))
            }
        }
        return (answer, remote)
    }

    /// Answers a new offer in an established session (a re-INVITE, RFC 3264 section 8): the
    /// peer putting the call on hold (`sendonly` or `inactive`), taking it off hold, moving its
    /// media (a new address or port, as a PBX does when it steps out of the media path), or
    /// refreshing the session. The answer is `ours` (the description this endpoint sent last)
    /// with the direction that answers the new offer within `wanted`, and its version
    /// incremented when that changes it (section 8, "o="); our own address and codec settings stay.
    ///
    /// - Parameters:
    ///   - offer: the peer's new offer.
    ///   - peerPrevious: the peer's last description in this session (its offer or its answer).
    ///   - ours: this endpoint's last description in this session.
    ///   - wanted: the directions this endpoint wants: `sendrecv` (the default) answers the
    ///     offer's mirror; `inactive` keeps a call we hold on hold whatever the peer offers.
    /// - Returns: the answer, and the peer's stream as it now stands (where to send now).
    /// - Throws: ``SDPError/noOpus`` or ``SDPError/unsupportedChange(_:)`` when the offer
    ///   changes the codec's payload type, drops rtcp-mux in use, changes the address family,
    ///   or the number of streams; those would need new sockets or codecs, so the caller declines with 488 and
    ///   the session stays as it was.
    public static func reanswer(_ offer: SessionDescription, peerPrevious: SessionDescription,
                                ours: SessionDescription, wanting wanted: MediaDirection = .sendrecv)
        throws(SDPError) -> (answer: SessionDescription, remote: OpusStreamDescription) {
        let remote = try stream(in: offer)
        let before = try stream(in: peerPrevious)
        guard remote.payloadType == before.payloadType else { throw .unsupportedChange("the Opus payload type") }
        // rtcp-mux is in use only if both sides had it (`ours` may be our offer, which the peer
        // declined). In use, it cannot be dropped (RTCP has no port of its own); otherwise a new
        // offer of it is declined in the answer (RFC 5761 section 5.1.1).
        let ourMedia = ours.media.first { $0.media == "audio" && $0.port != 0 }
        let muxInUse = before.rtcpMux && ourMedia?.has("rtcp-mux") == true
        guard remote.rtcpMux || !muxInUse else { throw .unsupportedChange("rtcp-mux") }
        let ourFamily = ours.media.first { $0.media == "audio" && $0.port != 0 }.flatMap { $0.connection ?? ours.connection }?.addressType
        let theirFamily = offer.media.first { $0.media == "audio" && $0.port != 0 }.flatMap { $0.connection ?? offer.connection }?.addressType
        guard ourFamily == nil || theirFamily?.uppercased() == ourFamily?.uppercased() else {
            throw .unsupportedChange("the address family")
        }
        guard offer.media.count == ours.media.count,
              let index = ours.media.firstIndex(where: { $0.media == "audio" && $0.port != 0 }),
              offer.media[index].payloadType(for: encoding).flatMap(UInt8.init) == remote.payloadType else {
            throw .unsupportedChange("the streams")
        }
        var answer = ours
        var media = answer.media[index]
        media.setDirection(remote.direction.answer(wanting: wanted))
        if !muxInUse { media.attributes.removeAll { $0.name == "rtcp-mux" } }
        answer.media[index] = media
        if answer != ours {
            answer.origin.increaseVersion()
        }
        return (answer, remote)
    }

    /// A new offer from our last description `ours` (offer or answer) for a re-INVITE: the same
    /// session with the Opus stream's direction set to `direction` (`inactive` to hold while we
    /// can neither play nor capture, `sendrecv` to resume) and the origin's version increased
    /// (RFC 3264 section 8).
    ///
    /// - Throws: ``SDPError/noOpus`` when `ours` has no active audio stream.
    public static func reoffer(_ ours: SessionDescription, direction: MediaDirection) throws(SDPError) -> SessionDescription {
        guard let index = ours.media.firstIndex(where: { $0.media == "audio" && $0.port != 0 }) else { throw .noOpus }
        var offer = ours
        offer.media[index].setDirection(direction)
        offer.origin.increaseVersion()
        return offer
    }

    /// The encoder settings for sending to a peer that described its stream as `remote`:
    /// FEC if it asks for it, DTX if it asks and `allowDTX`, the bitrate capped by its
    /// `maxaveragebitrate`, its `ptime` if Opus calls allow it, stereo only if it asks.
    public static func sendConfiguration(_ base: OpusCallConfiguration, for remote: OpusStreamDescription,
                                         allowDTX: Bool = true) -> OpusCallConfiguration {
        var c = base
        c.inbandFEC = remote.parameters.useInbandFEC ?? false
        c.dtx = allowDTX && (remote.parameters.useDTX ?? false)
        if let cap = remote.parameters.maxAverageBitrate { c.bitrate = min(c.bitrate, cap) }
        if let ptime = remote.ptime, OpusCallConfiguration.frameDurationsMs.contains(ptime),
           ptime <= (remote.maxptime ?? 120) {
            c.frameMilliseconds = ptime
        }
        if remote.parameters.stereo != true { c.channels = 1 }
        return c
    }

    /// A description for a receiver that only listens, such as `ffmpeg -i file.sdp`:
    /// the stream arrives at `destination` (the address the receiver binds).
    public static func receiverDescription(destination: SocketAddress, payloadType: UInt8 = 96,
                                           configuration: OpusCallConfiguration, rtcpMux: Bool = false) -> SessionDescription {
        let connection = SessionDescription.Connection(destination)
        let parameters = OpusFormatParameters(useInbandFEC: configuration.inbandFEC, useDTX: configuration.dtx,
                                              maxAverageBitrate: configuration.bitrate,
                                              stereo: configuration.channels == 2,
                                              spropStereo: configuration.channels == 2)
        return SessionDescription(
            origin: .init(sessionID: "0", sessionVersion: "0", addressType: connection.addressType,
                          address: connection.address),
            sessionName: "CallAudio", connection: connection,
            media: [media(address: destination, payloadType: payloadType, parameters: parameters,
                          ptime: configuration.frameMilliseconds, maxptime: nil, direction: nil, rtcpMux: rtcpMux)])
    }
}

extension StringProtocol {
    /// Without leading and trailing spaces and tabs.
    var trimmingSpaces: Substring {
        var s = Substring(self)
        while let c = s.first, c == " " || c == "\t" { s.removeFirst() }
        while let c = s.last, c == " " || c == "\t" { s.removeLast() }
        return s
    }
}
