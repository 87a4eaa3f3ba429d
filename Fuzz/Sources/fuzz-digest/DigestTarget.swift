import SIP

/// A digest challenge from a registrar, a proxy or anyone else, and a 2xx's
/// `Authentication-Info`: the input is both, split at its first line break, each taken as a
/// header value of a parsed response (as the user agent sees them). The answer must be one
/// header value: a line break in it would inject header lines into our request.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let input = UnsafeBufferPointer(start: data, count: size)
    let cut = input.firstIndex(of: 10) ?? size
    let message = head + Array("WWW-Authenticate: ".utf8) + input[..<cut] + Array("\r\nAuthentication-Info: ".utf8)
        + input[min(cut + 1, size)...] + Array("\r\nContent-Length: 0\r\n\r\n".utf8)
    guard case .response(let response) = try? SIPMessage(parsing: message),
          let challenge = response.headers["WWW-Authenticate"],
          let answer = credentials.answer(challenge: challenge, method: .register, uri: "sip:example.com", body: [1, 2],
                                          cnonce: "0a4f113b", authenticationInfo: response.headers["Authentication-Info"])
    else { return 0 }
    if answer.authorization.utf8.contains(where: { $0 == 13 || $0 == 10 }) {
        fatalError("a line break in the Authorization value: \(answer.authorization.debugDescription)")
    }
    return 0
}

let head = Array("""
    SIP/2.0 401 Unauthorized\r
    Via: SIP/2.0/UDP 10.0.0.5:5060;branch=z9hG4bKreg\r
    From: <sip:alice@example.com>;tag=r1\r
    To: <sip:alice@example.com>;tag=s1\r
    Call-ID: reg1\r
    CSeq: 1 REGISTER\r\n
    """.utf8)
let credentials = SIPCredentials(username: "alice", password: "secret", realm: "example.com")
