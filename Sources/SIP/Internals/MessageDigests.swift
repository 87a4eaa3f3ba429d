// MD5 (RFC 1321) and SHA-256 (FIPS 180-4), written from the specifications.
// SIP digest authentication (RFC 7616, RFC 8760) hashes a challenge and a password into a
// response: a challenge-response, not secrecy, so all it needs is these two functions.
// Two small functions are cheaper than building a crypto library (BoringSSL via
// swift-crypto) into every build.

/// Message digests for SIP digest authentication.
///
/// Thread safety: stateless; safe from any thread.
enum MessageDigest {
    /// The MD5 digest of `message` (RFC 1321): 16 bytes.
    static func md5(_ message: [UInt8]) -> [UInt8] {
        var state: [UInt32] = [0x6745_2301, 0xefcd_ab89, 0x98ba_dcfe, 0x1032_5476]
        let blocks = padded(message, lengthBigEndian: false)
        for start in stride(from: 0, to: blocks.count, by: 64) {
            md5Compress(&state, blocks[start..<start + 64])
        }
        return state.flatMap(littleEndianBytes)
    }

    /// The SHA-256 digest of `message` (FIPS 180-4): 32 bytes.
    static func sha256(_ message: [UInt8]) -> [UInt8] {
        var state: [UInt32] = [
            0x6a09_e667, 0xbb67_ae85, 0x3c6e_f372, 0xa54f_f53a,
            0x510e_527f, 0x9b05_688c, 0x1f83_d9ab, 0x5be0_cd19,
        ]
        let blocks = padded(message, lengthBigEndian: true)
        for start in stride(from: 0, to: blocks.count, by: 64) {
            sha256Compress(&state, blocks[start..<start + 64])
        }
        return state.flatMap(bigEndianBytes)
    }

    /// `digest` as lowercase hex, two digits a byte (as digest authentication sends it).
    static func hex(_ digest: [UInt8]) -> String {
        let digits = Array("0123456789abcdef")
        var out = ""
        out.reserveCapacity(digest.count * 2)
        for b in digest {
            out.append(digits[Int(b >> 4)])
            out.append(digits[Int(b & 0xF)])
        }
        return out
    }

    // MARK: Padding (the same for both, but for the byte order of the length)

    /// `message`, a 1 bit, zeros up to 56 bytes into a 64-byte block, then the message length
    /// in bits as 64 bits (modulo 2^64): a whole number of 64-byte blocks.
    private static func padded(_ message: [UInt8], lengthBigEndian: Bool) -> [UInt8] {
        let bitLength = UInt64(truncatingIfNeeded: message.count) &* 8
        var out = message
        out.reserveCapacity(message.count + 72)
        out.append(0x80)
        while out.count % 64 != 56 { out.append(0) }
        for i in 0..<8 {
            let shift = lengthBigEndian ? UInt64(56 - 8 * i) : UInt64(8 * i)
            out.append(UInt8(truncatingIfNeeded: bitLength >> shift))
        }
        return out
    }

    // MARK: MD5

    /// Per-step left rotations, four for each round, repeated four times (RFC 1321 3.4).
    private static let md5Shifts: [UInt32] = [
        7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22,
        5, 9, 14, 20, 5, 9, 14, 20, 5, 9, 14, 20, 5, 9, 14, 20,
        4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23,
        6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21,
    ]

    /// T[i] = floor(2^32 * abs(sin(i + 1))) (RFC 1321 3.4).
    private static let md5Constants: [UInt32] = [
        0xd76a_a478, 0xe8c7_b756, 0x2420_70db, 0xc1bd_ceee,
        0xf57c_0faf, 0x4787_c62a, 0xa830_4613, 0xfd46_9501,
        0x6980_98d8, 0x8b44_f7af, 0xffff_5bb1, 0x895c_d7be,
        0x6b90_1122, 0xfd98_7193, 0xa679_438e, 0x49b4_0821,
        0xf61e_2562, 0xc040_b340, 0x265e_5a51, 0xe9b6_c7aa,
        0xd62f_105d, 0x0244_1453, 0xd8a1_e681, 0xe7d3_fbc8,
        0x21e1_cde6, 0xc337_07d6, 0xf4d5_0d87, 0x455a_14ed,
        0xa9e3_e905, 0xfcef_a3f8, 0x676f_02d9, 0x8d2a_4c8a,
        0xfffa_3942, 0x8771_f681, 0x6d9d_6122, 0xfde5_380c,
        0xa4be_ea44, 0x4bde_cfa9, 0xf6bb_4b60, 0xbebf_bc70,
        0x289b_7ec6, 0xeaa1_27fa, 0xd4ef_3085, 0x0488_1d05,
        0xd9d4_d039, 0xe6db_99e5, 0x1fa2_7cf8, 0xc4ac_5665,
        0xf429_2244, 0x432a_ff97, 0xab94_23a7, 0xfc93_a039,
        0x655b_59c3, 0x8f0c_cc92, 0xffef_f47d, 0x8584_5dd1,
        0x6fa8_7e4f, 0xfe2c_e6e0, 0xa301_4314, 0x4e08_11a1,
        0xf753_7e82, 0xbd3a_f235, 0x2ad7_d2bb, 0xeb86_d391,
    ]

    /// Processes one 64-byte block into `state` (A, B, C, D): four rounds of 16 steps.
    private static func md5Compress(_ state: inout [UInt32], _ block: ArraySlice<UInt8>) {
        let x = (0..<16).map { littleEndianWord(block, at: block.startIndex + 4 * $0) }
        var a = state[0], b = state[1], c = state[2], d = state[3]
        for i in 0..<64 {
            let f: UInt32, g: Int
            switch i {
            case 0..<16: f = (b & c) | (~b & d); g = i                  // F
            case 16..<32: f = (b & d) | (c & ~d); g = (5 * i + 1) % 16  // G
            case 32..<48: f = b ^ c ^ d; g = (3 * i + 5) % 16           // H
            default: f = c ^ (b | ~d); g = (7 * i) % 16                 // I
            }
            let sum = a &+ f &+ md5Constants[i] &+ x[g]
            (a, d, c) = (d, c, b)
            b = b &+ rotatedLeft(sum, by: md5Shifts[i])
        }
        state[0] = state[0] &+ a
        state[1] = state[1] &+ b
        state[2] = state[2] &+ c
        state[3] = state[3] &+ d
    }

    // MARK: SHA-256

    /// The first 32 bits of the fractional parts of the cube roots of the first 64 primes
    /// (FIPS 180-4 4.2.2).
    private static let sha256Constants: [UInt32] = [
        0x428a_2f98, 0x7137_4491, 0xb5c0_fbcf, 0xe9b5_dba5,
        0x3956_c25b, 0x59f1_11f1, 0x923f_82a4, 0xab1c_5ed5,
        0xd807_aa98, 0x1283_5b01, 0x2431_85be, 0x550c_7dc3,
        0x72be_5d74, 0x80de_b1fe, 0x9bdc_06a7, 0xc19b_f174,
        0xe49b_69c1, 0xefbe_4786, 0x0fc1_9dc6, 0x240c_a1cc,
        0x2de9_2c6f, 0x4a74_84aa, 0x5cb0_a9dc, 0x76f9_88da,
        0x983e_5152, 0xa831_c66d, 0xb003_27c8, 0xbf59_7fc7,
        0xc6e0_0bf3, 0xd5a7_9147, 0x06ca_6351, 0x1429_2967,
        0x27b7_0a85, 0x2e1b_2138, 0x4d2c_6dfc, 0x5338_0d13,
        0x650a_7354, 0x766a_0abb, 0x81c2_c92e, 0x9272_2c85,
        0xa2bf_e8a1, 0xa81a_664b, 0xc24b_8b70, 0xc76c_51a3,
        0xd192_e819, 0xd699_0624, 0xf40e_3585, 0x106a_a070,
        0x19a4_c116, 0x1e37_6c08, 0x2748_774c, 0x34b0_bcb5,
        0x391c_0cb3, 0x4ed8_aa4a, 0x5b9c_ca4f, 0x682e_6ff3,
        0x748f_82ee, 0x78a5_636f, 0x84c8_7814, 0x8cc7_0208,
        0x90be_fffa, 0xa450_6ceb, 0xbef9_a3f7, 0xc671_78f2,
    ]

    /// Processes one 64-byte block into `state` (H0 to H7): the message schedule, then
    /// 64 rounds (FIPS 180-4 6.2.2).
    private static func sha256Compress(_ state: inout [UInt32], _ block: ArraySlice<UInt8>) {
        var w = (0..<16).map { bigEndianWord(block, at: block.startIndex + 4 * $0) }
        w.reserveCapacity(64)
        for t in 16..<64 {
            let s0 = rotatedRight(w[t - 15], by: 7) ^ rotatedRight(w[t - 15], by: 18) ^ (w[t - 15] >> 3)
            let s1 = rotatedRight(w[t - 2], by: 17) ^ rotatedRight(w[t - 2], by: 19) ^ (w[t - 2] >> 10)
            w.append(s1 &+ w[t - 7] &+ s0 &+ w[t - 16])
        }
        var a = state[0], b = state[1], c = state[2], d = state[3]
        var e = state[4], f = state[5], g = state[6], h = state[7]
        for t in 0..<64 {
            let bigSigma1 = rotatedRight(e, by: 6) ^ rotatedRight(e, by: 11) ^ rotatedRight(e, by: 25)
            let choose = (e & f) ^ (~e & g)
            let t1 = h &+ bigSigma1 &+ choose &+ sha256Constants[t] &+ w[t]
            let bigSigma0 = rotatedRight(a, by: 2) ^ rotatedRight(a, by: 13) ^ rotatedRight(a, by: 22)
            let majority = (a & b) ^ (a & c) ^ (b & c)
            let t2 = bigSigma0 &+ majority
            (h, g, f, e) = (g, f, e, d &+ t1)
            (d, c, b, a) = (c, b, a, t1 &+ t2)
        }
        for (i, v) in [a, b, c, d, e, f, g, h].enumerated() {
            state[i] = state[i] &+ v
        }
    }

    // MARK: Words and bytes

    private static func rotatedLeft(_ x: UInt32, by n: UInt32) -> UInt32 {
        (x &<< n) | (x &>> (32 &- n))
    }

    private static func rotatedRight(_ x: UInt32, by n: UInt32) -> UInt32 {
        (x &>> n) | (x &<< (32 &- n))
    }

    private static func littleEndianWord(_ bytes: ArraySlice<UInt8>, at i: Int) -> UInt32 {
        UInt32(bytes[i]) | UInt32(bytes[i + 1]) << 8 | UInt32(bytes[i + 2]) << 16 | UInt32(bytes[i + 3]) << 24
    }

    private static func bigEndianWord(_ bytes: ArraySlice<UInt8>, at i: Int) -> UInt32 {
        UInt32(bytes[i]) << 24 | UInt32(bytes[i + 1]) << 16 | UInt32(bytes[i + 2]) << 8 | UInt32(bytes[i + 3])
    }

    private static func littleEndianBytes(_ word: UInt32) -> [UInt8] {
        [0, 8, 16, 24].map { UInt8(truncatingIfNeeded: word >> $0) }
    }

    private static func bigEndianBytes(_ word: UInt32) -> [UInt8] {
        [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: word >> $0) }
    }
}
