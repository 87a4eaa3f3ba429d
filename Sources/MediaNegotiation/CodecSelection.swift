public import RTP
public import SDP

/// Which codec of a media section a call uses, and under which payload type.
///
/// A codec is offered by its `a=rtpmap` (`PCMU/8000`; `G722/8000/1` too), or, for the static
/// payload types of RFC 3551 (0, 8, 9), by its number alone in the `m=` line.
///
/// Thread safety: stateless; safe from any thread.
public enum CodecSelection {
    /// Whose order decides between codecs both sides have.
    public enum Order: Sendable {
        /// Ours: answering an offer, the first of our codecs the offer has.
        case ours
        /// The section's: reading an answer, the first of its formats we offered (RFC 3264
        /// section 6.1: the answer lists the codecs in the order its author prefers).
        case theirs
    }

    /// The codec `media` carries that is in `codecs`, chosen by `order`, with its payload type;
    /// nil when there is none.
    public static func choose(in media: SessionDescription.Media, from codecs: [AudioCodec],
                              order: Order = .ours) -> (codec: AudioCodec, payloadType: UInt8)? {
        var found: [(codec: AudioCodec, payloadType: UInt8)] = []
        for codec in codecs where !found.contains(where: { $0.codec == codec }) {
            if let payloadType = payloadType(of: codec, in: media) { found.append((codec, payloadType)) }
        }
        guard order == .theirs else { return found.first }
        return found.min { a, b in
            (media.formats.firstIndex(of: "\(a.payloadType)") ?? .max) < (media.formats.firstIndex(of: "\(b.payloadType)") ?? .max)
        }
    }

    /// The payload type `media` gives `codec`, if it offers it.
    public static func payloadType(of codec: AudioCodec, in media: SessionDescription.Media) -> UInt8? {
        let mapped = media.payloadType(for: codec.rtpmap) ?? (codec == .opus ? nil : media.payloadType(for: codec.rtpmap + "/1"))
        if let mapped {
            guard let payloadType = UInt8(mapped), payloadType < 128 else { return nil }
            return payloadType
        }
        // A static type may go without an rtpmap, unless one gives its number another codec.
        guard let payloadType = codec.staticPayloadType, media.formats.contains("\(payloadType)") else { return nil }
        let remapped = media.attributes.contains { attribute in
            attribute.name == "rtpmap" && attribute.value?.split(separator: " ").first == "\(payloadType)"[...]
        }
        return remapped ? nil : payloadType
    }
}
