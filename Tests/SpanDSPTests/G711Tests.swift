import SpanDSP
import Testing

@Suite("G.711")
struct G711Tests {
    @Test("A sine at -10 dBFS survives a round trip with SNR >= 33 dB",
          arguments: [G711Law.mulaw, .alaw], [1000.0, 1020.0])
    func sineRoundTrip(law: G711Law, frequency: Double) {
        // 1 s; at 1000 Hz the tone repeats every 8 samples, so it meets only a few codes:
        // 1020 Hz (the telephony test tone) walks through all of them.
        let tone = Signals.sine(frequency: frequency, sampleRate: G711.sampleRate, count: G711.sampleRate, dBFS: -10, phase: 0.3)
        let bytes = G711.encode(tone, law: law)
        #expect(bytes.count == tone.count)
        let decoded = G711.decode(bytes, law: law)
        let snr = Signals.snr(reference: tone, test: decoded)
        print("G.711 \(law) \(frequency) Hz at -10 dBFS: SNR \(snr) dB")
        #expect(snr >= 33, "SNR \(snr) dB")
    }

    @Test("Known code points are ITU-T G.711's")
    func codePoints() {
        // Zero: μ-law's positive zero 0xFF; A-law's smallest positive step 0xD5 (0x80 with the
        // even bits inverted).
        #expect(G711.encode(0, law: .mulaw) == 0xFF)
        #expect(G711.encode(0, law: .alaw) == 0xD5)
        // Full scale: μ-law's outermost codes 0x80/0x00 are ±8031 in 14-bit units, A-law's
        // 0xAA/0x2A ±4032 in 13-bit units: x4 and x8 in 16-bit samples.
        #expect(G711.encode(.max, law: .mulaw) == 0x80)
        #expect(G711.encode(.min, law: .mulaw) == 0x00)
        #expect(G711.encode(.max, law: .alaw) == 0xAA)
        #expect(G711.encode(.min, law: .alaw) == 0x2A)
        #expect(G711.decode(0x80, law: .mulaw) == 32124)
        #expect(G711.decode(0x00, law: .mulaw) == -32124)
        #expect(G711.decode(0xAA, law: .alaw) == 32256)
        #expect(G711.decode(0x2A, law: .alaw) == -32256)
        // μ-law has two zeros (0xFF and 0x7F); A-law has none, its smallest levels are ±1 (13-bit).
        #expect(G711.decode(0xFF, law: .mulaw) == 0)
        #expect(G711.decode(0x7F, law: .mulaw) == 0)
        #expect(G711.decode(0xD5, law: .alaw) == 8)
        #expect(G711.decode(0x55, law: .alaw) == -8)
    }

    @Test("Every code decodes to ITU-T G.711's level (tables 2a and 2b)", arguments: [G711Law.mulaw, .alaw])
    func everyLevel(law: G711Law) {
        var wrong: [UInt8: Int16] = [:]
        for code in UInt8.min...UInt8.max where G711.decode(code, law: law) != Self.ituLevel(code, law) {
            wrong[code] = G711.decode(code, law: law)
        }
        #expect(wrong.isEmpty, "codes off ITU's level: \(wrong.sorted { $0.key < $1.key })")
    }

    @Test("Every 16-bit sample in range encodes to the level nearest it (within half a step)",
          arguments: [G711Law.mulaw, .alaw])
    func quantisationError(law: G711Law) {
        // μ-law's outermost level, 32124, is the middle of an interval ending at 32635: above
        // that it clips. A-law's outermost interval ends at full scale.
        let top = law == .mulaw ? 32635 : 32767
        var worst = (sample: 0, excess: Int.min)
        for sample in -top...top {
            let code = G711.encode(Int16(sample), law: law)
            let error = abs(Int(G711.decode(code, law: law)) - sample)
            // A-law's encoder maps a negative x into the interval of |x| - 1 (spandsp's
            // `-linear - 1`), so a negative sample may sit one past the half step.
            let excess = error - Self.step(code, law) / 2 - (law == .alaw && sample < 0 ? 1 : 0)
            if excess > worst.excess { worst = (sample, excess) }
        }
        #expect(worst.excess <= 0, "sample \(worst.sample) is \(worst.excess) past half a step from its level")
    }

    /// The decoded level of `code` by G.711's tables, in 16-bit units: μ-law (after inverting
    /// every bit) is sign, segment e, step m, with magnitude ((2m + 33) << e) - 33 in 14-bit
    /// units; A-law (after inverting the even bits) is 2m + 1 in segment 0 and
    /// (2m + 33) << (e - 1) above, in 13-bit units, with the sign bit set for positive.
    static func ituLevel(_ code: UInt8, _ law: G711Law) -> Int16 {
        let c = law == .mulaw ? ~code : code ^ 0x55
        let e = Int(c >> 4) & 7, m = Int(c & 0x0F)
        switch law {
        case .mulaw:
            let magnitude = 4 * (((2 * m + 33) << e) - 33)
            return Int16(c & 0x80 != 0 ? -magnitude : magnitude)
        case .alaw:
            let magnitude = 8 * (e == 0 ? 2 * m + 1 : (2 * m + 33) << (e - 1))
            return Int16(c & 0x80 != 0 ? magnitude : -magnitude)
        }
    }

    /// The width of the interval `code` stands for, in 16-bit units.
    static func step(_ code: UInt8, _ law: G711Law) -> Int {
        let e = Int((law == .mulaw ? ~code : code ^ 0x55) >> 4) & 7
        return law == .mulaw ? 8 << e : (e == 0 ? 16 : 16 << (e - 1))
    }

    @Test("Every code decodes and re-encodes to itself, but μ-law's negative zero", arguments: [G711Law.mulaw, .alaw])
    func everyCodeRoundTrips(law: G711Law) {
        var changed: [UInt8: UInt8] = [:]
        for code in UInt8.min...UInt8.max {
            let again = G711.encode(G711.decode(code, law: law), law: law)
            if again != code { changed[code] = again }
        }
        // 0x7F (negative zero) decodes to 0, which encodes as the positive zero 0xFF.
        #expect(changed == (law == .mulaw ? [0x7F: 0xFF] : [:]))
    }
}
