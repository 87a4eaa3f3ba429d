import Platform
import SRTP

/// The SRTP contexts a session starts with: for SDES both, for DTLS none until the handshake
/// gives the keys. Both live on the network thread: it unprotects what arrives, and protects
/// our RTP (queued by the sender) and our RTCP with one outbound session.
struct SessionKeys {
    let outbound: SRTPStream?
    let inbound: SRTPStream?
    /// The handshake, for DTLS-SRTP.
    let dtls: DTLSMediaHandshake?

    init(_ protection: MediaProtection, ssrc: UInt32) throws(RTPSessionError) {
        switch protection {
        case .clear:
            (outbound, inbound, dtls) = (nil, nil, nil)
        case let .srtp(local, remote):
            do {
                outbound = try SRTPStream(key: local, direction: .outbound, ssrc: ssrc)
                inbound = try SRTPStream(key: remote, direction: .inbound)
            } catch {
                throw .srtp(error)
            }
            dtls = nil
        case let .dtls(setup):
            (outbound, inbound) = (nil, nil)
            do { dtls = try DTLSMediaHandshake(setup) } catch { throw .dtls(error) }
        }
    }
}

extension NetworkLoop {
    /// Unprotects the datagram of `length` bytes in ``buffer`` in place; nil (counted) when it
    /// does not authenticate, replays, or comes before the keys. DTLS records go to the handshake.
    func unprotect(_ length: Int, isRTCP: Bool, truncated: Bool, from source: SocketAddress) -> Int? {
        guard !truncated else {
            state.add(.srtpDropped)
            return nil
        }
        if !isRTCP, handleDTLS(length, from: source) { return nil }
        guard let inbound else {
            state.add(.srtpDropped)
            return nil
        }
        do throws(SRTPError) {
            let plain = isRTCP ? try inbound.unprotectRTCP(buffer, length: length) : try inbound.unprotectRTP(buffer, length: length)
            state.add(.srtpUnprotected)
            return plain
        } catch {
            if error == .authenticationFailed {
                state.add(.srtpAuthenticationFailures)
            } else if error.isReplay {
                state.add(.srtpReplays)
            } else {
                state.add(.srtpDropped)
            }
            return nil
        }
    }

    /// Protects and sends what the sender queued (nothing goes before the keys exist).
    func sendQueued() {
        guard let outgoing else { return }
        while outgoing.pop({ slot, length, destination in
            guard let outbound, let protected = try? outbound.protectRTP(slot, length: length) else {
                state.add(.sendFailures)
                return
            }
            state.add(.srtpProtected)
            if rtp.send(UnsafeRawBufferPointer(rebasing: slot[0..<protected]), to: destination) != .sent { state.add(.sendFailures) }
        }) {}
    }

    /// Sends a compound RTCP packet, protected when the session encrypts; false when it did not go.
    func sendRTCP(_ bytes: [UInt8]) -> Bool {
        let socket = rtcp ?? rtp
        guard encrypted else { return socket.send(bytes, to: rtcpDestination) == .sent }
        guard let outbound, bytes.count + SRTPProfile.maximumTrailerLength <= sendBuffer.count else { return false }
        sendBuffer.copyBytes(from: bytes)
        guard let length = try? outbound.protectRTCP(sendBuffer, length: bytes.count) else { return false }
        state.add(.srtpProtected)
        return socket.send(UnsafeRawBufferPointer(rebasing: sendBuffer[0..<length]), to: rtcpDestination) == .sent
    }
}
