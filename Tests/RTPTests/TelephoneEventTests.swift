import MediaNegotiation
import SDP
import Platform
import Foundation
import Opus
import RTP
import Testing
import TestSupport
import WAV

@Suite("DTMF as RFC 4733 telephone events")
struct TelephoneEventTests {
    @Test("An event's four bytes: code, end bit, volume, duration; every keypad key maps both ways")
    func payloadFormat() throws {
        let event = TelephoneEvent(event: 11, end: true, volume: 10, duration: 4800)
        var bytes = [UInt8](repeating: 0, count: 4)
        bytes.withUnsafeMutableBytes { event.write(into: $0) }
        // RFC 4733 figure 1: event 11 (#), E set, volume 10, duration 4800 = 0x12C0.
        #expect(bytes == [11, 0x8A, 0x12, 0xC0])
        #expect(bytes.withUnsafeBytes { TelephoneEvent.parse($0) } == event)
        #expect(event.key == "#")
        for (code, key) in "0123456789*#ABCD".enumerated() {
            #expect(TelephoneEvent.event(forKey: key) == UInt8(code))
            #expect(TelephoneEvent(event: UInt8(code), duration: 0).key == key)
        }
        #expect(TelephoneEvent.event(forKey: "a") == 12)
        #expect(TelephoneEvent.event(forKey: "x") == nil)
        #expect(TelephoneEvent(event: 16, duration: 0).key == nil)  // flash: not a key
        // Anything but exactly four bytes is malformed.
        #expect([UInt8]([1, 2, 3]).withUnsafeBytes { TelephoneEvent.parse($0) } == nil)
        #expect([UInt8]([1, 2, 3, 4, 5]).withUnsafeBytes { TelephoneEvent.parse($0) } == nil)
    }

    @Test("A key replaces 100 ms of audio with updates, then its end three times, then 60 ms of audio")
    func senderSchedule() {
        let queue = TelephoneEventQueue()
        #expect(queue.push(5) && queue.push(11))
        var sender = TelephoneEventSender(frameDuration: 960)  // 20 ms frames
        var frames: [TelephoneEventSender.Packet?] = []
        for k in 0..<22 { frames.append(sender.nextFrame(timestamp: UInt32(1000 + 960 * k), queue: queue)) }
        // Key 5: frames 0-6 (five updates, the last of them the first end, two more ends).
        let first = frames[0..<7].compactMap { $0 }
        #expect(first.count == 7)
        #expect(first.map(\.event.event) == Array(repeating: 5, count: 7))
        #expect(first.map(\.timestamp) == Array(repeating: 1000, count: 7))
        #expect(first.map(\.marker) == [true, false, false, false, false, false, false])
        #expect(first.map(\.event.duration) == [960, 1920, 2880, 3840, 4800, 4800, 4800])
        #expect(first.map(\.event.end) == [false, false, false, false, true, true, true])
        // Then three frames of audio, then key # from frame 10.
        #expect(frames[7..<10].allSatisfy { $0 == nil })
        #expect(frames[10]?.event.event == 11 && frames[10]?.marker == true && frames[10]?.timestamp == UInt32(1000 + 960 * 10))
        #expect(frames[17..<22].allSatisfy { $0 == nil })
        #expect(!sender.isSending)
    }

    @Test("Each event is reported once: updates, repeated ends and late packets of an older event are not new")
    func receiverReportsOnce() {
        var receiver = TelephoneEventReceiver()
        let five = TelephoneEvent(event: 5, duration: 960)
        #expect(receiver.receive(five, timestamp: 1000, sourceGeneration: 1) == five)
        #expect(receiver.receive(TelephoneEvent(event: 5, duration: 1920), timestamp: 1000, sourceGeneration: 1) == nil)
        #expect(receiver.receive(TelephoneEvent(event: 5, end: true, duration: 4800), timestamp: 1000, sourceGeneration: 1) == nil)
        // The same key again is a new event: a new start time.
        #expect(receiver.receive(five, timestamp: 10_600, sourceGeneration: 1) != nil)
        #expect(receiver.receive(five, timestamp: 1000, sourceGeneration: 1) == nil)  // late, older
        // Across the timestamp's wrap-around, and for a new source.
        #expect(receiver.receive(five, timestamp: UInt32.max - 100, sourceGeneration: 1) == nil)
        #expect(receiver.receive(five, timestamp: 50, sourceGeneration: 2) != nil)
        #expect(receiver.receive(five, timestamp: UInt32.max - 100, sourceGeneration: 3) != nil)
        #expect(receiver.receive(five, timestamp: 500, sourceGeneration: 3) != nil)
    }

    @Test("SDP: we offer events at 48 and 8 kHz; an answer keeps the offerer's payload type, 48 kHz first, and only when offered")
    func sdpNegotiation() throws {
        let address = try SocketAddress(host: "192.0.2.1", port: 4000)
        let offer = AudioSDP.offer(address: address, sessionID: 1, telephoneEvents: AudioSDP.telephoneEventFormats)
        #expect(offer.text.contains("m=audio 4000 RTP/AVP 96 101 102"))
        #expect(offer.text.contains("a=rtpmap:101 telephone-event/48000") && offer.text.contains("a=fmtp:101 0-15"))
        #expect(offer.text.contains("a=rtpmap:102 telephone-event/8000"))
        #expect(try AudioSDP.stream(in: offer).telephoneEvents == TelephoneEventFormat(payloadType: 101, clockRate: 48000))

        func peerOffer(_ events: String, formats: String) throws -> SessionDescription {
            try SessionDescription.parse("""
                v=0\r
                o=- 1 1 IN IP4 192.0.2.9\r
                s=-\r
                c=IN IP4 192.0.2.9\r
                t=0 0\r
                m=audio 5000 RTP/AVP 111\(formats)\r
                a=rtpmap:111 opus/48000/2\r
                \(events)
                """)
        }
        // A peer offering events at 8 and 48 kHz under other numbers: 48 kHz is answered.
        let both = try peerOffer("a=rtpmap:100 telephone-event/48000\r\na=fmtp:100 0-15\r\na=rtpmap:110 telephone-event/8000\r\n",
                                 formats: " 100 110")
        let (answer, remote) = try AudioSDP.answer(both, address: address, sessionID: 2, parameters: .init())
        #expect(remote.telephoneEvents == TelephoneEventFormat(payloadType: 100, clockRate: 48000))
        #expect(answer.text.contains("m=audio 4000 RTP/AVP 111 100\r"))
        #expect(answer.text.contains("a=rtpmap:100 telephone-event/48000"))
        #expect(!answer.text.contains("telephone-event/8000"))
        let declined = try AudioSDP.answer(both, address: address, sessionID: 2, parameters: .init(), telephoneEvents: false)
        #expect(declined.remote.telephoneEvents == nil && !declined.answer.text.contains("telephone-event"))

        // baresip offers events at 8 kHz only, with Opus: answered at 8 kHz.
        let old = try peerOffer("a=rtpmap:101 telephone-event/8000\r\n", formats: " 101")
        let (answer8, remote8) = try AudioSDP.answer(old, address: address, sessionID: 3, parameters: .init())
        #expect(remote8.telephoneEvents == TelephoneEventFormat(payloadType: 101, clockRate: 8000))
        #expect(answer8.text.contains("a=rtpmap:101 telephone-event/8000"))

        // Without events in the offer, none in the answer.
        let plain = AudioSDP.offer(address: address, sessionID: 3)
        let (answer2, remote2) = try AudioSDP.answer(plain, address: address, sessionID: 4, parameters: .init())
        #expect(remote2.telephoneEvents == nil && !answer2.text.contains("telephone-event"))
    }

    @Test("At 8 kHz the events' durations count in 8 kHz units; their start stays on the stream's clock")
    func eightKilohertzDurations() {
        let queue = TelephoneEventQueue()
        _ = queue.push(1)
        var sender = TelephoneEventSender(frameDuration: 960, clockRate: 8000)
        let packets = (0..<7).compactMap { sender.nextFrame(timestamp: 48_000 + UInt32($0) * 960, queue: queue) }
        #expect(packets.map(\.event.duration) == [160, 320, 480, 640, 800, 800, 800])
        #expect(packets.allSatisfy { $0.timestamp == 48_000 })
    }

    /// The send and receive paths of a call with DTMF, without threads: what the sender sends
    /// goes through the validator and the ring into a jitter buffer.
    @Test("Events travel in the stream: accepted, kept out of the decoder, no loss counted, nothing allocated")
    func eventsThroughTheReceivePath() throws {
        #expect(AllocationCounter.isActive)
        let speech = try Fixtures.speech(Fixtures.englishFemale).int16Samples
        let sink = try UDPSocket(bindingTo: SocketAddress(host: "127.0.0.1", port: 0))
        let state = RTPSessionState()
        var sender = try SendPathTests.sender(to: sink, state: state)
        let keys = TelephoneEventQueue()
        sender.sendTelephoneEvents(from: keys, format: TelephoneEventFormat(payloadType: 101, clockRate: 48000))
        let ring = RTPPacketRing(capacity: 64)
        var buffer = JitterBuffer(decoder: try OpusDecoder(sampleRate: 16000))
        var validation = RTPSourceValidator.Configuration()
        validation.telephoneEventPayloadType = 101
        var validator = RTPSourceValidator(configuration: validation)
        var receiver = TelephoneEventReceiver()
        var heard: [Character] = []
        let receive = UnsafeMutableRawBufferPointer.allocate(byteCount: 2048, alignment: 16)
        let out = UnsafeMutableBufferPointer<Int16>.allocate(capacity: 320)
        defer { receive.deallocate(); out.deallocate() }

        var ioAllocations: UInt64 = 0
        for k in 0..<300 {
            // A key in the warm-up too: a debug build instantiates some type metadata on first use.
            if k == 10 { _ = keys.push(TelephoneEvent.event(forKey: "5")!) }
            if k == 100 { for key in "1#9" { _ = keys.push(TelephoneEvent.event(forKey: key)!) } }
            let now = UInt64(k) * 20_000_000 + 1_000_000_000
            let c0 = AllocationCounter.thisThread
            speech.withUnsafeBufferPointer { pcm in
                _ = sender.send(UnsafeBufferPointer(rebasing: pcm[(k * 320)..<((k + 1) * 320)]), now: now)
            }
            let c1 = AllocationCounter.thisThread
            SendPathTests.deliver(from: sink, into: receive, through: &validator, to: ring, now: now) { packet, body in
                // What the network thread reports (RTPSession's loop).
                if packet.isTelephoneEvent, let event = TelephoneEvent.parse(body),
                   let new = receiver.receive(event, timestamp: packet.timestamp, sourceGeneration: packet.sourceGeneration),
                   let key = new.key {
                    heard.append(key)
                }
            }
            let c2 = AllocationCounter.thisThread
            buffer.receive(from: ring)
            buffer.pull(into: out, now: now + 30_000_000)
            let c3 = AllocationCounter.thisThread
            if k >= 50 { ioAllocations += (c1 - c0) + (c3 - c2) }
        }
        #expect(heard == ["5", "1", "#", "9"])
        #expect(validator.dropped(.wrongPayloadType) == 0 && validator.dropped(.malformed) == 0)
        let stats = buffer.statistics
        #expect(stats.telephoneEvents == 28)  // four keys, seven packets each
        #expect(stats.lost == 0 && stats.undecodable == 0)
        // The 7 frames of each key play as a pause (comfort noise), not as concealed loss.
        #expect(stats.comfortNoiseMs == 4 * 7 * 20)
        #expect(ioAllocations == 0)
        // Four keys of 7 frames each took the place of 28 audio frames; every frame sent a packet.
        #expect(state.snapshot.packetsSent == 300)
    }

    @Test("Without negotiation, or with a bad key, sendDTMF queues nothing and says why")
    func sendDTMFRefusesBadInput() throws {
        let local = try SocketAddress(host: "127.0.0.1", port: 0)
        let plain = try RTPSession(configuration: RTPSessionConfiguration(localAddress: local, remoteAddress: local))
        #expect(throws: DTMFError.notNegotiated) { try plain.sendDTMF("1") }
        var configuration = RTPSessionConfiguration(localAddress: local, remoteAddress: local)
        configuration.telephoneEvents = TelephoneEventFormat(payloadType: 101, clockRate: 48000)
        let session = try RTPSession(configuration: configuration)
        #expect(throws: DTMFError.invalidKey("x")) { try session.sendDTMF("12x") }
        #expect(throws: DTMFError.queueFull) { try session.sendDTMF(String(repeating: "1", count: 65)) }
        try session.sendDTMF(String(repeating: "1", count: 64))
        #expect(throws: DTMFError.queueFull) { try session.sendDTMF("2") }
    }
}
