/// The voice-processing unit's first and last stage: the device's periods to the processing rate
/// and into blocks, and the processed blocks back into periods at the device rate (SpeexDSP
/// resamplers when the rates differ; FIFOs for the framing).
///
/// Thread safety: I/O thread only (the unit's `process`); it allocates only in `init`.
final class RateAdapter {
    let block: Int
    /// Latency of framing and resampling, in seconds: a block, plus the resamplers' delay.
    let fixedLatency: Double
    private let deviceRate: Int
    private let captureDown: Resampler?
    private let renderDown: Resampler?
    private let captureUp: Resampler?
    private let inFIFO: SampleFIFO<Int16>
    private let outFIFO: SampleFIFO<Int16>
    private let linearFIFO: SampleFIFO<Int16>
    private let deviceFIFO: SampleFIFO<Int16>?
    private let scratch: ProcessingScratch

    init(configuration c: VoiceProcessingConfiguration, block: Int, scratch: ProcessingScratch) throws(VoiceProcessingError) {
        let fp = c.processingSampleRate, fd = c.deviceSampleRate
        do {
            let resamplers = try c.makeResamplers()
            (captureDown, renderDown, captureUp) = (resamplers?.captureDown, resamplers?.renderDown, resamplers?.captureUp)
        } catch { throw VoiceProcessingError("SpeexDSP: \(error)") }
        self.block = block
        self.scratch = scratch
        deviceRate = fd
        fixedLatency = Double(block) / Double(fp)
            + (captureDown.map { Double($0.outputLatency) / Double(fp) } ?? 0)
            + (captureUp.map { Double($0.outputLatency) / Double(fd) } ?? 0)
        let capacity = scratch.capacity
        inFIFO = SampleFIFO(capacity: capacity + block)
        outFIFO = SampleFIFO(capacity: 2 * capacity + 2 * block)
        linearFIFO = SampleFIFO(capacity: 2 * capacity + 2 * block)
        deviceFIFO = fd != fp ? SampleFIFO(capacity: 2 * capacity + 2 * block) : nil
    }

    /// The scratch capacity a unit needs: a period at either rate plus resampler slack and a block of framing.
    static func scratchCapacity(_ c: VoiceProcessingConfiguration, block: Int) -> Int {
        let fp = c.processingSampleRate, fd = c.deviceSampleRate
        let periodAtProcessing = (c.maximumFramesPerPeriod * fp + fd - 1) / fd
        return max(periodAtProcessing, c.maximumFramesPerPeriod) + 2 * block + 64
    }

    /// Whether the device runs at another rate (then there is no linear output for benches).
    var convertsRate: Bool { deviceFIFO != nil }

    /// A render period at the processing rate, into `scratch.render`; returns its length.
    func render(_ period: UnsafePointer<Int16>, _ count: Int) -> Int {
        renderDown.convert(period, count, into: scratch.render, capacity: scratch.capacity)
    }

    /// A capture period, queued at the processing rate for ``popBlock(into:)``.
    func pushCapture(_ period: UnsafePointer<Int16>, _ count: Int) {
        let converted = captureDown.convert(period, count, into: scratch.capture, capacity: scratch.capacity)
        inFIFO.push(scratch.capture, converted)
    }

    /// The next whole block of capture into `destination`; false when less than a block is queued.
    func popBlock(into destination: UnsafeMutablePointer<Int16>) -> Bool {
        guard inFIFO.count >= block else { return false }
        inFIFO.pop(into: destination, block)
        return true
    }

    /// The linear canceller's output for a block (kept only when the rates are equal).
    func pushLinear(_ block: UnsafePointer<Int16>) {
        if deviceFIFO == nil { linearFIFO.push(block, self.block) }
    }

    /// A processed block, for ``deliver(into:_:linearOutput:)``.
    func pushProcessed(_ block: UnsafePointer<Int16>) {
        outFIFO.push(block, self.block)
    }

    /// A period of processed capture at the device rate into `destination` (nil: discarded, as in
    /// bypass), and the linear output into `linearOutput` when given; zeros while framing and
    /// rate conversion still hold the first samples back.
    func deliver(into destination: UnsafeMutablePointer<Int16>?, _ count: Int, linearOutput: UnsafeMutablePointer<Int16>?) {
        if let deviceFIFO, let captureUp {
            let ready = outFIFO.count
            outFIFO.pop(into: scratch.processed, ready)
            let produced = captureUp.convert(scratch.processed, ready, into: scratch.device, capacity: 2 * scratch.capacity)
            deviceFIFO.push(scratch.device, produced)
            if deviceFIFO.count < count { deviceFIFO.pushZeros(count - deviceFIFO.count) }
            deviceFIFO.pop(into: destination ?? scratch.device, count)
        } else {
            if outFIFO.count < count {
                linearFIFO.pushZeros(count - outFIFO.count)
                outFIFO.pushZeros(count - outFIFO.count)
            }
            outFIFO.pop(into: destination ?? scratch.device, count)
            linearFIFO.pop(into: linearOutput ?? scratch.device, count)
        }
    }

    /// Output queued beyond what the last period took, in seconds.
    var queuedSeconds: Double { Double(deviceFIFO?.count ?? outFIFO.count) / Double(deviceRate) }

    func reset() {
        inFIFO.removeAll()
        outFIFO.removeAll()
        linearFIFO.removeAll()
        deviceFIFO?.removeAll()
        captureDown?.reset()
        renderDown?.reset()
        captureUp?.reset()
    }
}
