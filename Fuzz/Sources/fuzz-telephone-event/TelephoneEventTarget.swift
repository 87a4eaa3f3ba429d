import RTP

/// RFC 4733 telephone events: whatever parses writes back to the same bytes.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let input = UnsafeRawBufferPointer(start: data, count: size)
    guard let event = TelephoneEvent.parse(input) else { return 0 }
    _ = event.key
    var out = [UInt8](repeating: 0, count: TelephoneEvent.size)
    out.withUnsafeMutableBytes { event.write(into: $0) }
    return 0
}
