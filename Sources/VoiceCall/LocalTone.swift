import AudioIO

/// A tone on our own loudspeaker: the ringback while an outgoing call rings without early
/// media (a 180 with no SDP), as a desk phone plays it. The device's capture runs and is
/// dropped; nothing goes to the network.
///
/// Thread safety: ``start()`` and ``stop()`` from the call controller; the I/O thread only
/// reads the tone's samples (rendered once, before the engine starts).
final class LocalTone: @unchecked Sendable {
    // @unchecked: the engine is started and stopped by the controller only.
    private let engine: AudioIOEngine

    /// Renders one cycle of `tone` at the device's rate; nothing plays until ``start()``.
    init(device: any DuplexDevice, tone: CallTone) throws(CallError) {
        let cursor = ToneCursor(try tone.render(rate: device.format.sampleRate))
        engine = AudioIOEngine(device: device) { cycle in cursor.fill(cycle.playback) }
    }

    func start() throws(CallError) {
        do { try engine.start() } catch { throw .media("cannot play the ringback: \(error)") }
    }

    /// Stops the tone and closes the device's I/O thread (waits for it).
    func stop() { engine.stop() }
}

/// Where the tone's cycle is: read and moved on by the I/O thread only.
private final class ToneCursor: @unchecked Sendable {
    // @unchecked: `position` belongs to the I/O thread; `cycle` is never written after init.
    private let cycle: [Int16]
    private var position = 0

    init(_ cycle: [Int16]) { self.cycle = cycle }

    /// Copies the next period of the cycle into `playback`, wrapping round (no allocation).
    func fill(_ playback: UnsafeMutableBufferPointer<Int16>) {
        cycle.withUnsafeBufferPointer { cycle in
            for i in playback.indices {
                playback[i] = cycle[position]
                position = position + 1 == cycle.count ? 0 : position + 1
            }
        }
    }
}
