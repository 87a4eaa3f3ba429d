import DSP

/// The working buffers of a ``VoiceProcessingUnit``: allocated zeroed once, freed with it, so
/// the processing itself never allocates.
///
/// Thread safety: used by the unit's processing thread only.
final class ProcessingScratch {
    /// Capacity of the period-sized buffers, in samples.
    let capacity: Int
    /// A period of render and of capture at the processing rate.
    let render: UnsafeMutablePointer<Int16>
    let capture: UnsafeMutablePointer<Int16>
    /// A period of samples as floats (the delay and drift estimators' input).
    let floats: UnsafeMutablePointer<Float>
    /// Up to two periods of processed capture at the processing rate, and at the device rate.
    let processed: UnsafeMutablePointer<Int16>
    let device: UnsafeMutablePointer<Int16>
    /// One processing block: the capture, its aligned reference, the canceller's output, the
    /// capture through the DC notch, and the reference and capture as floats.
    let blockIn: UnsafeMutablePointer<Int16>
    let blockReference: UnsafeMutablePointer<Int16>
    let blockOut: UnsafeMutablePointer<Int16>
    let notched: UnsafeMutablePointer<Int16>
    let referenceFloat: UnsafeMutablePointer<Float>
    let captureFloat: UnsafeMutablePointer<Float>

    init(capacity: Int, block: Int) {
        self.capacity = capacity
        render = Self.zeroed(capacity)
        capture = Self.zeroed(capacity)
        floats = Self.zeroed(capacity)
        processed = Self.zeroed(2 * capacity)
        device = Self.zeroed(2 * capacity)
        blockIn = Self.zeroed(block)
        blockReference = Self.zeroed(block)
        blockOut = Self.zeroed(block)
        notched = Self.zeroed(block)
        referenceFloat = Self.zeroed(block)
        captureFloat = Self.zeroed(block)
    }

    deinit {
        render.deallocate(); capture.deallocate(); processed.deallocate(); device.deallocate()
        blockIn.deallocate(); blockReference.deallocate(); blockOut.deallocate(); notched.deallocate()
        floats.deallocate(); referenceFloat.deallocate(); captureFloat.deallocate()
    }

    private static func zeroed<T: Numeric>(_ count: Int) -> UnsafeMutablePointer<T> { .zeroed(count) }
}

extension UnsafeMutablePointer where Pointee: Numeric {
    /// A buffer of `count` zeros, for the unit's stages to allocate in `init` and free in `deinit`.
    static func zeroed(_ count: Int) -> UnsafeMutablePointer {
        let p = UnsafeMutablePointer.allocate(capacity: count)
        p.initialize(repeating: 0, count: count)
        return p
    }
}

extension UnsafeMutablePointer where Pointee == Float {
    /// A periodic-offset Hann window of `count` samples (`0.5 - 0.5 cos(2 pi (i + 0.5) / count)`),
    /// for the unit's analysis stages to allocate in `init` and free in `deinit`.
    static func hann(_ count: Int) -> UnsafeMutablePointer {
        let p = UnsafeMutablePointer.allocate(capacity: count)
        for i in 0..<count {
            p[i] = Float(0.5 - 0.5 * Math.cos(2 * Double.pi * (Double(i) + 0.5) / Double(count)))
        }
        return p
    }
}
