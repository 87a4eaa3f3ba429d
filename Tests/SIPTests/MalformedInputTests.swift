@testable import SIP
import Testing
import TestSupport

private let validHeaders = [
    "Via: SIP/2.0/UDP 127.0.0.1:5070;branch=z9hG4bKmal",
    "From: <sip:a@127.0.0.1>;tag=1",
    "To: <sip:b@127.0.0.1>",
    "Call-ID: malformed-test",
    "CSeq: 1 INVITE",
    "Max-Forwards: 70",
]

/// `validHeaders` with `name` left out or replaced.
private func headers(without name: String, replacement: String? = nil) -> [String] {
    validHeaders.compactMap { $0.hasPrefix(name + ":") ? replacement : $0 }
}

private let invite = "INVITE sip:b@127.0.0.1 SIP/2.0"

@Suite("Malformed SIP")
struct MalformedInputTests {
    /// Each input, the error it must give, and whether a UAS can still answer it (400, 416, 505)
    /// rather than drop it.
    static let cases: [(String, String, SIPParseError, Bool)] = [
        ("empty", "", .empty, false),
        ("keep-alive", "\r\n\r\n", .empty, false),
        ("not SIP", "hello world\r\n\r\n", .badStartLine, false),
        ("binary", String(decoding: [0, 1, 2, 0xFF, 0xFE, 13, 10, 13, 10], as: UTF8.self), .badStartLine, false),
        ("no line end", "INVITE sip:b@h SIP/2.0", .badStartLine, false),
        ("two spaces", sipText(["INVITE  sip:b@127.0.0.1 SIP/2.0"] + validHeaders), .badStartLine, false),
        ("lowercase method is a token", sipText(["invite sip:b@127.0.0.1 SIP/2.0"] + headers(without: "CSeq", replacement: "CSeq: 1 invite")), .empty, true),
        ("SIP/3.0 request", sipText(["INVITE sip:b@127.0.0.1 SIP/3.0"] + validHeaders), .unsupportedVersion, true),
        ("SIP/3.0 response", sipText(["SIP/3.0 200 OK"] + validHeaders), .unsupportedVersion, false),
        ("non-numeric status", sipText(["SIP/2.0 2x0 OK"] + validHeaders), .badStatusCode, false),
        ("status 99", sipText(["SIP/2.0 99 Odd"] + validHeaders), .badStatusCode, false),
        ("status 700", sipText(["SIP/2.0 700 Odd"] + validHeaders), .badStatusCode, false),
        ("tel Request-URI", sipText(["INVITE tel:+15551234 SIP/2.0"] + validHeaders), .unsupportedURIScheme("tel"), true),
        ("bad Request-URI", sipText(["INVITE sip:b@[::1 SIP/2.0"] + validHeaders), .badURI, true),
        ("missing CSeq", sipText([invite] + headers(without: "CSeq")), .missingHeader("CSeq"), false),
        ("missing Via", sipText([invite] + headers(without: "Via")), .missingHeader("Via"), false),
        ("missing Call-ID", sipText([invite] + headers(without: "Call-ID")), .missingHeader("Call-ID"), false),
        ("missing From", sipText([invite] + headers(without: "From")), .missingHeader("From"), false),
        ("missing To", sipText([invite] + headers(without: "To")), .missingHeader("To"), false),
        ("bad CSeq number", sipText([invite] + headers(without: "CSeq", replacement: "CSeq: x INVITE")), .badHeaderValue("CSeq"), true),
        ("CSeq method mismatch", sipText([invite] + headers(without: "CSeq", replacement: "CSeq: 1 BYE")), .cseqMethodMismatch, true),
        ("bad Via", sipText([invite] + headers(without: "Via", replacement: "Via: SIP/2.0 nowhere")), .badHeaderValue("Via"), false),
        ("bad From", sipText([invite] + headers(without: "From", replacement: "From: <sip:a@h;tag=1")), .badHeaderValue("From"), true),
        ("bad Max-Forwards", sipText([invite] + headers(without: "Max-Forwards", replacement: "Max-Forwards: lots")), .badHeaderValue("Max-Forwards"), true),
        ("header without colon", sipText([invite, "Garbage line"] + validHeaders), .badHeaderLine, true),
        ("header name with space", sipText([invite, "Bad Name: x"] + validHeaders), .badHeaderLine, true),
        ("folding before any header", invite + "\r\n continued\r\n" + validHeaders.joined(separator: "\r\n") + "\r\n\r\n", .badHeaderLine, true),
        ("no blank line", invite + "\r\n" + validHeaders.joined(separator: "\r\n") + "\r\n", .missingBlankLine, true),
        ("Content-Length beyond the datagram", sipText([invite] + validHeaders + ["Content-Length: 500"], body: "v=0\r\n"), .contentLengthBeyondDatagram, true),
        ("Content-Length beyond, response", sipText(["SIP/2.0 200 OK"] + validHeaders + ["Content-Length: 500"], body: "v=0\r\n"), .contentLengthBeyondDatagram, false),
        ("non-numeric Content-Length", sipText([invite] + validHeaders + ["Content-Length: ten"]), .badContentLength, true),
        ("negative Content-Length", sipText([invite] + validHeaders + ["Content-Length: -1"]), .badContentLength, true),
        ("huge Content-Length", sipText([invite] + validHeaders + ["Content-Length: 99999999999999999999"]), .badContentLength, true),
        ("huge header count", sipText([invite] + validHeaders + Array(repeating: "X-Filler: 1", count: 10_000)), .tooManyHeaders, true),
        ("too many Via values", sipText([invite] + validHeaders + Array(repeating: "Via: SIP/2.0/UDP h;branch=z9hG4bKv", count: 70)), .tooManyVias, false),
        ("field too long", sipText([invite] + validHeaders + ["X-Long: " + String(repeating: "x", count: 9_000)]), .headerTooLong("X-Long"), true),
        ("From too long to copy", sipText([invite] + headers(without: "From", replacement: "From: <sip:a@h>;tag=" + String(repeating: "1", count: 9_000))), .headerTooLong("From"), false),
        // Found by Fuzz/fuzz-digest: a challenge's opaque with a CR was copied into our Authorization.
        ("bare CR in a value", sipText([invite] + validHeaders + ["Subject: a\rInjected: 1"]), .badHeaderLine, true),
        ("bare CR in a challenge", sipText(["SIP/2.0 401 Unauthorized"] + headers(without: "Max-Forwards") + [
            "WWW-Authenticate: Digest realm=\"r\", nonce=\"n\", opaque=\"FQhe\rCev0\""]), .badHeaderLine, false),
        ("bare CR in a folded line", invite + "\r\n" + validHeaders.joined(separator: "\r\n") + "\r\nSubject: a\r\n b\rc\r\n\r\n", .badHeaderLine, true),
        ("malformed ACK is never answered", sipText(["ACK sip:b@127.0.0.1 SIP/2.0"] + headers(without: "CSeq", replacement: "CSeq: 1 INVITE")), .cseqMethodMismatch, false),
    ]

    @Test(arguments: cases.indices)
    func malformedInputIsATypedError(index: Int) {
        let (name, text, error, answerable) = Self.cases[index]
        if name == "lowercase method is a token" {
            // Methods are case-sensitive tokens: "invite" parses (and would be answered 501).
            #expect((try? SIPMessage(parsing: text)) != nil, "\(name)")
            return
        }
        #expect(throws: error, "\(name)") { try SIPMessage(parsing: text) }
        switch SIPParser.classify(Array(text.utf8)) {
        case .badRequest(let e, _):
            #expect(answerable, "\(name) should be dropped")
            #expect(e == error, "\(name)")
        case .malformed(let e):
            #expect(!answerable, "\(name) should be answered")
            #expect(e == error, "\(name)")
        case .keepAlive:
            #expect(error == .empty, "\(name)")
        case .message:
            Issue.record("\(name) parsed")
        }
    }
}
