import Platform
import AudioAnalysis
import Opus
import RTP
import Testing
import TestSupport
import WAV

@Suite("Send path and real-time safety")
struct SendPathTests {
    @Test("Expected loss follows receiver reports: 0 without loss, a tenth of it (at least 1 %) with loss")
    func expectedLoss() {
        #expect(ExpectedLossEstimator.setting(forLoss: 0) == 0)
        #expect(ExpectedLossEstimator.setting(forLoss: 0.004) == 0)
        #expect(ExpectedLossEstimator.setting(forLoss: 0.05) == 1)
        #expect(ExpectedLossEstimator.setting(forLoss: 0.10) == 1)
        #expect(ExpectedLossEstimator.setting(forLoss: 0.25) == 3)
        #expect(ExpectedLossEstimator.setting(forLoss: 1) == 10)
        var e = ExpectedLossEstimator()
        #expect(e.update(fractionLost: 26) == 1)  // 10 %: the first report is taken as it is
        #expect(e.smoothed == 26.0 / 256)
        #expect(e.update(fractionLost: 0) == 1)  // averaged: 5 %
        #expect(e.update(fractionLost: 0) == 1)  // 2.5 %
        #expect(e.update(fractionLost: 0) == 1)  // 1.3 %
        #expect(e.update(fractionLost: 0) == 1)  // 0.6 %
        #expect(e.update(fractionLost: 0) == 0)  // 0.3 %
    }

    @Test("The encoder applies the call configuration and reports' loss")
    func encoderSettings() throws {
        var encoder = try RTPAudioEncoder(configuration: OpusCallConfiguration(), packetizer: RTPPacketizer(payloadType: 96))
        #expect(encoder.expectedLossPercent == 1 && encoder.codesFEC)
        encoder.receiverReported(fractionLost: 0)
        #expect(encoder.expectedLossPercent == 0 && !encoder.codesFEC)
        encoder.receiverReported(fractionLost: 128)
        #expect(encoder.expectedLossPercent == 3 && encoder.codesFEC)  // 25 % smoothed from 0 and 50 %
        var noFEC = OpusCallConfiguration()
        noFEC.inbandFEC = false
        var plain = try RTPAudioEncoder(configuration: noFEC, packetizer: RTPPacketizer(payloadType: 96))
        plain.receiverReported(fractionLost: 128)
        #expect(plain.expectedLossPercent == 1 && !plain.codesFEC)  // unchanged: no FEC to tune
    }

    @Test("The call configuration keeps RTP at 48 kHz whatever the codec's rate", arguments: [8000, 16000, 24000, 48000])
    func rtpClock(rate: Int) throws {
        for ms in OpusCallConfiguration.frameDurationsMs {
            let config = OpusCallConfiguration(sampleRate: rate, frameMilliseconds: ms)
            #expect(config.timestampIncrement == 48 * ms)
            #expect(config.framesPerPacket == rate * ms / 1000)
            var encoder = try RTPAudioEncoder(configuration: config, packetizer: RTPPacketizer(payloadType: 96, timestamp: 0))
            var datagram = [UInt8](repeating: 0, count: RTPAudioEncoder.maxDatagramSize)
            let pcm = [Int16](repeating: 0, count: config.framesPerPacket)
            let n = try pcm.withUnsafeBufferPointer { p in try datagram.withUnsafeMutableBytes { try encoder.encode(p, into: $0) } }
            let packet = try RTPPacket.parse(Array(datagram[0..<n]))
            #expect(Array(datagram[packet.payload]).withUnsafeBytes { OpusPayload.duration($0) } == 48 * ms)
            #expect(encoder.packetizer.timestamp == UInt32(48 * ms))
        }
        #expect(throws: OpusError.self) { try OpusCallConfiguration(frameMilliseconds: 5).validate() }
    }

    /// A call's send path (default Opus settings, payload type 96) towards `sink`.
    static func sender(to sink: UDPSocket, state: RTPSessionState) throws -> RTPSender {
        RTPSender(encoder: try RTPAudioEncoder(configuration: OpusCallConfiguration(), packetizer: RTPPacketizer(payloadType: 96)),
                  socket: try UDPSocket(bindingTo: SocketAddress(host: "127.0.0.1", port: 0)),
                  destination: sink.localAddress, state: state)
    }

    /// The network thread's work on this thread: every datagram waiting at `sink` through the
    /// validator into the ring; `accepted` sees each packet passed on, with its payload.
    static func deliver(from sink: UDPSocket, into buffer: UnsafeMutableRawBufferPointer, through validator: inout RTPSourceValidator,
                        to ring: RTPPacketRing, now: UInt64,
                        accepted: (RTPReceivedPacket, UnsafeRawBufferPointer) -> Void = { _, _ in }) {
        while case let .datagram(length, source, _) = sink.receiveNow(into: buffer) {
            let datagram = UnsafeRawBufferPointer(rebasing: buffer[0..<length])
            guard case let .accept(packet, payload) = validator.validate(datagram, from: source, arrival: now) else { continue }
            let body = UnsafeRawBufferPointer(rebasing: datagram[payload])
            accepted(packet, body)
            ring.push(packet, payload: body)
        }
    }

    @Test("Receive and send paths do not allocate once running")
    func noAllocations() throws {
        #expect(AllocationCounter.isActive)
        let speech = try Fixtures.speech(Fixtures.englishFemale).int16Samples
        let sink = try UDPSocket(bindingTo: SocketAddress(host: "127.0.0.1", port: 0))
        let state = RTPSessionState()
        var sender = try Self.sender(to: sink, state: state)
        let ring = RTPPacketRing(capacity: 64)
        let monitor = JitterBufferMonitor()
        var buffer = JitterBuffer(decoder: try OpusDecoder(sampleRate: 16000), monitor: monitor)
        var validator = RTPSourceValidator()
        let receive = UnsafeMutableRawBufferPointer.allocate(byteCount: 2048, alignment: 16)
        let out = UnsafeMutableBufferPointer<Int16>.allocate(capacity: 320)
        defer { receive.deallocate(); out.deallocate() }

        var sendAllocations: UInt64 = 0, receiveAllocations: UInt64 = 0
        func cycle(_ k: Int, measure: Bool) {
            let now = UInt64(k) * 20_000_000 + 1_000_000_000
            let c0 = AllocationCounter.thisThread
            speech.withUnsafeBufferPointer { pcm in
                _ = sender.send(UnsafeBufferPointer(rebasing: pcm[(k * 320)..<((k + 1) * 320)]), now: now)
            }
            let c1 = AllocationCounter.thisThread
            // The network thread's part, here on the same thread (not measured: it may allocate).
            Self.deliver(from: sink, into: receive, through: &validator, to: ring, now: now)
            let c2 = AllocationCounter.thisThread
            buffer.receive(from: ring)
            buffer.pull(into: out, now: now + 30_000_000)
            let c3 = AllocationCounter.thisThread
            if measure {
                sendAllocations += c1 - c0
                receiveAllocations += c3 - c2
            }
        }
        for k in 0..<50 { cycle(k, measure: false) }  // warm up: first packets, lazy state
        for k in 50..<400 { cycle(k, measure: true) }
        #expect(receiveAllocations == 0)
        #expect(sendAllocations == 0)
        #expect(monitor.snapshot.packetsInserted > 300)
        #expect(state.snapshot.packetsSent == 400)
        // No receiver report came, so every frame was coded with FEC, as a call's first seconds are.
        #expect(state.snapshot.framesEncoded == 400 && state.snapshot.framesEncodedWithFEC == 400)
    }

    @Test("Periods that are not codec frames: every whole frame is sent, in order, with the audio it holds")
    func periodsIntoCodecFrames() throws {
        let sink = try UDPSocket(bindingTo: SocketAddress(host: "127.0.0.1", port: 0))
        let state = RTPSessionState()
        var sender = try Self.sender(to: sink, state: state)
        // 15 ms periods against 20 ms codec frames (320 samples at 16 kHz): 4 periods, 3 frames.
        let tone = (0..<(240 * 41)).map { Int16(truncatingIfNeeded: ($0 % 37) * 400 - 7200) }
        var completed = 0
        for k in 0..<41 {
            tone.withUnsafeBufferPointer { pcm in
                completed += sender.send(period: UnsafeBufferPointer(rebasing: pcm[(k * 240)..<((k + 1) * 240)]),
                                         now: UInt64(k) * 15_000_000)
            }
        }
        // 41 periods: 30 frames sent, and 240 samples held for the next one.
        #expect(completed == 30)
        #expect(state.snapshot.packetsSent == 30)
        // A resumed stream starts a new frame: the 240 samples held are dropped, not sent late
        // (kept, the next 80 samples would complete a frame).
        sender.discardPartialFrame()
        tone.withUnsafeBufferPointer { pcm in
            #expect(sender.send(period: UnsafeBufferPointer(rebasing: pcm[0..<80]), now: 0) == 0)
            #expect(sender.send(period: UnsafeBufferPointer(rebasing: pcm[80..<320]), now: 0) == 1)
        }
        // Every frame went out, one packet each, in order.
        let receive = UnsafeMutableRawBufferPointer.allocate(byteCount: 2048, alignment: 16)
        defer { receive.deallocate() }
        var sequence: [UInt16] = []
        while case let .datagram(length, _, _) = sink.receiveNow(into: receive) {
            sequence.append(try RTPPacket.parse(Array(receive[0..<length])).header.sequenceNumber)
        }
        #expect(sequence.count == 31)
        #expect(zip(sequence, sequence.dropFirst()).allSatisfy { $1 == $0 &+ 1 })
    }

    @Test("A paused sender sends nothing and codes nothing; after it, the timestamp has moved on and the marker is set")
    func pausedSenderSkipsFrames() throws {
        let sink = try UDPSocket(bindingTo: SocketAddress(host: "127.0.0.1", port: 0))
        let state = RTPSessionState()
        var sender = try Self.sender(to: sink, state: state)
        let tone = Tone.sine(frequency: 440, sampleRate: 16000, seconds: 1, amplitude: 0.2).map { Int16($0 * 32767) }
        var outcomes: [RTPSendOutcome] = []
        for k in 0..<15 {
            state.setSending(!(5..<10).contains(k))  // frames 5 to 9: the peer holds the call
            tone.withUnsafeBufferPointer { pcm in
                outcomes.append(sender.send(UnsafeBufferPointer(rebasing: pcm[(k * 320)..<((k + 1) * 320)]), now: UInt64(k) * 20_000_000))
            }
        }
        #expect(outcomes[5..<10].allSatisfy { $0 == .paused })
        #expect(outcomes[0..<5].allSatisfy { if case .sent = $0 { true } else { false } })
        #expect(outcomes[10..<15].allSatisfy { if case .sent = $0 { true } else { false } })
        #expect(state.snapshot.packetsSent == 10 && state.snapshot.framesEncoded == 10)
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 2048, alignment: 16)
        defer { buffer.deallocate() }
        var packets: [RTPPacket] = []
        while case let .datagram(length, _, _) = sink.receiveNow(into: buffer) {
            packets.append(try RTPPacket.parse(UnsafeRawBufferPointer(rebasing: buffer[0..<length])))
        }
        #expect(packets.count == 10)
        // Sequence numbers run on without a gap (nothing was lost); the timestamp jumps by the
        // five paused frames (960 units each at 48 kHz), and that packet starts a talk spurt.
        let headers = packets.map(\.header)
        #expect(headers[5].sequenceNumber == headers[4].sequenceNumber &+ 1)
        #expect(headers[5].timestamp == headers[4].timestamp &+ 6 * 960)
        #expect(headers[5].marker && !headers[4].marker && !headers[6].marker)
    }

    @Test("Audio stopped for a while (our hold): the next packet's timestamp has moved on by the gap, with the marker")
    func stoppedAudioMovesTheClockOn() throws {
        let sink = try UDPSocket(bindingTo: SocketAddress(host: "127.0.0.1", port: 0))
        var sender = try Self.sender(to: sink, state: RTPSessionState())
        let tone = Tone.sine(frequency: 440, sampleRate: 16000, seconds: 0.1, amplitude: 0.2).map { Int16($0 * 32767) }
        tone.withUnsafeBufferPointer { pcm in _ = sender.send(UnsafeBufferPointer(rebasing: pcm[0..<320]), now: 0) }
        sender.skip(nanoseconds: 3_010_000_000)  // 3.01 s: 150 whole frames
        tone.withUnsafeBufferPointer { pcm in _ = sender.send(UnsafeBufferPointer(rebasing: pcm[320..<640]), now: 3_030_000_000) }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 2048, alignment: 16)
        defer { buffer.deallocate() }
        var headers: [RTPHeader] = []
        while case let .datagram(length, _, _) = sink.receiveNow(into: buffer) {
            headers.append(try RTPPacket.parse(UnsafeRawBufferPointer(rebasing: buffer[0..<length])).header)
        }
        #expect(headers.count == 2)
        #expect(headers.last?.timestamp == headers.first.map { $0.timestamp &+ 151 * 960 })
        #expect(headers.last?.sequenceNumber == headers.first.map { $0.sequenceNumber &+ 1 })
        #expect(headers.last?.marker == true)
    }

    @Test("After retarget the sender's next packet goes to the new address, with no gap in sequence")
    func retargetMovesTheSendPath() throws {
        let first = try UDPSocket(bindingTo: SocketAddress(host: "127.0.0.1", port: 0))
        let second = try UDPSocket(bindingTo: SocketAddress(host: "127.0.0.1", port: 0))
        let session = try RTPSession(configuration: RTPSessionConfiguration(localAddress: SocketAddress(host: "127.0.0.1", port: 0),
                                                                            remoteAddress: first.localAddress))
        var sender = try session.makeSender()
        let tone = Tone.sine(frequency: 440, sampleRate: 16000, seconds: 0.2, amplitude: 0.2).map { Int16($0 * 32767) }
        func send(_ k: Int) {
            tone.withUnsafeBufferPointer { _ = sender.send(UnsafeBufferPointer(rebasing: $0[(k * 320)..<((k + 1) * 320)]), now: UInt64(k) * 20_000_000) }
        }
        for k in 0..<5 { send(k) }
        session.retarget(rtp: second.localAddress, rtcp: nil)
        for k in 5..<10 { send(k) }
        func sequences(at socket: UDPSocket) -> [UInt16] {
            let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 2048, alignment: 16)
            defer { buffer.deallocate() }
            var numbers: [UInt16] = []
            while case let .datagram(length, _, _) = socket.receiveNow(into: buffer) {
                if let packet = try? RTPPacket.parse(UnsafeRawBufferPointer(rebasing: buffer[0..<length])) {
                    numbers.append(packet.header.sequenceNumber)
                }
            }
            return numbers
        }
        let before = sequences(at: first), after = sequences(at: second)
        #expect(before.count == 5 && after.count == 5)
        #expect(after.first == before.last.map { $0 &+ 1 })
    }
}
