import SRTP
import Testing
import TestSupport

@Suite("SRTP allocations")
struct AllocationTests {
    /// Packets protected and unprotected in place, one aligned buffer reused.
    struct Counts {
        var protectTotal: UInt64 = 0, unprotectTotal: UInt64 = 0
        var protectRange: ClosedRange<UInt64>?, unprotectRange: ClosedRange<UInt64>?
    }

    static func widen(_ range: inout ClosedRange<UInt64>?, _ value: UInt64) {
        range = range.map { min($0.lowerBound, value)...max($0.upperBound, value) } ?? value...value
    }

    static func run(_ profile: SRTPProfile, packets: Int) throws -> Counts {
        var pair = try Pair(profile)
        let plain = Packets.rtp(sequence: 0, ssrc: 0x1234_5678)
        let scratch = Scratch(plain)
        var counts = Counts()
        for k in 0...packets {  // packet 0 warms up
            plain.withUnsafeBytes { scratch.bytes.copyMemory(from: $0) }
            scratch.bytes.storeBytes(of: UInt16(k).bigEndian, toByteOffset: 2, as: UInt16.self)
            let c0 = AllocationCounter.thisThread
            let n = try pair.outbound.protectRTP(scratch.bytes, length: plain.count)
            let c1 = AllocationCounter.thisThread
            _ = try pair.inbound.unprotectRTP(scratch.bytes, length: n)
            let c2 = AllocationCounter.thisThread
            guard k > 0 else { continue }
            counts.protectTotal += c1 - c0
            counts.unprotectTotal += c2 - c1
            widen(&counts.protectRange, c1 - c0)
            widen(&counts.unprotectRange, c2 - c1)
        }
        return counts
    }

    @Test("1000 packets each way after a warm-up: nothing accumulates, and nothing at all but for libsrtp2's NSS ciphers",
          arguments: SRTPProfile.allCases)
    func steadyState(_ profile: SRTPProfile) throws {
        #expect(AllocationCounter.isActive)
        let counts = try Self.run(profile, packets: 1000)
        // Every packet costs the same: no stream, table or buffer grows on the way.
        #expect(counts.protectRange?.count == 1, "protect allocations per packet: \(String(describing: counts.protectRange))")
        #expect(counts.unprotectRange?.count == 1, "unprotect allocations per packet: \(String(describing: counts.unprotectRange))")
        withKnownIssue("""
            libsrtp2 as Debian builds it (over NSS) makes an NSS cipher context for every packet \
            (aes_icm_nss.c's set_iv, PK11_Encrypt for GCM, PK11_DigestBegin for HMAC): see Docs/srtp.md
            """) {
            #expect(counts.protectTotal == 0)
            #expect(counts.unprotectTotal == 0)
        }
    }

    @Test("Packets refused before libsrtp2 allocate nothing (beyond the test harness's throw hook)")
    func refusalsDoNotAllocate() throws {
        #expect(AllocationCounter.isActive)
        var pair = try Pair(.aesCM128HMACSHA1_80, ssrc: nil, maximumStreams: 1)
        _ = try pair.inbound.unprotectRTP(try pair.outbound.protectRTP(Packets.rtp(sequence: 1, ssrc: 1)))
        let strangerPacket = try pair.outbound.protectRTP(Packets.rtp(sequence: 1, ssrc: 2))
        let stranger = Scratch(strangerPacket), n = strangerPacket.count
        let short = Scratch(Array(Packets.rtp(sequence: 2, ssrc: 1)[0..<11]))
        func refuseAll() -> [SRTPError?] {
            [refusal { () throws(SRTPError) in try pair.inbound.unprotectRTP(stranger.bytes, length: n) },
             refusal { () throws(SRTPError) in try pair.inbound.unprotectRTP(short.bytes, length: 11) },
             refusal { () throws(SRTPError) in try pair.outbound.protectRTP(short.bytes, length: 11) },
             refusal { () throws(SRTPError) in try pair.inbound.protectRTP(stranger.bytes, length: n) }]
        }
        #expect(refuseAll() == [.tooManyStreams, .badParameter, .badParameter, .badParameter])
        // Swift Testing's throw hook records a backtrace for every error thrown (an allocation the
        // program outside a test never makes): what a bare throw costs here is allowed per refusal.
        _ = refusal { () throws(SRTPError) in try Self.bareThrow() }
        let hook = AllocationCounter.thisThread
        for _ in 0..<1000 { _ = refusal { () throws(SRTPError) in try Self.bareThrow() } }
        let perThousandThrows = AllocationCounter.thisThread - hook
        let before = AllocationCounter.thisThread
        for _ in 0..<1000 {
            _ = refusal { () throws(SRTPError) in try pair.inbound.unprotectRTP(stranger.bytes, length: n) }
            _ = refusal { () throws(SRTPError) in try pair.inbound.unprotectRTP(short.bytes, length: 11) }
            _ = refusal { () throws(SRTPError) in try pair.outbound.protectRTP(short.bytes, length: 11) }
            _ = refusal { () throws(SRTPError) in try pair.inbound.protectRTP(stranger.bytes, length: n) }
        }
        #expect(AllocationCounter.thisThread - before == 4 * perThousandThrows)
    }

    @inline(never)
    static func bareThrow() throws(SRTPError) -> Int { throw .badParameter }
}
