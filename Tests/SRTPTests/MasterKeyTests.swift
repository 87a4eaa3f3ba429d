import SRTP
import Testing

@Suite("SRTP keys and profiles")
struct MasterKeyTests {
    /// RFC 4568 section 9.2's example key, without its MKI.
    static let rfc4568 = "inline:PS1uQCVeeCFCanVmcjkpPywjNWhcYD0mXXtxaVBR"
    static let rfc4568Bytes: [UInt8] = [61, 45, 110, 64, 37, 94, 120, 33, 66, 106, 117, 102, 114, 57, 41,
                                        63, 44, 35, 53, 104, 92, 96, 61, 38, 93, 123, 113, 105, 80, 81]

    @Test("Key parameters round-trip for every profile", arguments: SRTPProfile.allCases)
    func sdesRoundTrip(_ profile: SRTPProfile) throws {
        let key = SRTPMasterKey.random(profile: profile)
        let text = key.sdesKeyParameters
        #expect(text.hasPrefix("inline:") && text.count == 7 + 40)
        #expect(try SRTPMasterKey(profile: profile, sdesKeyParameters: text) == key)
        #expect(SRTPMasterKey.random(profile: profile) != key)
    }

    @Test("Known key parameters decode to their bytes; a lifetime is accepted and dropped")
    func sdesKnown() throws {
        let expected = try SRTPMasterKey(profile: .aesCM128HMACSHA1_80, keyAndSalt: Self.rfc4568Bytes)
        for text in [Self.rfc4568, Self.rfc4568 + "|2^20", Self.rfc4568 + "|1048576", "INLINE:" + Self.rfc4568.dropFirst(7)] {
            let key = try SRTPMasterKey(profile: .aesCM128HMACSHA1_80, sdesKeyParameters: text)
            #expect(key == expected, "\(text)")
            #expect(key.sdesKeyParameters == Self.rfc4568)
        }
        let gcm = try SRTPMasterKey(profile: .aeadAES128GCM, sdesKeyParameters: "inline:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGw==")
        #expect(gcm == (try SRTPMasterKey(profile: .aeadAES128GCM, keyAndSalt: Array(0..<28))))
        #expect(gcm.sdesKeyParameters == "inline:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGw==")
    }

    @Test("Bad base64, the wrong length, an MKI or a malformed lifetime are refused")
    func sdesRefused() {
        let refused = [
            Self.rfc4568 + "|2^20|1:32",                                   // RFC 4568's example, with its MKI
            Self.rfc4568 + "|1:4",                                         // an MKI without a lifetime
            Self.rfc4568 + "|2^x", Self.rfc4568 + "|", Self.rfc4568 + "|2^20|2^20",
            "inline:PS1uQCVeeCFCanVmcjkpPywjNWhcYD0mXXtxaVB*",             // outside the alphabet
            "inline:PS1uQCVeeCFCanVmcjkpPywjNWhcYD0mXXtxaVB",              // not a multiple of 4
            "inline:PS1uQCVeeCFC=nVmcjkpPywjNWhcYD0mXXtxaVBR",             // padding inside
            "inline:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxw=",             // 29 bytes
            "inline:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHg==",         // 31 bytes
            "inline:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGw==",             // 28 bytes: a GCM key
            "PS1uQCVeeCFCanVmcjkpPywjNWhcYD0mXXtxaVBR", "inline:", "uri:" + Self.rfc4568.dropFirst(7), "",
        ]
        for text in refused {
            #expect(failure { try SRTPMasterKey(profile: .aesCM128HMACSHA1_80, sdesKeyParameters: text) } == .badKey, "\(text)")
        }
        // Bits set after the last byte: the same key spelled a second way.
        #expect(failure { try SRTPMasterKey(profile: .aeadAES128GCM, sdesKeyParameters: "inline:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGx==") } == .badKey)
        #expect(failure { try SRTPMasterKey(profile: .aeadAES128GCM, keyAndSalt: Array(repeating: 1, count: 30)) } == .badKey)
        #expect(failure { try SRTPMasterKey(profile: .aesCM128HMACSHA1_32, keyAndSalt: []) } == .badKey)
    }

    @Test("A key never prints its bytes")
    func redacted() throws {
        // Bytes whose hex digits (9x, Fx) cannot occur in the description by chance.
        let bytes = (0..<16).map { 0x90 + UInt8($0) } + (0..<14).map { 0xF0 + UInt8($0) }
        let key = try SRTPMasterKey(profile: .aesCM128HMACSHA1_80, keyAndSalt: bytes)
        var dumped = ""
        dump(key, to: &dumped)
        let base64 = String(key.sdesKeyParameters.dropFirst(7))
        for text in [key.description, key.debugDescription, "\(key)", String(reflecting: key), dumped, "\([key])"] {
            #expect(text.contains("redacted") || text.contains("profile"), "\(text)")
            #expect(!text.contains(base64.prefix(8)))
            for byte in bytes {
                let hex = String(byte, radix: 16)
                #expect(!text.lowercased().contains(hex), "\(hex) in \(text)")
                #expect(!text.contains(String(byte)), "\(byte) in \(text)")
            }
        }
        #expect(key.description == "SRTPMasterKey(AES_CM_128_HMAC_SHA1_80, redacted)")
    }

    @Test("DTLS keying material splits into client and server keys (RFC 5764 section 4.2)", arguments: SRTPProfile.allCases)
    func dtlsSplit(_ profile: SRTPProfile) throws {
        let k = profile.keyLength, s = profile.saltLength
        let exported = (0..<SRTPMasterKey.dtlsExportLength(profile: profile)).map { UInt8($0) }
        #expect(exported.count == (profile == .aeadAES128GCM ? 56 : 60))
        let clientKey = try SRTPMasterKey(profile: profile, keyAndSalt: Array(exported[0..<k] + exported[(2 * k)..<(2 * k + s)]))
        let serverKey = try SRTPMasterKey(profile: profile, keyAndSalt: Array(exported[k..<(2 * k)] + exported[(2 * k + s)...]))
        let client = try SRTPMasterKey.fromDTLS(exported: exported, profile: profile, isClient: true)
        let server = try SRTPMasterKey.fromDTLS(exported: exported, profile: profile, isClient: false)
        #expect(client.local == clientKey && client.remote == serverKey)
        #expect(server.local == client.remote && server.remote == client.local)
        #expect(client.local != client.remote)
        #expect(failure { try SRTPMasterKey.fromDTLS(exported: exported.dropLast(), profile: profile, isClient: true) } == .badKey)
        #expect(failure { try SRTPMasterKey.fromDTLS(exported: exported + [0], profile: profile, isClient: false) } == .badKey)

        // What one side protects with its local key, the other unprotects with its remote one.
        var sender = try SRTPContext(key: client.local, direction: .outbound, ssrc: 1)
        var receiver = try SRTPContext(key: server.remote, direction: .inbound)
        let plain = Packets.rtp(sequence: 1, ssrc: 1)
        #expect(try receiver.unprotectRTP(try sender.protectRTP(plain)) == plain)
    }

    @Test("Profiles: names, ids and lengths")
    func profiles() {
        let table: [(SRTPProfile, String, UInt16, String, Int, Int, Int, Int)] = [
            (.aesCM128HMACSHA1_80, "AES_CM_128_HMAC_SHA1_80", 0x0001, "SRTP_AES128_CM_SHA1_80", 14, 30, 10, 14),
            (.aesCM128HMACSHA1_32, "AES_CM_128_HMAC_SHA1_32", 0x0002, "SRTP_AES128_CM_SHA1_32", 14, 30, 4, 14),
            (.aeadAES128GCM, "AEAD_AES_128_GCM", 0x0007, "SRTP_AEAD_AES_128_GCM", 12, 28, 16, 20),
        ]
        for (profile, sdes, id, openssl, salt, master, rtp, rtcp) in table {
            #expect(profile.sdesName == sdes && SRTPProfile(sdesName: sdes) == profile)
            #expect(SRTPProfile(sdesName: sdes.lowercased()) == profile)
            #expect(profile.dtlsProtectionProfile == id && SRTPProfile(dtlsProtectionProfile: id) == profile)
            #expect(profile.opensslName == openssl)
            #expect(profile.keyLength == 16 && profile.saltLength == salt && profile.masterLength == master)
            #expect(profile.rtpTrailerLength == rtp && profile.rtcpTrailerLength == rtcp)
            #expect(SRTPProfile.maximumTrailerLength >= max(rtp, rtcp))
        }
        #expect(SRTPProfile(sdesName: "AES_256_CM_HMAC_SHA1_80") == nil)
        #expect(SRTPProfile(sdesName: "F8_128_HMAC_SHA1_80") == nil)
        #expect(SRTPProfile(dtlsProtectionProfile: 0x0005) == nil && SRTPProfile(dtlsProtectionProfile: 0x0008) == nil)
    }

    @Test("Errors: codes, replay classification, descriptions")
    func errors() {
        #expect(SRTPError.authenticationFailed.rawValue == 7)
        #expect(SRTPError.replayed.rawValue == 9 && SRTPError.tooOld.rawValue == 10)
        #expect(SRTPError.replayed.isReplay && SRTPError.tooOld.isReplay)
        #expect(!SRTPError.authenticationFailed.isReplay && !SRTPError.tooManyStreams.isReplay)
        #expect(SRTPError(rawValue: 7) == .authenticationFailed)
        #expect(SRTPError.authenticationFailed.description == "SRTP error 7 (authentication failed)")
        #expect(SRTPError(rawValue: 24).description == "SRTP error 24 (libsrtp2 status 24)")
        let all: [SRTPError] = [.failed, .badParameter, .allocationFailed, .initializationFailed, .authenticationFailed,
                                .cipherFailed, .replayed, .tooOld, .noContext, .keyExpired, .tooManyStreams, .badKey]
        #expect(Set(all).count == all.count)
    }
}
