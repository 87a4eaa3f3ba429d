import Platform
import RTP
import Testing

@Suite("Reception statistics: RFC 3550 A.1, A.3, A.8 and round-trip time")
struct ReceptionStatisticsTests {
    // (`#expect` cannot call a mutating method itself.)
    func update(_ s: inout RTPSequenceState, _ sequence: UInt16) -> Bool { s.update(sequence) }
    func fraction(_ s: inout RTPSequenceState) -> UInt8 { s.takeFractionLost() }

    @Test("A.1: a new source is valid after two packets in sequence")
    func probation() {
        var s = RTPSequenceState(firstSequence: 100)
        #expect(!update(&s, 100))
        #expect(update(&s, 101))
        #expect(s.isValid && s.baseSequence == 101 && s.received == 1)
        // A gap during probation restarts it.
        var t = RTPSequenceState(firstSequence: 200)
        #expect(!update(&t, 200))
        #expect(!update(&t, 205))
        #expect(update(&t, 206))
        #expect(t.baseSequence == 206)
    }

    @Test("A.1: wrap-around counts cycles and extends sequence numbers")
    func wrapAround() {
        var s = RTPSequenceState(firstSequence: 65534)
        _ = s.update(65534)
        #expect(update(&s, 65535))
        #expect(update(&s, 0))
        #expect(update(&s, 1))
        #expect(s.cycles == 65536)
        #expect(s.extendedMaxSequence == 65537)
        #expect(s.expected == 3)
        #expect(s.cumulativeLost == 0)
        // A packet from before the wrap extends into the previous cycle.
        #expect(s.extended(65535) == 65535)
        #expect(s.extended(2) == 65538)
    }

    @Test("A.1 and A.3: losses, duplicates, reordering and fraction lost, hand-computed")
    func lossAccounting() {
        var s = RTPSequenceState(firstSequence: 100)
        _ = s.update(100)
        for seq: UInt16 in 101...110 where seq != 104 && seq != 107 { #expect(update(&s, seq)) }
        // Expected 110 - 101 + 1 = 10, received 8.
        #expect(s.expected == 10)
        #expect(s.received == 8)
        #expect(s.cumulativeLost == 2)
        // Fraction: (2 << 8) / 10 = 51.
        #expect(fraction(&s) == 51)
        #expect(fraction(&s) == 0)
        // A late packet and a duplicate both count as received (A.1): lost goes to 0.
        #expect(update(&s, 104))
        #expect(update(&s, 105))
        #expect(s.cumulativeLost == 0)
        // The next interval: nothing new expected, two more received: fraction 0.
        #expect(fraction(&s) == 0)
    }

    @Test("A.1: a large jump is accepted only when the next packet confirms it")
    func largeJump() {
        var s = RTPSequenceState(firstSequence: 100)
        _ = s.update(100)
        _ = s.update(101)
        #expect(!update(&s, 5000))  // 4899 ahead: more than MAX_DROPOUT
        #expect(s.maxSequence == 101)
        #expect(!update(&s, 9000))  // another lone jump is also refused
        #expect(!update(&s, 5000))
        #expect(update(&s, 5001))  // 5000 then 5001: the sender restarted
        #expect(s.baseSequence == 5001 && s.received == 1)
    }

    @Test("A.8: interarrival jitter, integer form, hand-computed")
    func jitter() {
        var j = RTPInterarrivalJitter()
        // (timestamp, arrival) in RTP units; transits 1000, 1040, 980, 1000.
        j.update(arrival: 1000, timestamp: 0)
        #expect(j.scaled == 0)
        j.update(arrival: 2000, timestamp: 960)  // D = 40: 0 + 40 - 0 = 40
        #expect(j.scaled == 40 && j.jitter == 2)
        j.update(arrival: 2900, timestamp: 1920)  // D = 60: 40 + 60 - 3 = 97
        #expect(j.scaled == 97 && j.jitter == 6)
        j.update(arrival: 3880, timestamp: 2880)  // D = 20: 97 + 20 - 6 = 111
        #expect(j.scaled == 111 && j.jitter == 6)
        // Wrap-around of both clocks changes nothing.
        var w = RTPInterarrivalJitter()
        w.update(arrival: 1000 &- 5000, timestamp: UInt32.max - 4999)
        w.update(arrival: 2000 &- 5000, timestamp: UInt32.max - 4999 &+ 960)
        #expect(w.scaled == 40)
    }

    @Test("RTT from LSR and DLSR: the example of RFC 3550 section 6.4.1")
    func roundTrip() {
        // A = 0xb710:8000 (46864.500 s), LSR = 0xb705:2000 (46853.125 s), DLSR = 0x0005:4000 (5.250 s).
        let rtt = RoundTripTime.compute(arrival: 0xB710_8000, lastSenderReport: 0xB705_2000,
                                        delaySinceLastSenderReport: 0x0005_4000)
        #expect(rtt == 0x0006_2000)
        #expect(RoundTripTime.seconds(rtt!) == 6.125)
        #expect(RoundTripTime.compute(arrival: 0xB710_8000, lastSenderReport: 0, delaySinceLastSenderReport: 0) == nil)
        #expect(RoundTripTime.compute(arrival: 0x0000_1000, lastSenderReport: 0x0000_0800,
                                      delaySinceLastSenderReport: 0x0000_2000) == nil)
    }

    @Test("NTP timestamps from Unix time")
    func ntp() {
        #expect(NTPTimestamp(unixNanoseconds: 0) == NTPTimestamp(seconds: 2_208_988_800, fraction: 0))
        let t = NTPTimestamp(unixNanoseconds: 1_500_000_000)
        #expect(t == NTPTimestamp(seconds: 2_208_988_801, fraction: 0x8000_0000))
        #expect(t.middle32 == 0x7E81_8000)
    }

    @Test("Times convert to the 48 kHz RTP clock")
    func rtpUnits() {
        #expect(RTPClock.rtpUnits(nanoseconds: 1_000_000_000, rate: 48000) == 48000)
        #expect(RTPClock.rtpUnits(nanoseconds: 20_000_000, rate: 48000) == 960)
        #expect(RTPClock.rtpUnits(nanoseconds: 100_000 * 1_000_000_000, rate: 48000) == UInt32(truncatingIfNeeded: UInt64(4_800_000_000)))
    }
}
