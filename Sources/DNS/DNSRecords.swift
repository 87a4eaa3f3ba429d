/// One SRV record (RFC 2782): where a service runs.
///
/// Thread safety: a value type; safe to use from any thread.
public struct DNSServiceRecord: Sendable, Hashable, CustomStringConvertible {
    /// Lower is tried first.
    public var priority: UInt16
    /// Among records of one priority, the relative share of selections.
    public var weight: UInt16
    public var port: UInt16
    /// The host name, without its trailing dot; `"."` means the service is decidedly not available
    /// at this domain (RFC 2782).
    public var target: String

    public init(priority: UInt16, weight: UInt16, port: UInt16, target: String) {
        self.priority = priority
        self.weight = weight
        self.port = port
        self.target = target
    }

    /// Whether the target is `"."`: no service here.
    public var isNoService: Bool { target == "." }

    public var description: String { "\(priority) \(weight) \(port) \(target)" }
}

/// One NAPTR record (RFC 3403) as RFC 3263 uses it: which service a domain offers, and the
/// SRV name (`replacement`) to look up for it.
///
/// Thread safety: a value type; safe to use from any thread.
public struct DNSNamingRecord: Sendable, Hashable, CustomStringConvertible {
    /// Lower is used first.
    public var order: UInt16
    /// Among records of one order, lower is preferred.
    public var preference: UInt16
    /// The flags, as sent (`s`: the next lookup is SRV on ``replacement``); letters and digits only.
    public var flags: String
    /// The service field (`SIP+D2U`, `SIP+D2T`, `SIPS+D2T`, ...), as sent; printable ASCII only.
    public var service: String
    /// The regular expression field, as sent; empty for the records SIP uses.
    public var regexp: String
    /// The name to look up next, without its trailing dot; `"."` when there is none (a regexp record).
    public var replacement: String

    public init(order: UInt16, preference: UInt16, flags: String, service: String, regexp: String = "", replacement: String) {
        self.order = order
        self.preference = preference
        self.flags = flags
        self.service = service
        self.regexp = regexp
        self.replacement = replacement
    }

    public var description: String { "\(order) \(preference) \"\(flags)\" \"\(service)\" \"\(regexp)\" \(replacement)" }
}

/// Host-name checks shared by queries and answers.
enum HostName {
    /// Most records of one answer that are used: a hostile server cannot make a caller do more.
    static let maximumRecords = 32

    /// Whether `name` is a host name we will query or accept from an answer: at most 253
    /// characters, labels of 1 to 63 letters, digits, `-` or `_` (SRV owner names start with `_`),
    /// an optional trailing dot. dn_expand writes other bytes as `\DDD` escapes, which fail here.
    static func isValid(_ name: String) -> Bool {
        var utf8 = Substring(name).utf8
        if utf8.last == UInt8(ascii: ".") { utf8 = utf8.dropLast() }
        guard !utf8.isEmpty, utf8.count <= 253 else { return false }
        var label = 0
        for byte in utf8 {
            switch byte {
            case UInt8(ascii: "."):
                guard label > 0 else { return false }
                label = 0
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                 UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"):
                label += 1
                guard label <= 63 else { return false }
            default:
                return false
            }
        }
        return label > 0
    }

    /// `name` without a trailing dot (the root stays `"."`).
    static func trimmed(_ name: String) -> String {
        guard name.count > 1, name.hasSuffix(".") else { return name.isEmpty ? "." : name }
        return String(name.dropLast())
    }
}
