@testable import SIP
import Testing

/// MD5 and SHA-256 against the test vectors of their specifications, and at the lengths where
/// padding spills into a second block. The padding-edge values were computed with Python's
/// `hashlib` on the bytes 0, 1, 2, ... (length - 1).
@Suite struct MessageDigestTests {
    static func md5Hex(_ text: String) -> String { MessageDigest.hex(MessageDigest.md5(Array(text.utf8))) }
    static func sha256Hex(_ text: String) -> String { MessageDigest.hex(MessageDigest.sha256(Array(text.utf8))) }

    /// The bytes 0, 1, 2, ... (`length` - 1).
    static func countingBytes(_ length: Int) -> [UInt8] { (0..<length).map { UInt8(truncatingIfNeeded: $0) } }

    /// (length, MD5, SHA-256) of `countingBytes(length)`: 55 bytes fit the padding in one block,
    /// 56 and 63 need a second block, 64 is exactly one block, 65 starts a second.
    static let paddingEdges: [(length: Int, md5: String, sha256: String)] = [
        (55, "6912ee65fff2d9f9ce2508cddf8bcda0", "463eb28e72f82e0a96c0a4cc53690c571281131f672aa229e0d45ae59b598b59"),
        (56, "51fdd1acda72405dfdfa03fcb85896d7", "da2ae4d6b36748f2a318f23e7ab1dfdf45acdc9d049bd80e59de82a60895f562"),
        (63, "48a6295221902e8e0938f773a7185e72", "29af2686fd53374a36b0846694cc342177e428d1647515f078784d69cdb9e488"),
        (64, "b2d3f56bc197fd985d5965079b5e7148", "fdeab9acf3710362bd2658cdc9a29e8f9c757fcf9811603a8c447cd1d9151108"),
        (65, "8bd7053801c768420faf816fadba971c", "4bfd2c8b6f1eec7a2afeb48b934ee4b2694182027e6d0fc075074f2fabb31781"),
    ]

    @Test func md5MatchesEveryTestVectorOfRFC1321AppendixA5() {
        #expect(Self.md5Hex("") == "d41d8cd98f00b204e9800998ecf8427e")
        #expect(Self.md5Hex("a") == "0cc175b9c0f1b6a831c399e269772661")
        #expect(Self.md5Hex("abc") == "900150983cd24fb0d6963f7d28e17f72")
        #expect(Self.md5Hex("message digest") == "f96b697d7cb7938d525a2f31aaf161d0")
        #expect(Self.md5Hex("abcdefghijklmnopqrstuvwxyz") == "c3fcd3d76192e4007dfb496cca67e13b")
        #expect(Self.md5Hex("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
                == "d174ab98d277d9f5a5611c2c9f419d9f")
        #expect(Self.md5Hex(String(repeating: "1234567890", count: 8)) == "57edf4a22be3c955ac49da2e2107b67a")
    }

    @Test func sha256MatchesTheEmptyMessageAndTheOneBlockVectorABC() {
        #expect(Self.sha256Hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(Self.sha256Hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    }

    @Test func sha256MatchesTheTwoBlock448BitVector() {
        #expect(Self.sha256Hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")
                == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
    }

    /// Many blocks (16): a thousand "a". (FIPS 180's million-"a" vector takes over a second of a
    /// debug build's CPU, which starves the timing-sensitive SIP tests this target runs beside.)
    @Test func manyBlocksOfTheSameByte() {
        let message = [UInt8](repeating: UInt8(ascii: "a"), count: 1000)
        #expect(MessageDigest.hex(MessageDigest.sha256(message)) == "41edece42d63e8d9bf515a9ba6932e1c20cbc9f5a5d134645adb5db1b9737ea3")
        #expect(MessageDigest.hex(MessageDigest.md5(message)) == "cabe45dcc9ae5b66ba86600cca6b8ba8")
    }

    @Test(arguments: paddingEdges)
    func md5IsRightAtEveryPaddingEdgeLength(_ edge: (length: Int, md5: String, sha256: String)) {
        #expect(MessageDigest.hex(MessageDigest.md5(Self.countingBytes(edge.length))) == edge.md5)
    }

    @Test(arguments: paddingEdges)
    func sha256IsRightAtEveryPaddingEdgeLength(_ edge: (length: Int, md5: String, sha256: String)) {
        #expect(MessageDigest.hex(MessageDigest.sha256(Self.countingBytes(edge.length))) == edge.sha256)
    }

    @Test func digestsHaveTheirSpecifiedLengths() {
        #expect(MessageDigest.md5([]).count == 16)
        #expect(MessageDigest.sha256([]).count == 32)
    }

    @Test func hexIsLowercaseWithTwoDigitsPerByte() {
        #expect(MessageDigest.hex([]) == "")
        #expect(MessageDigest.hex([0x00, 0x0f, 0xa0, 0xff]) == "000fa0ff")
    }
}
