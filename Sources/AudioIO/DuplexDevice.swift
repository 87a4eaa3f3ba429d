/// A full-duplex audio device the I/O engine drives in lockstep: each period it
/// reads one capture period, lets the callback fill one playback period, and writes it.
///
/// Implementations: ``ALSADuplexDevice`` (two ALSA PCMs) and `SimulatedRoomDevice`
/// (a room with an echo path, for the demo, tests and the bench).
///
/// Thread safety: a device is created and configured on a control thread and then
/// used by exactly one I/O thread from ``start()`` to ``stop()``. ``start()``,
/// ``readCapture(_:)``, ``writePlayback(_:)`` and ``stop()`` are called on that thread
/// and must not allocate, lock (beyond what the OS audio API does) or log.
public protocol DuplexDevice: AnyObject, Sendable {
    /// A name for logs and stats (e.g. "default", "pulse -> pulse", "simulated room").
    var name: String { get }
    /// The negotiated format: the actual values, which may differ from what was asked.
    var format: IOFormat { get }
    /// Xruns recovered so far (any thread). After one the device comes back with a round trip
    /// its timing reports again from the next period: the engine starts its tracker over when
    /// this count moves.
    var xrunCount: Int { get }

    /// Prefills playback and starts both streams (I/O thread).
    func start() throws(IOError)
    /// Reads one capture period into `buffer` (`format.periodFrames` frames), blocking until it is
    /// ready when the device is paced (I/O thread). Returns the capture delay after the read.
    func readCapture(_ buffer: UnsafeMutableBufferPointer<Int16>) throws(IOError) -> Int
    /// Frames queued in playback now, i.e. before the next write is heard (I/O thread).
    func playbackDelay() -> Int
    /// Writes one playback period (I/O thread).
    func writePlayback(_ buffer: UnsafeBufferPointer<Int16>) throws(IOError)
    /// Stops both streams at once, dropping pending frames (I/O thread).
    func stop()
}

/// Hardware that opens the duplex device of its current route, and moves a running engine
/// to another device when the route changes: what a call needs from the session's hardware
/// beyond the policy's `AudioSession/AudioHardware`. ``ALSAAudioHardware`` is one.
///
/// Thread safety: implementations are safe from any thread.
public protocol AudioDeviceProvider: AnyObject, Sendable {
    /// The duplex device for the current route, opened and configured.
    func openDevice(preferred: IOFormat) throws(IOError) -> any DuplexDevice
    /// The engine that route changes move; nil to stop moving one.
    func attach(_ engine: AudioIOEngine?)
}
