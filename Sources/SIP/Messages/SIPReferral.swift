/// A `Replaces` header value (RFC 3891): the dialog a new INVITE replaces, as the UA that
/// receives the INVITE knows it: `to-tag` is its local tag, `from-tag` its remote one.
///
/// Thread safety: a value type; safe to use from any thread.
public struct SIPReplaces: Sendable, Hashable, CustomStringConvertible {
    public var callID: String
    public var toTag: String
    public var fromTag: String
    /// `early-only`: replace only a dialog that is not yet established.
    public var earlyOnly: Bool

    public init(callID: String, toTag: String, fromTag: String, earlyOnly: Bool = false) {
        self.callID = callID
        self.toTag = toTag
        self.fromTag = fromTag
        self.earlyOnly = earlyOnly
    }

    /// `callid;to-tag=X;from-tag=Y`, as the header carries it.
    public var description: String {
        "\(callID);to-tag=\(toTag);from-tag=\(fromTag)" + (earlyOnly ? ";early-only" : "")
    }

    /// Parses a header value; nil unless it has a Call-ID and both tags.
    public init?(parsing text: String) {
        let parts = text.split(separator: ";", omittingEmptySubsequences: false).map { $0.trimmed }
        guard let callID = parts.first, !callID.isEmpty, !callID.contains(where: { $0 == " " || $0 == "\t" }) else { return nil }
        var toTag: String?, fromTag: String?, earlyOnly = false
        for part in parts.dropFirst() {
            let pair = part.split(separator: "=", maxSplits: 1).map { String($0.trimmed) }
            switch pair[0].asciiLowercased {
            case "to-tag" where pair.count == 2: toTag = pair[1]
            case "from-tag" where pair.count == 2: fromTag = pair[1]
            case "early-only": earlyOnly = true
            default: break
            }
        }
        guard let toTag, let fromTag, Substring(toTag).isToken, Substring(fromTag).isToken else { return nil }
        self.init(callID: String(callID), toTag: toTag, fromTag: fromTag, earlyOnly: earlyOnly)
    }

    /// The value escaped for a URI's `?Replaces=` header (RFC 3261 section 19.1.2: `@`, `;`,
    /// `=` and the rest outside `hnv-unreserved` and `unreserved` are `%HH`).
    var uriEscaped: String {
        var out = ""
        for byte in description.utf8 {
            let c = Character(Unicode.Scalar(byte))
            if c.isASCII, c.isLetter || c.isNumber || "-_.!~*'()[]/?:+$".contains(c) {
                out.append(c)
            } else {
                out += "%" + String(byte, radix: 16, uppercase: true).leftPadded(to: 2)
            }
        }
        return out
    }
}

/// A peer's request that we call someone (REFER, RFC 3515), accepted with 202.
///
/// Thread safety: a value type; safe to use from any thread.
public struct SIPReferral: Sendable, Hashable {
    /// Whom to call: the `Refer-To` URI without its `?headers`.
    public var target: SIPURI
    /// For an attended transfer: the dialog the target has with the transferor, which our
    /// INVITE to the target replaces (from `Refer-To`'s `?Replaces=`).
    public var replaces: SIPReplaces?
    /// The transferor, as its `Referred-By` names it (nil without one).
    public var referredBy: String?

    public init(target: SIPURI, replaces: SIPReplaces? = nil, referredBy: String? = nil) {
        self.target = target
        self.replaces = replaces
        self.referredBy = referredBy
    }

    /// Reads a `Refer-To` value: a sip or sips URI, its `Replaces` header decoded and its other
    /// headers dropped. Nil for anything else.
    init?(referTo text: String, referredBy: String?) {
        guard let address = try? SIPNameAddress(parsing: text, header: "Refer-To") else { return nil }
        var target = address.uri
        var replaces: SIPReplaces?
        if let headers = target.headers {
            for header in headers.split(separator: "&") {
                let pair = header.split(separator: "=", maxSplits: 1)
                guard pair.count == 2, String(pair[0]).asciiLowercased == "replaces" else { continue }
                guard let decoded = percentDecoded(pair[1]), let value = SIPReplaces(parsing: decoded) else { return nil }
                replaces = value
            }
            target.headers = nil
        }
        self.init(target: target, replaces: replaces, referredBy: referredBy)
    }

    /// The `Refer-To` value that asks for this referral.
    var referTo: String {
        var uri = target
        uri.headers = replaces.map { "Replaces=" + $0.uriEscaped }
        return "<\(uri)>"
    }
}

/// The status line of a `message/sipfrag` body (RFC 3420), as a NOTIFY for a REFER carries it:
/// `SIP/2.0 200 OK`. Nil unless the first line is one.
func sipfragStatus(_ body: [UInt8]) -> (status: Int, reason: String)? {
    let firstLine = body.prefix(256).split(separator: UInt8(ascii: "\n"), maxSplits: 1, omittingEmptySubsequences: false).first ?? []
    guard let text = String(validating: firstLine, as: UTF8.self) else { return nil }
    let line = Substring(text).trimmed
    let parts = line.split(separator: " ", maxSplits: 2)
    guard parts.count >= 2, parts[0] == "SIP/2.0", parts[1].utf8.count == 3, let status = Int(parts[1]),
          (100...699).contains(status) else { return nil }
    return (status, parts.count == 3 ? String(parts[2]) : "")
}

/// `%HH` escapes decoded; nil for a bad escape or bytes that are not UTF-8.
private func percentDecoded(_ text: Substring) -> String? {
    var bytes: [UInt8] = []
    var i = text.utf8.startIndex
    let utf8 = text.utf8
    while i < utf8.endIndex {
        if utf8[i] == UInt8(ascii: "%") {
            let high = utf8.index(after: i)
            guard high < utf8.endIndex, utf8.index(after: high) < utf8.endIndex,
                  let value = UInt8(String(decoding: utf8[high...utf8.index(after: high)], as: UTF8.self), radix: 16)
            else { return nil }
            bytes.append(value)
            i = utf8.index(high, offsetBy: 2)
        } else {
            bytes.append(utf8[i])
            i = utf8.index(after: i)
        }
    }
    return String(validating: bytes, as: UTF8.self)
}

private extension String {
    func leftPadded(to width: Int) -> String { count >= width ? self : String(repeating: "0", count: width - count) + self }
}
