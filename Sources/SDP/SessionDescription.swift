public import Platform

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
        /// Linear in the description: the formats are put in a set once (a peer's re-INVITE may
        /// list thousands of formats and rtpmap lines).
        public func payloadType(for encoding: String) -> String? {
            let wanted = encoding.lowercased()
            var offered: Set<String>?
            for attribute in attributes where attribute.name == "rtpmap" {
                guard let value = attribute.value, let space = value.firstIndex(of: " ") else { continue }
                let name = value[value.index(after: space)...].trimmingSpaces
                guard name.lowercased() == wanted else { continue }
                if offered == nil { offered = Set(formats) }
                let format = String(value[..<space])
                if offered!.contains(format) { return format }
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
}
