import Janus
import Logging
import Opus
import MediaNegotiation
import Platform
import RTP

/// Conference legs: a call whose other end is a Janus AudioBridge room, joined as a plain-RTP
/// participant. The leg has a call's life, media and statistics; it takes the audio as a call
/// does, and a hold mutes it in the room.
extension CallController {
    /// Joins `room`: a Janus session, the AudioBridge plugin, the room (created if asked and
    /// absent), then media to the RTP address Janus gives, from the port we told it (Janus
    /// connects its socket there, and sends nothing before our first packet). Returns the
    /// call, active; it ends with ``Call/hangUp()`` (we leave the room), or with a reason when
    /// the room is destroyed or Janus goes away.
    ///
    /// - Throws: ``CallError/conference(_:)`` when Janus cannot be reached, the room does not
    ///   exist or refuses plain-RTP participants; ``CallError/busy``; a media or session error
    ///   (the room is left again). Nothing stays running after a throw.
    public func join(_ room: ConferenceRoom) async throws(CallError) -> Call {
        guard records.count < configuration.maximumCalls else { throw .busy }
        let client: AudioBridgeClient
        do { client = try await AudioBridgeClient.connect(to: room.server) } catch { throw .conference("\(error)") }
        do {
            return try await join(room, with: client)
        } catch {
            await client.close()
            throw error
        }
    }

    private func join(_ room: ConferenceRoom, with client: AudioBridgeClient) async throws(CallError) -> Call {
        do {
            if room.createsRoom, try await !client.exists(room: room.room) {
                try await client.create(room: room.room, description: "CallAudio room \(room.room)")
            }
        } catch .audioBridge(code: AudioBridgeClient.roomExists, _) {
            // Another participant created it between our question and our request: it is there.
        } catch { throw .conference("\(error)") }
        let ports = try PortReservation(host: Self.localHost(toward: client.serverHost))
        let joined: AudioBridgeClient.Joined
        do {
            joined = try await client.join(room: room.room, display: room.display, host: ports.rtp.host, port: ports.rtp.port,
                                           fec: configuration.codec.inbandFEC, pin: room.pin, bitrate: configuration.codec.bitrate)
            if room.expectedLoss > 0 { try await client.configure(expectedLoss: room.expectedLoss) }
        } catch {
            ports.release()
            throw .conference("\(error)")
        }
        let leg = RoomLeg(client: client, room: room.room, joined: joined)
        let janus = (try? SocketAddress(host: joined.rtpHost, port: joined.rtpPort)) ?? ports.rtp
        let call = Call(id: "room-\(room.room)-\(joined.participantID)", direction: .outgoing,
                        remoteURI: "\(room.server)#room=\(room.room)", controller: self, remoteAddress: janus, transport: "janus",
                        account: configuration.userName)
        call.apply(.dial)
        records[call.id] = CallRecord(call: call, signalling: .room(leg), ports: ports)
        let remote = AudioStreamDescription(
            address: joined.rtpHost, port: Int(joined.rtpPort), payloadType: joined.payloadType,
            parameters: OpusFormatParameters(useInbandFEC: true), ptime: configuration.codec.frameMilliseconds)
        do {
            try startMedia(call.id, remote: remote, security: .clear)
        } catch {
            end(call.id, .failed("\(error)"))
            throw error
        }
        call.apply(.answered)
        follow(leg, call.id)
        logger.info("call \(call.id): joined room \(room.room) on \(room.server) as participant \(joined.participantID)")
        return call
    }

    /// Passes the room's events on, and ends the call when the room or Janus goes away.
    private func follow(_ leg: RoomLeg, _ id: String) {
        let events = leg.client.events
        Task { [weak self] in
            for await event in events {
                guard let self else { return }
                switch event {
                case .roomDestroyed: await self.end(id, .failed("the conference room was destroyed"))
                case let .serverGone(why): await self.end(id, .failed("the conference server went away: \(why)"))
                default: await self.eventBroadcast.yield(.room(callID: id, event))
                }
            }
        }
    }

    /// The participants of the room call `call` is in, ourselves included.
    func participants(of call: Call) async throws(CallError) -> [AudioBridgeParticipant] {
        guard let leg = records[call.id]?.room else { throw .invalidState("call \(call.id) is not in a conference room") }
        do { return try await leg.client.participants(room: leg.room) } catch { throw .conference("\(error)") }
    }

    /// Our address toward Janus's host: where its RTP comes back to.
    static func localHost(toward host: String) throws(CallError) -> String {
        guard let server = try? SocketAddress(host: host, port: 9), let local = UDPSocket.localAddress(toward: server) else {
            throw .conference("cannot find a route to the conference server \(host)")
        }
        return local.host
    }
}
