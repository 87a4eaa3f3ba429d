import MediaNegotiation
import SDP
import Platform
import AudioSession
import AudioIO
import Glibc
import Logging
import Opus
import RTP
import SIP
import Synchronization
import VoiceProcessing

extension CallController {
    // MARK: Media and session lifecycle

    var sdpParameters: OpusFormatParameters {
        OpusFormatParameters(useInbandFEC: configuration.codec.inbandFEC, useDTX: configuration.codec.dtx,
                             maxAverageBitrate: configuration.codec.bitrate, stereo: false, spropStereo: false)
    }

    /// Activates the session for the call, opens the device and starts media towards `remote`,
    /// encrypted as `security` says.
    func startMedia(_ id: String, remote: AudioStreamDescription, security: NegotiatedMediaSecurity,
                    awaitingConsent: Bool = false) throws(CallError) {
        guard var record = records[id], let ports = record.ports else { throw .invalidState("no call \(id)") }
        try yieldAudio(to: id)
        try activateSession()
        do {
            let device = try makeDevice()
            var rtpConfiguration = try rtpConfiguration(toward: remote, from: ports, record: record,
                                                        sampleRate: device.format.sampleRate)
            rtpConfiguration.protection = try protection(for: security)
            rtpConfiguration.sendsRTCP = record.room == nil
            record.security = security
            securities[id] = security
            let rtp = try RTPSession(configuration: rtpConfiguration, bound: ports.take(), logger: logger)
            // A peer whose stream does not receive (offered or answered sendonly or inactive) gets no
            // RTP, nor one that has not consented yet (``CallRecord/awaitsConsent``).
            rtp.isSending = remote.direction.receives && !awaitingConsent
            record.awaitsConsent = awaitingConsent
            let media = try CallMedia(device: device, rtp: rtp, voice: configuration.voiceProcessing,
                                      capturesSilence: session.capturesSilence,
                                      recordUplinkSeconds: configuration.recordUplinkSeconds) { [weak self] error in
                Task { await self?.deviceFailed(id, error) }
            }
            media.setMuted(record.call.isMuted)
            record.media = media
            record.remote = remote
            records[id] = record
            try media.start()
            record.watchdog = watchMedia(id)
            let call = record.call
            Task { for await event in rtp.receivedTelephoneEvents { if let key = event.key { call.received(key) } } }
            record.io = try? beginIO(id, media)
            // Record permission is asked when input starts (in beginIO): follow the answer.
            media.setCapturesSilence(session.capturesSilence)
            records[id] = record
            deviceProvider?.attach(media.engine)
            audioCallID = id
        } catch let error as CallError {
            stopMedia(id)
            throw error
        } catch {
            stopMedia(id)
            throw .media("\(error)")
        }
    }

    /// `playAndRecord` + `voiceChat` with the configured options and preferences, then active.
    func activateSession() throws(CallError) {
        do {
            try session.setCategory(.playAndRecord, mode: .voiceChat, options: configuration.categoryOptions)
            try? session.setPreferredSampleRate(configuration.preferredSampleRate)
            try? session.setPreferredIOBufferDuration(configuration.preferredIOBufferDuration)
            try session.setActive(true)
        } catch {
            throw .audioSession("\(error)")
        }
    }

    /// The RTP session for the peer's stream `remote`: codec limits, destinations, the one
    /// source the peer may send from, telephone events and latching.
    private func rtpConfiguration(toward remote: AudioStreamDescription, from ports: PortReservation, record: CallRecord,
                                  sampleRate: Int) throws(CallError) -> RTPSessionConfiguration {
        var codec = configuration.codec
        codec.sampleRate = sampleRate
        if let bitrate = remote.parameters.maxAverageBitrate { codec.bitrate = min(codec.bitrate, bitrate) }
        if remote.codec != .opus { codec = AudioSDP.sendConfiguration(codec, for: remote) }
        let mux = configuration.rtcpMux && remote.rtcpMux
        let (remoteAddress, rtcpAddress) = try destinations(of: remote, mux: mux)
        var rtpConfiguration = RTPSessionConfiguration(
            localAddress: ports.rtp, remoteAddress: remoteAddress, remoteRTCPAddress: rtcpAddress,
            rtcpMux: mux, payloadType: remote.payloadType, opus: codec)
        rtpConfiguration.codec = remote.codec
        // Only the address the peer declared may become its source (a relay forwards from its own).
        if configuration.mediaPath == nil {
            let declared = try Self.peerAddress(remote)
            rtpConfiguration.validator.expectedSource = declared
            rtpConfiguration.validator.alternateSource = record.sip?.remoteAddress.with(port: declared.port)
        }
        rtpConfiguration.telephoneEvents = remote.telephoneEvents
        rtpConfiguration.comfortNoisePayloadType = remote.comfortNoise
        // Another address family (a peer that advertises IPv6 while it talks to us over IPv4):
        // nothing we send there arrives.
        let unreachable = remoteAddress.family != ports.rtp.family
        if configuration.mediaPath == nil {
            rtpConfiguration.latchesToPeerSource = configuration.mediaLatching == .always
                || (configuration.mediaLatching == .whenUnreachable && unreachable)
        }
        if unreachable && rtpConfiguration.latchesToPeerSource {
            logger.warning("the peer's media address is \(remoteAddress), which our \(ports.rtp) cannot reach: sending where its RTP comes from")
        }
        return rtpConfiguration
    }

    func sendDTMF(_ keys: String, on call: Call) throws(CallError) {
        guard let media = records[call.id]?.media else { throw .dtmf("the call has no media") }
        do { try media.rtp.sendDTMF(keys) } catch { throw .dtmf("\(error)") }
    }

    /// Where RTP and RTCP go for the peer's stream `remote` (through `mediaPath` when set).
    func destinations(of remote: AudioStreamDescription, mux: Bool) throws(CallError) -> (rtp: SocketAddress, rtcp: SocketAddress?) {
        let peer = try Self.peerAddress(remote)
        var rtcp = remote.rtcpPort.flatMap { try? SocketAddress(host: remote.address, port: UInt16(clamping: $0)) }
        if configuration.mediaPath != nil, rtcp == nil { rtcp = mux ? peer : peer.with(port: peer.port &+ 1) }
        return (configuration.mediaPath?(peer) ?? peer, rtcp)
    }

    func makeDevice() throws -> any DuplexDevice {
        let rate = Int(session.sampleRate.rounded())
        let format = IOFormat(sampleRate: rate, ioBufferDuration: session.ioBufferDuration)
        switch configuration.audio {
        case .hardware:
            guard let deviceProvider else {
                throw CallError.media("audio is .hardware but the session's hardware opens no devices")
            }
            return try deviceProvider.openDevice(preferred: format)
        case let .device(make):
            return try make(format)
        }
    }

    /// The session's hardware, when it can open devices (ALSA can; a policy-only simulation cannot).
    var deviceProvider: (any AudioDeviceProvider)? { session.system.hardware as? any AudioDeviceProvider }

    /// Stops media and deactivates the session once no call needs it.
    func stopMedia(_ id: String) {
        guard var record = records[id] else { return }
        if let media = record.media {
            if audioCallID == id { deviceProvider?.attach(nil) }
            record.call.keep(snapshot(media))
            media.stop()
            if configuration.recordUplinkSeconds > 0 { finishedUplinks[id] = media.recordedUplink }
        }
        record.io?.end()
        record.io = nil
        record.media = nil
        record.watchdog?.cancel()
        record.watchdog = nil
        records[id] = record
        deactivateSessionIfIdle(after: id)
    }

    /// Deactivates the session (others notified) unless a call still has media (held ones
    /// included) or plays its ringback.
    func deactivateSessionIfIdle(after id: String) {
        guard session.isActive, !records.values.contains(where: { $0.media != nil || $0.ringback != nil }) else { return }
        do { try session.setActive(false, options: .notifyOthersOnDeactivation) } catch {
            logger.warning("deactivating the session after call \(id): \(error)")
        }
    }

    /// The call's audio device failed and its I/O thread stopped: open the route's device again
    /// once (a sound server that restarted), or hang up with the reason. A device that fails
    /// again within `deviceRetryWindow` of being reopened (a server that stalls) ends the call.
    func deviceFailed(_ id: String, _ error: IOError) {
        guard var record = records[id], let media = record.media else { return }
        logger.error("call \(id): the audio device failed: \(error)")
        let now = ContinuousClock.now
        if record.deviceReopenedAt.map({ now - $0 > Self.deviceRetryWindow }) ?? true {
            do {
                try media.restartAudio(on: makeDevice())
                deviceProvider?.attach(media.engine)
                record.deviceReopenedAt = now
                records[id] = record
                logger.notice("call \(id): the audio device was opened again")
                return
            } catch {
                logger.error("call \(id): cannot open the audio device again: \(error)")
            }
        }
        try? record.sip?.bye()
        end(id, .deviceFailed("\(error)"))
    }

    static let deviceRetryWindow = Duration.seconds(2)

    func end(_ id: String, _ reason: CallEndReason) {
        guard let record = records[id] else { return }
        finishTransfer(id, .failure(.invalidState("the call ended (\(reason)) before its transfer did")))
        splitConference(id)
        endRecording(id)
        endPlayback(id)
        stopRingback(id)
        stopMedia(id)
        record.call.apply(.ended(reason))
        record.ports?.release()
        if let room = record.room { Task { await room.close() } }
        records[id] = nil
        securities[id] = nil
        heldCalls.set(id, held: false)
        if audioCallID == id { audioCallID = nil }
        logger.info("call \(id) ended: \(reason)")
    }

    func sessionNotification(_ note: AudioSessionNotification) {
        switch note {
        case let .interruption(interruption):
            eventBroadcast.yield(.interruption(interruption))
            if interruption.type == .ended, interruption.options.contains(.shouldResume), let id = audioCallID,
               records[id]?.call.state == .held(.interrupted) {
                try? resumeAudio(id)
            }
        case let .routeChange(change):
            eventBroadcast.yield(.routeChanged(reason: change.reason, route: session.currentRoute))
        default:
            break
        }
    }

    /// Tells the session the call's I/O runs; if the session stops it (an interruption), the
    /// call is held.
    func beginIO(_ id: String, _ media: CallMedia) throws(AudioSessionError) -> IOActivity {
        try session.beginIO(named: "call \(id)") { [weak self, weak media] in
            media?.pauseAudio()
            if let self { Task { await self.interrupted(id) } }
        }
    }

    func snapshot(_ media: CallMedia) -> CallStatistics {
        let network = media.rtp.statistics
        let jitter = media.jitterBufferStatistics
        let voice = media.voice.statistics
        var s = CallStatistics()
        s.codec = media.rtp.configuration.codec.encodingName
        s.packetsSent = network.packetsSent
        s.packetsReceived = network.packetsReceived
        s.packetsLost = network.packetsLost
        s.jitterMs = network.jitterMs
        s.rttMs = network.rttMs
        s.packetsDropped = network.droppedTotal
        s.fecRecovered = jitter.fecRecovered
        s.framesEncodedWithFEC = network.framesEncodedWithFEC
        s.concealedMs = jitter.concealedMs
        s.concealedWithoutLossMs = jitter.concealedWithoutLossMs
        s.jitterBufferDelayMs = jitter.currentDelayMs
        s.jitterBufferTargetMs = jitter.targetDelayMs
        s.erleDB = voice.erleDB
        // The device delay stands in until the estimator locks; with no echo there is no delay to report.
        s.echoDelayMs = voice.echoPath == .absent ? nil : voice.estimatedDelayMs
        s.echoPath = "\(voice.echoPath)"
        s.driftPPM = voice.driftPPM
        s.cancellerResets = voice.cancellerResets
        s.echoMoves = voice.echoMoves
        s.processingLatencyMs = voice.addedLatencyMs
        s.codecLookaheadMs = media.codecLookaheadMs
        s.xruns = media.engine?.statistics.xruns ?? 0
        s.captureLevelDBFS = media.captureLevelDBFS
        s.playbackLevelDBFS = media.playbackLevelDBFS
        s.route = session.currentRoute.outputs.map(\.portType.rawValue).joined(separator: "+")
        s.cpuLoad = media.cpuLoad
        s.mediaEncryption = switch media.rtp.configuration.protection {
        case .clear: MediaEncryption.off.rawValue
        case .srtp: MediaEncryption.sdes.rawValue
        case .dtls: MediaEncryption.dtls.rawValue
        }
        s.srtpProfile = network.srtpProfile
        s.srtpProtected = network.srtpProtected
        s.srtpUnprotected = network.srtpUnprotected
        s.srtpAuthenticationFailures = network.srtpAuthenticationFailures
        s.srtpReplays = network.srtpReplays
        s.dtlsHandshakeMs = network.dtlsHandshakeMs
        return s
    }
}
