public import AudioSession
import Platform
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A proximity sensor: near (the phone is at the ear) or far.
///
/// Thread safety: implementations are safe to call from any thread; the handler may be
/// called from any thread.
public protocol ProximitySensor: AnyObject, Sendable {
    /// The current reading.
    var proximity: AudioSession.Proximity { get }
    /// Installs the handler called on each change (nil to stop).
    func setHandler(_ handler: (@Sendable (AudioSession.Proximity) -> Void)?)
}

/// A proximity sensor driven by a test, a demo or a key press: there is no real one here.
///
/// Thread safety: safe from any thread; the handler runs on the thread that calls ``set(_:)``.
public final class SimulatedProximitySensor: ProximitySensor {
    private let state = Mutex<(AudioSession.Proximity, (@Sendable (AudioSession.Proximity) -> Void)?)>((.far, nil))

    public init(_ initial: AudioSession.Proximity = .far) { state.withLock { $0.0 = initial } }

    public var proximity: AudioSession.Proximity { state.withLock { $0.0 } }

    public func setHandler(_ handler: (@Sendable (AudioSession.Proximity) -> Void)?) { state.withLock { $0.1 = handler } }

    /// Changes the reading and reports it if it changed.
    public func set(_ value: AudioSession.Proximity) {
        let handler = state.withLock { s -> (@Sendable (AudioSession.Proximity) -> Void)? in
            guard s.0 != value else { return nil }
            s.0 = value
            return s.1
        }
        handler?(value)
    }
}

/// A Linux IIO proximity sensor (`/sys/bus/iio/devices/iio:deviceN/in_proximity_raw`), polled.
///
/// The raw value grows as an object comes closer. It reads near at or above `nearThreshold`
/// and far again only below `nearThreshold - hysteresis`, so a value hovering at the
/// threshold does not flap between routes.
///
/// Thread safety: safe from any thread; the handler runs on the sensor's polling thread.
public final class IIOProximitySensor: ProximitySensor {
    private let core: Core
    private let poller: PlatformThread

    /// The file read (`.../in_proximity_raw`).
    public var path: String { core.path }

    /// Starts polling a sensor every `interval`.
    ///
    /// - Parameter nearThreshold: raw readings at or above it mean near.
    /// - Parameter hysteresis: how far below the threshold a reading must fall to mean far again.
    /// - Parameter interval: how often the sensor is read.
    /// - Parameter devicePath: an IIO device folder, or `nil` to use the first device that has
    ///   `in_proximity_raw`.
    /// - Throws: ``IOError/invalidState(_:)`` when no such sensor exists.
    public init(devicePath: String? = nil, nearThreshold: Int, hysteresis: Int = 0,
                interval: Duration = .milliseconds(100)) throws(IOError) {
        guard let dir = devicePath ?? Self.findDevice() else {
            throw .invalidState("no IIO proximity sensor under /sys/bus/iio/devices")
        }
        let core = Core(path: dir + "/in_proximity_raw", nearThreshold: nearThreshold, hysteresis: max(0, hysteresis))
        guard Core.readRaw(core.path) != nil else { throw .invalidState("cannot read \(core.path)") }
        core.poll()
        let micros = UInt32(clamping: max(1, interval.components.seconds * 1_000_000 + interval.components.attoseconds / 1_000_000_000_000))
        self.core = core
        poller = try startThread(name: "callaudio-prox", priority: nil) {
            while core.isRunning {
                usleep(micros)
                core.poll()
            }
        }
    }

    deinit { core.stop() }  // then `poller`'s own deinit joins the thread

    public var proximity: AudioSession.Proximity { core.state.withLock { $0.proximity } }

    public func setHandler(_ handler: (@Sendable (AudioSession.Proximity) -> Void)?) { core.state.withLock { $0.handler = handler } }

    static func findDevice() -> String? {
        let base = "/sys/bus/iio/devices"
        guard let dir = opendir(base) else { return nil }
        defer { closedir(dir) }
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if name.hasPrefix("iio:device"), access("\(base)/\(name)/in_proximity_raw", R_OK) == 0 { return "\(base)/\(name)" }
        }
        return nil
    }

    /// What the polling thread shares with the sensor object.
    private final class Core: Sendable {
        struct State {
            var proximity: AudioSession.Proximity = .unknown
            var handler: (@Sendable (AudioSession.Proximity) -> Void)?
            var running = true
        }

        let path: String
        let nearThreshold: Int
        let hysteresis: Int
        let state = Mutex(State())

        init(path: String, nearThreshold: Int, hysteresis: Int) {
            self.path = path
            self.nearThreshold = nearThreshold
            self.hysteresis = hysteresis
        }

        var isRunning: Bool { state.withLock { $0.running } }
        func stop() { state.withLock { $0.running = false } }

        /// Reads the sensor once and reports a change, outside the lock.
        func poll() {
            guard let raw = Self.readRaw(path) else { return }
            let report = state.withLock { s -> (AudioSession.Proximity, (@Sendable (AudioSession.Proximity) -> Void)?)? in
                let next: AudioSession.Proximity
                if raw >= nearThreshold { next = .near }
                else if raw < nearThreshold - hysteresis || s.proximity == .unknown { next = .far }
                else { next = s.proximity }
                guard next != s.proximity else { return nil }
                s.proximity = next
                return (next, s.handler)
            }
            if let (value, handler) = report { handler?(value) }
        }

        static func readRaw(_ path: String) -> Int? {
            guard let f = fopen(path, "r") else { return nil }
            defer { fclose(f) }
            var buffer = [CChar](repeating: 0, count: 32)
            guard fgets(&buffer, 32, f) != nil else { return nil }
            let text = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            return Int(text.filter { !$0.isWhitespace })
        }
    }
}
