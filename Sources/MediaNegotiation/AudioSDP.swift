public import Opus
public import Platform
public import RTP
public import SDP


/// Offers and answers for one audio stream (RFC 3264): Opus (RFC 7587), G.722, PCMU and PCMA
/// (RFC 3551), the codecs chosen by ``CodecSelection``.
///
/// Thread safety: stateless; safe from any thread (allocates: control thread).
public enum AudioSDP {
    /// The rtpmap encoding for Opus: always 48 kHz and 2 channels (RFC 7587 section 7).
    public static let encoding = AudioCodec.opus.rtpmap
    /// What calls offer for DTMF: events on Opus's clock (RFC 4733 section 7.1.1), and at
    /// 8 kHz for the many endpoints that know only that (as WebRTC offers both).
    public static let telephoneEventFormats = [TelephoneEventFormat(payloadType: 101, clockRate: 48000),
                                               TelephoneEventFormat(payloadType: 102, clockRate: 8000)]

    /// The media section for an audio stream received at `address`, offering `codecs` in that
    /// order: Opus under `payloadType` with `parameters`, the others under their static types.
    /// With `telephoneEvents`, the stream also carries DTMF events (the keys 0-15) in those
    /// formats; only those on a clock one of the codecs uses are listed. With `comfortNoise` and
    /// an 8 kHz codec, comfort noise (`CN/8000`, RFC 3389) is received under that payload type.
    public static func media(address: SocketAddress, payloadType: UInt8 = 96, parameters: OpusFormatParameters,
                             codecs: [AudioCodec] = [.opus], comfortNoise: UInt8? = nil,
                             ptime: Int? = 20, maxptime: Int? = 120, direction: MediaDirection? = .sendrecv,
                             rtcpMux: Bool = false, rtcpPort: Int? = nil,
                             telephoneEvents: [TelephoneEventFormat] = [],
                             proto: String = "RTP/AVP", security: [SessionDescription.Attribute] = []) -> SessionDescription.Media {
        var attributes: [SessionDescription.Attribute] = []
        var formats: [String] = []
        for codec in codecs where !formats.contains("\(codec.staticPayloadType ?? payloadType)") {
            let type = codec.staticPayloadType ?? payloadType
            formats.append("\(type)")
            attributes.append(.init("rtpmap", "\(type) \(codec.rtpmap)"))
            if codec == .opus, let fmtp = parameters.text { attributes.append(.init("fmtp", "\(type) \(fmtp)")) }
        }
        let clocks = Set(codecs.map(\.rtpClockRate))
        if let comfortNoise, clocks.contains(8000), !formats.contains("\(comfortNoise)") {
            formats.append("\(comfortNoise)")
            attributes.append(.init("rtpmap", "\(comfortNoise) CN/8000"))
        }
        for events in telephoneEvents where clocks.contains(events.clockRate) || codecs.contains(.opus) {
            formats.append("\(events.payloadType)")
            attributes.append(.init("rtpmap", "\(events.payloadType) telephone-event/\(events.clockRate)"))
            attributes.append(.init("fmtp", "\(events.payloadType) 0-15"))
        }
        if let ptime { attributes.append(.init("ptime", "\(ptime)")) }
        if let maxptime { attributes.append(.init("maxptime", "\(maxptime)")) }
        if let rtcpPort { attributes.append(.init("rtcp", "\(rtcpPort)")) }
        if rtcpMux { attributes.append(.init("rtcp-mux")) }
        attributes += security
        if let direction { attributes.append(.init(direction.rawValue)) }
        return .init(media: "audio", port: Int(address.port), proto: proto, formats: formats, attributes: attributes)
    }

    /// An offer for one audio stream received at `address`, with `codecs` best first.
    public static func offer(address: SocketAddress, sessionID: UInt64, payloadType: UInt8 = 96,
                             parameters: OpusFormatParameters = .init(useInbandFEC: true, maxAverageBitrate: 24000,
                                                                      stereo: false, spropStereo: false),
                             codecs: [AudioCodec] = [.opus], comfortNoise: UInt8? = nil,
                             ptime: Int = 20, maxptime: Int = 120, direction: MediaDirection = .sendrecv,
                             rtcpMux: Bool = false, telephoneEvents: [TelephoneEventFormat] = [],
                             security: SecurityOffer? = nil) -> SessionDescription {
        let connection = SessionDescription.Connection(address)
        return SessionDescription(
            origin: .init(sessionID: "\(sessionID)", sessionVersion: "1", addressType: connection.addressType,
                          address: connection.address),
            sessionName: "CallAudio", connection: connection,
            media: [media(address: address, payloadType: payloadType, parameters: parameters, codecs: codecs,
                          comfortNoise: comfortNoise, ptime: ptime,
                          maxptime: maxptime, direction: direction, rtcpMux: rtcpMux, telephoneEvents: telephoneEvents,
                          proto: security?.proto ?? "RTP/AVP", security: security?.attributes ?? [])])
    }

    /// The `m=` section ``stream(in:codecs:order:)`` reads: the first audio stream at an
    /// address offering one of `codecs`.
    public static func streamMedia(in description: SessionDescription,
                                   codecs: [AudioCodec] = AudioCodec.preference) -> SessionDescription.Media? {
        streamIndex(in: description, codecs: codecs).map { description.media[$0] }
    }

    static func streamIndex(in description: SessionDescription, codecs: [AudioCodec]) -> Int? {
        description.media.firstIndex { m in
            m.media == "audio" && m.port != 0 && (m.connection ?? description.connection) != nil
                && CodecSelection.choose(in: m, from: codecs) != nil
        }
    }

    /// The first audio stream in `description` offering one of `codecs`, as its author
    /// describes it, with the codec `order` picks.
    ///
    /// - Throws: `SDPError.noCommonCodec` when no stream offers any of them.
    public static func stream(in description: SessionDescription, codecs: [AudioCodec] = AudioCodec.preference,
                              order: CodecSelection.Order = .ours) throws(SDPError) -> AudioStreamDescription {
        guard let m = streamMedia(in: description, codecs: codecs),
              let (codec, payloadType) = CodecSelection.choose(in: m, from: codecs, order: order),
              let connection = m.connection ?? description.connection else { throw .noCommonCodec }
        let rtcpPort = m.attribute("rtcp").flatMap { value in Int(value.split(separator: " ").first ?? "") }
        // Events on the audio's clock (RFC 4733 section 2.1); Opus streams also take 8 kHz ones.
        let clocks = codec == .opus ? [48000, 8000] : [codec.rtpClockRate]
        var stream = AudioStreamDescription(
            address: connection.address, port: m.port, payloadType: payloadType, codec: codec,
            parameters: codec == .opus ? OpusFormatParameters(parsing: m.formatParameters(for: "\(payloadType)") ?? "") : .init(),
            direction: description.direction(of: m), rtcpMux: m.has("rtcp-mux"), rtcpPort: rtcpPort,
            ptime: m.attribute("ptime").flatMap { Int($0.trimmingSpaces) })
        stream.maxptime = m.attribute("maxptime").flatMap { Int($0.trimmingSpaces) }
        stream.telephoneEvents = clocks.lazy.compactMap { rate -> TelephoneEventFormat? in
            guard let events = m.payloadType(for: "telephone-event/\(rate)").flatMap(UInt8.init),
                  events < 128, events != payloadType else { return nil }
            return TelephoneEventFormat(payloadType: events, clockRate: rate)
        }.first
        stream.comfortNoise = codec.rtpClockRate == 8000 ? comfortNoiseType(in: m, besides: payloadType) : nil
        return stream
    }

    /// The payload type `m` gives comfort noise at 8 kHz (`CN/8000`, or 13 without an rtpmap).
    static func comfortNoiseType(in m: SessionDescription.Media, besides audio: UInt8) -> UInt8? {
        let type = m.payloadType(for: "CN/8000").flatMap(UInt8.init)
            ?? (m.formats.contains("13") && !m.attributes.contains { $0.name == "rtpmap" && $0.value?.hasPrefix("13 ") == true } ? 13 : nil)
        guard let type, type < 128, type != audio else { return nil }
        return type
    }

    /// Answers `offer` (RFC 3264 section 6): the first audio stream with one of `codecs` is
    /// accepted with the first of them it offers (our order), under the offerer's payload type,
    /// and the reverse direction; every other stream is
    /// rejected with port 0. rtcp-mux is kept only if offered and `rtcpMux` allows it;
    /// telephone events (at 48 kHz, else 8 kHz) with the offerer's payload type if offered and
    /// `telephoneEvents`; comfort noise (`CN/8000`) with an 8 kHz codec if offered and
    /// `comfortNoise`. `security` is the accepted stream's profile and encryption attributes
    /// (``MediaSecurityPolicy/answer(_:media:fingerprint:overSecureSignalling:)``); `RTP/AVP` without.
    ///
    /// - Returns: the answer, and the offerer's stream (where to send, what it asked for).
    public static func answer(_ offer: SessionDescription, address: SocketAddress, sessionID: UInt64,
                              parameters: OpusFormatParameters, ptime: Int = 20, maxptime: Int = 120,
                              direction: MediaDirection = .sendrecv, rtcpMux: Bool = true,
                              telephoneEvents: Bool = true, codecs: [AudioCodec] = AudioCodec.preference,
                              comfortNoise: Bool = true,
                              security: (proto: String, attributes: [SessionDescription.Attribute])? = nil) throws(SDPError) -> (answer: SessionDescription, remote: AudioStreamDescription) {
        var remote = try stream(in: offer, codecs: codecs)
        if !comfortNoise { remote.comfortNoise = nil }
        let accepted = streamIndex(in: offer, codecs: codecs)
        if !telephoneEvents { remote.telephoneEvents = nil }
        let connection = SessionDescription.Connection(address)
        var answer = SessionDescription(
            origin: .init(sessionID: "\(sessionID)", sessionVersion: "1", addressType: connection.addressType,
                          address: connection.address),
            sessionName: "CallAudio", connection: connection)
        for (index, m) in offer.media.enumerated() {
            if index == accepted {
                answer.media.append(media(address: address, payloadType: remote.payloadType,
                                          parameters: parameters, codecs: [remote.codec],
                                          comfortNoise: comfortNoise ? remote.comfortNoise : nil, ptime: ptime, maxptime: maxptime, direction: remote.direction.answer(wanting: direction),
                                          rtcpMux: rtcpMux && remote.rtcpMux,
                                          telephoneEvents: remote.telephoneEvents.map { [$0] } ?? [],
                                          proto: security?.proto ?? "RTP/AVP", security: security?.attributes ?? []))
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
    /// - Throws: `SDPError/noCommonCodec` or `SDPError/unsupportedChange(_:)` when the offer
    ///   changes the codec's payload type, drops rtcp-mux in use, changes the address family,
    ///   or the number of streams; those would need new sockets or codecs, so the caller declines with 488 and
    ///   the session stays as it was.
    public static func reanswer(_ offer: SessionDescription, peerPrevious: SessionDescription,
                                ours: SessionDescription, wanting wanted: MediaDirection = .sendrecv)
        throws(SDPError) -> (answer: SessionDescription, remote: AudioStreamDescription) {
        // The codec in use: the one the peer's last description chose among ours.
        let ourCodecs = ours.media.first { $0.media == "audio" && $0.port != 0 }.map { m in
            AudioCodec.allCases.filter { CodecSelection.payloadType(of: $0, in: m) != nil }
        } ?? []
        let before = try stream(in: peerPrevious, codecs: ourCodecs, order: .theirs)
        let remote = try stream(in: offer, codecs: [before.codec])
        guard remote.payloadType == before.payloadType else { throw .unsupportedChange("the codec's payload type") }
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
              CodecSelection.payloadType(of: before.codec, in: offer.media[index]) == remote.payloadType else {
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
    /// - Throws: `SDPError/noCommonCodec` when `ours` has no active audio stream.
    public static func reoffer(_ ours: SessionDescription, direction: MediaDirection) throws(SDPError) -> SessionDescription {
        guard let index = ours.media.firstIndex(where: { $0.media == "audio" && $0.port != 0 }) else { throw .noCommonCodec }
        var offer = ours
        offer.media[index].setDirection(direction)
        offer.origin.increaseVersion()
        return offer
    }

    /// The encoder settings for sending to a peer that described its stream as `remote`:
    /// FEC if it asks for it, DTX if it asks and `allowDTX`, the bitrate capped by its
    /// `maxaveragebitrate`, its `ptime` if Opus calls allow it, stereo only if it asks.
    public static func sendConfiguration(_ base: OpusCallConfiguration, for remote: AudioStreamDescription,
                                         allowDTX: Bool = true) -> OpusCallConfiguration {
        var c = base
        if remote.codec != .opus {
            // G.711 and G.722: mono, one rate, no FEC; DTX only as comfort noise the peer takes
            // (RFC 3389); only the packet time is the peer's.
            c.inbandFEC = false
            c.dtx = allowDTX && base.dtx && remote.comfortNoise != nil
            c.channels = 1
            if let ptime = remote.ptime, OpusCallConfiguration.frameDurationsMs.contains(ptime) { c.frameMilliseconds = ptime }
            return c
        }
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
