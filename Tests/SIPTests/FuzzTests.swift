import Platform
import AudioAnalysis
import Foundation
@testable import SIP
import Testing
import TestSupport


/// Valid messages the mutations start from.
let fuzzCorpus: [[UInt8]] = [
    rfcInvite,
    sipText([
        "SIP/2.0 200 OK",
        "Via: SIP/2.0/UDP [::1]:5070;branch=z9hG4bKx;rport=5070;received=::1, SIP/2.0/UDP p:5060;branch=z9hG4bKy",
        "Record-Route: <sip:p1;lr>, <sip:p2;lr>",
        "From: \"A \\\"q\\\"\" <sip:a@h>;tag=1",
        "To: b <sip:b@h>;tag=2",
        "Call-ID: abc@h",
        "CSeq: 1 INVITE",
        "Contact: <sip:b@[::1]:5062;transport=udp>",
        "Content-Type: application/sdp",
    ], body: "v=0\r\nm=audio 4000 RTP/AVP 96\r\na=rtpmap:96 opus/48000/2\r\n"),
    sipText(["BYE sip:b@10.0.0.2 SIP/2.0", "v: SIP/2.0/UDP 10.0.0.1;branch=z9hG4bKz;rport", "f: sip:a@h;tag=x",
             "t: <sip:b@h>;tag=y", "i: id", "CSeq: 2 BYE", "Max-Forwards: 70", "Reason: Q.850;cause=16"]),
    sipText(["OPTIONS sip:h SIP/2.0", "Via: SIP/2.0/UDP h\r\n ;branch=z9hG4bKo", "From: <sip:a@h>;tag=1", "To: <sip:h>",
             "Call-ID: o", "CSeq: 9 OPTIONS", "Accept: application/sdp", "Supported: timer, 100rel", "l: 0"]),
].map { Array($0.utf8) }

private let tokens: [[UInt8]] = ["\r\n", "\r\n\r\n", ":", ";", ",", "<", ">", "\"", "\\", " ", "\t", "[", "]", "@",
                                  "=", "SIP/2.0", "z9hG4bK", "0", "99999999999", ";tag=", "sip:", "\n ", "\u{0}",
                                  "Content-Length: 70000\r\n", "CSeq: 1 BYE\r\n", "\u{FFFD}"].map { Array($0.utf8) }

func mutate(_ input: [UInt8], using rng: inout SeededRandom) -> [UInt8] {
    var bytes = input
    for _ in 0..<Int.random(in: 1...4, using: &rng) {
        let position = bytes.isEmpty ? 0 : Int.random(in: 0..<bytes.count, using: &rng)
        switch Int.random(in: 0..<7, using: &rng) {
        case 0 where !bytes.isEmpty:
            bytes[position] = UInt8.random(in: 0...255, using: &rng)
        case 1:
            bytes.insert(UInt8.random(in: 0...255, using: &rng), at: position)
        case 2 where !bytes.isEmpty:
            let end = min(bytes.count, position + Int.random(in: 1...40, using: &rng))
            bytes.removeSubrange(position..<end)
        case 3:
            bytes.insert(contentsOf: tokens.randomElement(using: &rng)!, at: position)
        case 4 where !bytes.isEmpty:
            let end = min(bytes.count, position + Int.random(in: 1...60, using: &rng))
            bytes.insert(contentsOf: bytes[position..<end], at: position)
        case 5:
            bytes.removeSubrange(position...)
        default:
            if let lf = bytes[position...].firstIndex(of: 0x0A) { bytes.remove(at: lf) }  // join two lines
        }
    }
    return bytes
}

@Suite("SIP parser fuzzing")
struct FuzzTests {
    /// How many mutated inputs: 100k optimized, 25k in a debug build (about 3 s there);
    /// `SIP_FUZZ_ITERATIONS` overrides, `SIP_FUZZ_SEED` changes the seed.
    static var iterations: Int {
        if let text = ProcessInfo.processInfo.environment["SIP_FUZZ_ITERATIONS"], let n = Int(text) { return n }
        #if DEBUG
        return 25_000
        #else
        return 100_000
        #endif
    }

    static var seed: UInt64 {
        ProcessInfo.processInfo.environment["SIP_FUZZ_SEED"].flatMap { UInt64($0) } ?? 0x5EED_0001
    }

    /// Mutated messages never trap; whatever parses serializes to a message that parses the same.
    @Test func mutatedMessagesNeverCrash() async {
        var rng = SeededRandom(seed: Self.seed)
        let iterations = Self.iterations
        var parsed = 0, answered = 0, dropped = 0
        for i in 0..<iterations {
            if i % 500 == 0 { await Task.yield() }  // do not hold a cooperative thread for seconds
            let input = mutate(fuzzCorpus[i % fuzzCorpus.count], using: &rng)
            switch SIPParser.classify(input) {
            case .message(let message):
                parsed += 1
                // The typed accessors must not trap either.
                _ = try? message.headers.via()
                _ = try? message.headers.contacts()
                _ = try? message.headers.recordRoutes()
                _ = try? message.headers.contentLength()
                if parsed % 8 == 0 {
                    // Round trip: serialize and parse again (Content-Length is made explicit).
                    guard case .message(let again) = SIPParser.classify(message.serialized()) else {
                        Issue.record("re-parse failed for input \(i): \(String(decoding: input, as: UTF8.self))")
                        continue
                    }
                    var a = again.headers, b = message.headers
                    a.remove("Content-Length")
                    b.remove("Content-Length")
                    #expect(a == b && again.body == message.body,
                            "input \(i): \(Array(input)) -> \(a.fields) vs \(b.fields)")
                }
            case .badRequest:
                answered += 1
            case .malformed, .keepAlive:
                dropped += 1
            }
        }
        // The mutations reach all three outcomes.
        #expect(parsed > iterations / 20)
        #expect(answered > iterations / 50)
        #expect(dropped > iterations / 20)
    }
}
