import Logging
import OpenSSL
import Platform
import SRTP

/// The DTLS-SRTP handshake on the RTP port (RFC 5764), driven by the network thread: the
/// peer's certificate is checked against its `a=fingerprint`, and the keys the handshake
/// exports start SRTP.
///
/// Thread safety: not thread-safe; made on the control thread, then touched by the network
/// thread only.
final class DTLSMediaHandshake: @unchecked Sendable {
    // @unchecked: the session moves to the network thread with the loop and stays there.
    var session: TLSSession
    let setup: DTLSMediaSetup
    /// The address the handshake runs with: the first one we sent to or heard from.
    var peer: SocketAddress?
    /// When the handshake started and, once done, when the keys were installed (monotonic ns).
    var startedAt: UInt64 = 0
    var finished = false

    init(_ setup: DTLSMediaSetup) throws(TLSError) {
        var configuration = TLSConfiguration(role: setup.isClient ? .client : .server, transport: .datagram)
        configuration.identity = setup.identity
        // No chain: the peer's certificate is self-signed, and its fingerprint is what binds it
        // to the signalling (RFC 5763 section 5). It must still present one.
        configuration.trust = .none
        configuration.verifyPeer = true
        configuration.srtpProfiles = setup.profiles.map(\.opensslName).joined(separator: ":")
        session = try TLSContext(configuration).makeSession()
        self.setup = setup
    }
}

/// DTLS records start with a content type from 20 to 63 (RFC 7983 section 7); RTP and RTCP
/// with 128 to 191.
private func isDTLS(_ firstByte: UInt8) -> Bool { (20...63).contains(firstByte) }

extension NetworkLoop {
    /// Starts the handshake when we are its client (the server waits for the ClientHello).
    func startDTLS(now: UInt64) {
        guard let dtls else { return }
        dtls.startedAt = now
        guard dtls.setup.isClient else { return }
        dtls.peer = rtpDestination
        driveDTLS(dtls, now: now)
    }

    /// Takes the datagram of `length` bytes in ``buffer`` if it is DTLS; returns whether it was.
    /// A session without DTLS drops it (counted); one with DTLS accepts it only from the
    /// peer's host, and after the first from there, from that address only.
    func handleDTLS(_ length: Int, from source: SocketAddress) -> Bool {
        guard length > 0, isDTLS(buffer[0]) else { return false }
        guard let dtls, mayHandshake(with: source, dtls) else {
            state.add(.srtpDropped)
            return true
        }
        dtls.peer = source
        do {
            try dtls.session.receive(UnsafeRawBufferPointer(rebasing: buffer[0..<length]))
        } catch {
            state.add(.srtpDropped)
            return true
        }
        driveDTLS(dtls, now: MonotonicClock.nanoseconds())
        return true
    }

    private func mayHandshake(with source: SocketAddress, _ dtls: DTLSMediaHandshake) -> Bool {
        if let peer = dtls.peer, dtls.finished || !dtls.setup.isClient { return source == peer }
        return source.sameHost(as: rtpDestination) || configuration.validator.expectedSource.map { source.sameHost(as: $0) } == true
            || configuration.validator.alternateSource.map { source.sameHost(as: $0) } == true
    }

    /// Retransmits a flight whose timer expired, and gives up after the setup's timeout.
    func dtlsTimer(now: UInt64) {
        guard let dtls, !dtls.finished else { return }
        if let deadline = dtls.session.retransmissionDeadline, deadline <= .now {
            _ = try? dtls.session.handleTimeout()
            flushDTLS(dtls)
        }
        let limit = UInt64(dtls.setup.timeout.components.seconds) * 1_000_000_000
        if now &- dtls.startedAt > limit || dtls.session.state == .failed {
            dtls.finished = true
            state.set(.dtlsState, DTLSState.failed.rawValue)
            logger.error("DTLS-SRTP handshake did not complete", metadata: ["state": "\(dtls.session.state)"])
        }
    }

    private func driveDTLS(_ dtls: DTLSMediaHandshake, now: UInt64) {
        let before = dtls.session.state
        let after = (try? dtls.session.advance()) ?? .failed
        flushDTLS(dtls)
        if after == .established {
            // Later datagrams (a retransmitted Finished) still need answers.
            _ = try? dtls.session.readAvailable()
            flushDTLS(dtls)
        }
        guard before == .handshaking, !dtls.finished else { return }
        if after == .failed {
            dtls.finished = true
            state.set(.dtlsState, DTLSState.failed.rawValue)
            logger.error("DTLS-SRTP handshake failed")
        } else if after == .established {
            dtls.finished = true
            installKeys(from: dtls, now: now)
        }
    }

    private func flushDTLS(_ dtls: DTLSMediaHandshake) {
        guard let peer = dtls.peer else { return }
        while let datagram = dtls.session.takeOutgoing() { _ = rtp.send(datagram, to: peer) }
    }

    /// Checks the peer's certificate against its fingerprints, exports the keys and starts SRTP.
    private func installKeys(from dtls: DTLSMediaHandshake, now: UInt64) {
        let matches = dtls.setup.remoteFingerprints.contains { fingerprint in
            dtls.session.peerCertificateFingerprint(fingerprint.algorithm) == fingerprint.digest
        }
        guard matches else {
            state.set(.dtlsState, DTLSState.failed.rawValue)
            logger.error("DTLS-SRTP: the peer's certificate does not match its a=fingerprint")
            dtls.session.close()
            flushDTLS(dtls)
            return
        }
        guard let name = dtls.session.selectedSRTPProfile,
              let profile = SRTPProfile.allCases.first(where: { $0.opensslName == name }),
              let exported = try? dtls.session.exportKeyingMaterial(label: "EXTRACTOR-dtls_srtp",
                                                                     length: SRTPMasterKey.dtlsExportLength(profile: profile)),
              let (local, remote) = try? SRTPMasterKey.fromDTLS(exported: exported, profile: profile, isClient: dtls.setup.isClient),
              let sender = try? SRTPStream(key: local, direction: .outbound, ssrc: ssrc),
              let receiver = try? SRTPStream(key: remote, direction: .inbound) else {
            state.set(.dtlsState, DTLSState.failed.rawValue)
            logger.error("DTLS-SRTP: no SRTP profile agreed, or its keys could not be used")
            return
        }
        inbound = receiver
        outbound = sender
        state.setKeyed()
        state.set(.srtpProfile, SRTPProfile.allCases.firstIndex(of: profile)! + 1)
        state.set(.dtlsState, DTLSState.established.rawValue)
        state.set(.dtlsHandshakeMicroseconds, Int((now &- dtls.startedAt) / 1000))
        logger.info("DTLS-SRTP established", metadata: ["profile": "\(profile.sdesName)", "peer": "\(dtls.peer.map { "\($0)" } ?? "-")"])
    }
}

/// Where a session's DTLS-SRTP handshake is (``RTPSessionStatistics/dtls``).
public enum DTLSState: Int, Sendable, Codable {
    /// No DTLS (clear or SDES).
    case none = 0
    case handshaking = 1
    case established = 2
    /// Failed or timed out: nothing is sent, and nothing received is accepted.
    case failed = 3
}
