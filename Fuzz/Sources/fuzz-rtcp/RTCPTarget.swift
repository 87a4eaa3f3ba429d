import RTP

/// RTCP compound packets: what parses (without packets we skip) writes back and parses to the
/// same packets, as the RTCP loop relies on.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let input = UnsafeRawBufferPointer(start: data, count: size)
    _ = RTCPCompound.isRTCP(input)
    guard let packets = try? RTCPCompound.parse(input) else { return 0 }
    let skipped = packets.contains { if case .other = $0 { true } else { false } }
    if !skipped, let bytes = try? RTCPCompound.serialize(packets), (try? RTCPCompound.parse(bytes)) != packets {
        fatalError("RTCP does not survive writing: \(Array(input))")
    }
    return 0
}
