import SIP

/// Header values alone: the first byte picks the grammar, the rest is the value. What parses
/// is written out and must parse again (a response copies these values as we write them).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size > 0 else { return 0 }
    let text = String(decoding: UnsafeBufferPointer(start: data + 1, count: size - 1), as: UTF8.self)
    switch data[0] % 7 {
    case 0:
        if let uri = try? SIPURI(parsing: text) {
            _ = uri.effectivePort
            _ = uri.transport
            _ = uri.hostForURI
            check(try? SIPURI(parsing: uri.description), "URI", text)
        }
    case 1:
        if let via = try? SIPVia(parsing: text) {
            _ = (via.branch, via.received, via.rport, via.sentBy)
            check(try? SIPVia(parsing: via.description), "Via", text)
        }
    case 2, 3:
        let header = data[0] % 7 == 2 ? "From" : "Contact"
        if let address = try? SIPNameAddress(parsing: text, header: header) {
            _ = address.tag
            check(try? SIPNameAddress(parsing: address.description, header: header), header, text)
        }
    case 4:
        if let cseq = try? SIPCSeq(parsing: text) { check(try? SIPCSeq(parsing: cseq.description), "CSeq", text) }
    case 5:
        if let reason = try? SIPReason(parsing: text) { check(try? SIPReason(parsing: reason.description), "Reason", text) }
    default:
        // A list header as the parser splits it (commas outside quotes and angle brackets).
        let headers: SIPHeaders = ["Via": text, "Contact": text, "Route": text]
        _ = try? headers.values("Via")
        _ = try? headers.via()
        _ = try? headers.contacts()
        _ = try? headers.routes()
        _ = headers.tokens("Via")
    }
    return 0
}

/// A value we wrote must parse again: a failure here is a bug in the writer or the parser.
func check<T>(_ reparsed: T?, _ what: String, _ input: String) {
    if reparsed == nil { fatalError("\(what) written from \(input.debugDescription) does not parse again") }
}
