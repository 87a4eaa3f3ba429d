/// The DC notch SpeexDSP's MDF canceller applies to the microphone before anything else
/// (`filter_dc_notch16` in mdf.c): two zeros at DC and two poles just inside, pole radius 0.982
/// at 16 kHz (0.9 under 12 kHz, 0.992 from 24 kHz).
///
/// The unit passes the microphone on without the canceller where there is no echo path
/// (``EchoPathDetector``); running it through the same notch keeps that path's output what the
/// canceller would give with nothing to cancel, DC removed and phase alike, so switching between
/// the two changes nothing but the echo.
///
/// Thread safety: not thread-safe; one owner (the I/O thread). Nothing allocates.
struct DCNotch {
    private let radius: Float
    private let den2: Float
    private var mem0: Float = 0
    private var mem1: Float = 0

    init(sampleRate: Int) {
        radius = sampleRate < 12000 ? 0.9 : sampleRate < 24000 ? 0.982 : 0.992
        den2 = radius * radius + 0.7 * (1 - radius) * (1 - radius)
    }

    /// Filters `count` samples of `input` into `output` (which may be `input`).
    mutating func process(_ input: UnsafePointer<Int16>, into output: UnsafeMutablePointer<Int16>, count: Int) {
        var m0 = mem0, m1 = mem1
        for i in 0..<count {
            let x = Float(input[i])
            let y = m0 + x
            m0 = m1 + 2 * (radius * y - x)
            m1 = x - den2 * y
            output[i] = Int16(clamping: Int((radius * y).rounded()))
        }
        mem0 = m0
        mem1 = m1
    }

    mutating func reset() {
        mem0 = 0
        mem1 = 0
    }
}
