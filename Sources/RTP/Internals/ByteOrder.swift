// Big-endian (network order) loads and stores at byte offsets, for the packet formats.
// Callers check bounds first; the loads are unaligned-safe.

extension UnsafeRawBufferPointer {
    @inline(__always)
    func loadBigEndian<T: FixedWidthInteger>(_: T.Type, at offset: Int) -> T {
        T(bigEndian: loadUnaligned(fromByteOffset: offset, as: T.self))
    }
}

extension UnsafeMutableRawBufferPointer {
    @inline(__always)
    func loadBigEndian<T: FixedWidthInteger>(_: T.Type, at offset: Int) -> T {
        T(bigEndian: loadUnaligned(fromByteOffset: offset, as: T.self))
    }

    @inline(__always)
    func storeBigEndian<T: FixedWidthInteger>(_ value: T, at offset: Int) {
        storeBytes(of: value.bigEndian, toByteOffset: offset, as: T.self)
    }
}
