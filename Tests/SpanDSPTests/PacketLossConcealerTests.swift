import SpanDSP
import Testing

@Suite("Packet loss concealment")
struct PacketLossConcealerTests {
    static let frame = 160  // 20 ms at 8 kHz

    /// A concealer fed `history` 20 ms frames of `tone`, and the frames concealed after them.
    static func conceal(_ tone: [Int16], history: Int, lost: Int) throws -> [[Int16]] {
        var plc = try PacketLossConcealer()
        for k in 0..<history {
            var f = Array(tone[(k * frame)..<((k + 1) * frame)])
            plc.received(&f)
            #expect(f == Array(tone[(k * frame)..<((k + 1) * frame)]), "a frame without a loss before it is left alone")
        }
        return (0..<lost).map { _ in plc.conceal(count: frame) }
    }

    @Test("20 ms lost after 200 ms of a 400 Hz tone: the tone continues, correlation >= 0.8, level within 3 dB")
    func continuesTone() throws {
        let tone = Signals.sine(frequency: 400, sampleRate: PacketLossConcealer.sampleRate, count: 8000, dBFS: -10)
        let concealed = try Self.conceal(tone, history: 10, lost: 1)[0]
        let truth = Array(tone[1600..<1760])
        let correlation = Signals.correlation(concealed, truth)
        let level = Signals.levelDB(concealed, relativeTo: truth)
        print("PLC first 20 ms: correlation \(correlation), level \(level) dB")
        #expect(correlation >= 0.8, "correlation \(correlation)")
        #expect(abs(level) <= 3, "level \(level) dB")
    }

    @Test("A long loss fades linearly to silence at 50 ms: -7.6 dB in the second 20 ms, silent from 50 ms")
    func fadesOut() throws {
        let tone = Signals.sine(frequency: 400, sampleRate: PacketLossConcealer.sampleRate, count: 8000, dBFS: -10)
        let frames = try Self.conceal(tone, history: 10, lost: 4)
        let truth = Array(tone[1600..<1760])
        let levels = frames.map { Signals.levelDB($0, relativeTo: truth) }
        print("PLC levels per 20 ms of loss: \(levels) dB")
        // spandsp's gain falls by 0.0025 a sample from the first concealed sample after its
        // blend: about 1 to 0.6 over the first 20 ms, 0.6 to 0.2 over the second (an RMS of
        // 0.42, -7.6 dB), 0.2 to 0 over the first 10 ms of the third.
        #expect(levels[1] < levels[0] - 4 && abs(levels[1] - -7.6) <= 1, "second 20 ms at \(levels[1]) dB")
        let loss = frames.joined().map { $0 }
        let sounding = loss.lastIndex { $0 != 0 } ?? 0
        #expect((380..<PacketLossConcealer.fadeOutSamples).contains(sounding), "last non-zero sample \(sounding)")
        // After 60 ms of loss, nothing: the fourth frame is exactly silence.
        #expect(frames[3].allSatisfy { $0 == 0 })
    }

    @Test("The first frame after a loss is blended into the synthetic signal over a quarter pitch period")
    func blendsOnResume() throws {
        let tone = Signals.sine(frequency: 400, sampleRate: PacketLossConcealer.sampleRate, count: 8000, dBFS: -10)
        var plc = try PacketLossConcealer()
        for k in 0..<10 {
            var f = Array(tone[(k * Self.frame)..<((k + 1) * Self.frame)])
            plc.received(&f)
        }
        _ = plc.conceal(count: Self.frame)
        let arriving = Array(tone[1760..<1920])
        var f = arriving
        plc.received(&f)
        let changed = f.indices.filter { f[$0] != arriving[$0] }
        // The tone's period is 20 samples; spandsp's pitch search spans 40 to 120 samples, so it
        // finds two periods (40), and blends 40 / 4 = 10 samples.
        #expect(!changed.isEmpty && changed.allSatisfy { $0 < 10 }, "samples changed: \(changed)")
    }

    @Test("With no history, concealment is silence")
    func silentWithoutHistory() throws {
        var plc = try PacketLossConcealer()
        #expect(plc.conceal(count: Self.frame).allSatisfy { $0 == 0 })
    }
}
