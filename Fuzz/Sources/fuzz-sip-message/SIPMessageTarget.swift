import SIP

/// One datagram through the SIP parser, then every header accessor the user agent uses on a
/// message that parsed, and a round trip through writing it.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    guard let message = try? SIPMessage(parsing: bytes) else { return 0 }
    let headers: SIPHeaders
    switch message {
    case .request(let request):
        headers = request.headers
        _ = request.uri.description
        _ = request.uri.effectivePort
    case .response(let response):
        headers = response.headers
    }
    _ = try? headers.via().map(\.description)
    _ = try? headers.topVia().branch
    _ = try? headers.from().tag
    _ = try? headers.to().description
    _ = try? headers.callID()
    _ = try? headers.cseq()
    _ = try? headers.contacts()
    _ = try? headers.recordRoutes()
    _ = try? headers.routes()
    _ = try? headers.reasons()
    _ = try? headers.maxForwards()
    _ = try? headers.contentLength()
    _ = headers.contentType
    for name in ["Require", "Supported", "Allow", "Proxy-Require"] { _ = headers.tokens(name) }
    for field in headers { _ = SIPHeaders.canonicalName(field.name) }
    // What we write parses back to the same fields (Content-Length is made explicit) and body:
    // responses and retransmissions copy what we parsed.
    guard let again = try? SIPMessage(parsing: message.serialized()) else {
        fatalError("a parsed message does not parse again once written: \(bytes)")
    }
    var a = again.headers, b = headers
    a.remove("Content-Length")
    b.remove("Content-Length")
    if a != b || again.body != message.body { fatalError("a message changes once written: \(bytes)") }
    return 0
}
