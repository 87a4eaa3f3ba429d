import Platform
import Glibc
import Logging
import Opus

/// The network thread's RTCP: compound reports in (validated as strictly as RTP), reports out
/// on the RFC 3550 schedule, and our SSRC's collisions (section 8.2).
extension NetworkLoop {
    func handleRTCP(_ datagram: UnsafeRawBufferPointer, from source: SocketAddress, arrival: UInt64, truncated: Bool) {
        guard !truncated, let packets = try? RTCPCompound.parse(datagram) else {
            state.add(.rtcpDropped)
            return
        }
        let sender: UInt32
        switch packets[0] {
        case let .senderReport(s, _, _), let .receiverReport(s, _): sender = s
        default: sender = 0
        }
        if sender == ssrc {
            state.add(.rtcpDropped)
            collided(with: source, now: arrival)
            return
        }
        // From the locked source, or (before anything is locked, or for a receive-only
        // peer) from where we send RTCP (its host, for a bare endpoint), reporting on our SSRC.
        let fromPeer = validator.acceptsRTCP(from: source, senderSSRC: sender, peerRTCP: rtcpDestination)
        let fromPeerRTCP = validator.acceptsAnySource ? source.sameHost(as: rtcpDestination) : source == rtcpDestination
        let aboutUs = packets.contains { packet in
            switch packet {
            case let .senderReport(_, _, blocks), let .receiverReport(_, blocks): blocks.contains { $0.ssrc == ssrc }
            default: false
            }
        }
        guard fromPeer || (aboutUs && fromPeerRTCP) else {
            state.add(.rtcpDropped)
            return
        }
        state.add(.rtcpReceived)
        state.peerHeard(at: arrival)
        scheduler.account(packetSize: datagram.count + headerOverhead)
        let arrivalNTP = NTPTimestamp.now().middle32
        for packet in packets {
            switch packet {
            case let .senderReport(_, info, blocks):
                if fromPeer {
                    lastSenderReport = info.ntpTimestamp.middle32
                    lastSenderReportArrival = arrival
                }
                handle(blocks, arrivalNTP: arrivalNTP)
            case let .receiverReport(_, blocks):
                handle(blocks, arrivalNTP: arrivalNTP)
            case let .goodbye(sources, _):
                if fromPeer, let locked = validator.ssrc, sources.contains(locked) {
                    validator.goodbye()
                    logger.info("RTP source said BYE", metadata: ["ssrc": "\(locked)"])
                }
            default:
                break
            }
        }
    }

    private func handle(_ blocks: [RTCPReportBlock], arrivalNTP: UInt32) {
        for block in blocks where block.ssrc == ssrc {
            if let rtt = RoundTripTime.compute(arrival: arrivalNTP, lastSenderReport: block.lastSenderReport,
                                               delaySinceLastSenderReport: block.delaySinceLastSenderReport) {
                state.set(.rttMicroseconds, Int(UInt64(rtt) * 1_000_000 / 65536))
            }
            state.set(.remoteFractionLost, Int(block.fractionLost))
            state.set(.remoteCumulativeLost, Int(block.cumulativeLost))
            state.set(.remoteJitterUnits, Int(block.jitter))
            state.add(.remoteReports)
            state.publishLossReport(fraction: block.fractionLost)
        }
    }

    private var headerOverhead: Int { configuration.localAddress.family == .ipv6 ? 48 : 28 }

    func reportTimer(now: UInt64) {
        // 6.3.8: we are a sender if we sent RTP since the last report; the peer is one if heard lately.
        let frames = state.lastFrame().frames
        scheduler.weSent = frames != framesAtLastReport
        let peerActive = peerSentAt != 0 && now &- peerSentAt < 10_000_000_000
        scheduler.senders = (scheduler.weSent ? 1 : 0) + (peerActive ? 1 : 0)
        scheduler.members = validator.ssrc == nil ? 1 : 2
        if scheduler.expired(now: seconds(now)) {
            sendReport(now: now, goodbye: false)
        }
    }

    /// The time from `then` to `now` in 1/65536 s (DLSR), saturating: the product with 65536
    /// would overflow after 78 hours without a sender report.
    static func units65536(since then: UInt64, now: UInt64) -> UInt32 {
        let elapsed = now > then ? now - then : 0
        let seconds = elapsed / 1_000_000_000, fraction = (elapsed % 1_000_000_000) * 65536 / 1_000_000_000
        return UInt32(clamping: seconds << 16 | fraction)
    }

    /// Our SSRC collided with a source's (RFC 3550 section 8.2): a BYE for the old one, then a
    /// new random one for RTCP at once and for RTP at the sender's next frame. The same address
    /// again is a loop, not a new collision (8.2's list of conflicting addresses, of one here),
    /// and a session changes at most four times, so whoever echoes our SSRC cannot keep us changing.
    func collided(with address: SocketAddress, now: UInt64) {
        guard address != collisionAddress, collisionChanges < 4 else { return }
        collisionAddress = address
        collisionChanges += 1
        sendReport(now: now, goodbye: true)
        var random = SystemRandomNumberGenerator()
        var new = ssrc
        while new == ssrc { new = UInt32.random(in: 1...UInt32.max, using: &random) }
        logger.warning("RTP SSRC collision: changing ours", metadata: ["from": "\(address)", "old": "\(ssrc)", "new": "\(new)"])
        ssrc = new
        validator.localSSRC = new
        state.setLocalSSRC(new)
        state.add(.localSSRCChanges)
    }

    func sendReport(now: UInt64, goodbye: Bool) {
        guard configuration.sendsRTCP else { return }
        let last = state.lastFrame()
        let weSent = last.frames != framesAtLastReport || (goodbye && last.frames > 0)
        framesAtLastReport = last.frames
        var blocks: [RTCPReportBlock] = []
        if let peer = validator.ssrc, let sequence = validator.sequence {
            let dlsr = lastSenderReport == 0 ? 0 : Self.units65536(since: lastSenderReportArrival, now: now)
            blocks.append(RTCPReportBlock(ssrc: peer, fractionLost: validator.takeFractionLost(),
                                          cumulativeLost: sequence.cumulativeLost,
                                          extendedHighestSequence: sequence.extendedMaxSequence,
                                          jitter: validator.jitter.jitter, lastSenderReport: lastSenderReport,
                                          delaySinceLastSenderReport: dlsr))
        }
        var packets: [RTCPPacket] = []
        if weSent {
            // The RTP timestamp of this instant: the last frame's, advanced by the time since.
            let elapsed = now &- last.time
            let rtpNow = last.timestamp &+ RTPClock.rtpUnits(nanoseconds: elapsed, rate: configuration.codec.rtpClockRate)
            let info = RTCPSenderInfo(ntpTimestamp: NTPTimestamp.now(), rtpTimestamp: rtpNow,
                                      packetCount: UInt32(truncatingIfNeeded: state.int(.packetsSent)),
                                      octetCount: UInt32(truncatingIfNeeded: state.int(.octetsSent)))
            packets.append(.senderReport(ssrc: ssrc, sender: info, reports: blocks))
        } else {
            packets.append(.receiverReport(ssrc: ssrc, reports: blocks))
        }
        packets.append(.sourceDescription([RTCPSourceDescriptionChunk(
            ssrc: ssrc, items: [RTCPSourceDescriptionItem(type: RTCPSourceDescriptionItem.cname, text: cname)])]))
        if goodbye { packets.append(.goodbye(sources: [ssrc], reason: nil)) }
        guard let bytes = try? RTCPCompound.serialize(packets) else { return }
        if sendRTCP(bytes) { state.add(.rtcpSent) }
        scheduler.sent(now: seconds(now), size: bytes.count + headerOverhead)
    }
}
