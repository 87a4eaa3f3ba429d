/// Work that a change under the system's lock leaves for after the lock is released:
/// stopping I/O, logging, finishing streams, and dropping closures (whose captured objects'
/// `deinit` might call back into the system).
struct Effects: Sendable {
    var ioStops: [IORecord] = []
    var warnings: [String] = []
    var finishedStreams: [AsyncStream<AudioSessionNotification>.Continuation] = []
    var released: [any Sendable] = []

    init() {}
}

/// One thing to do, in order, outside the lock: configure the hardware or deliver a notification.
enum OutboxItem: Sendable {
    case configureHardware(any AudioHardware, HardwareRequest)
    case setInputGain(any AudioHardware, Float)
    case notify(
        AudioSessionNotification,
        observers: [@Sendable (AudioSessionNotification) -> Void],
        streams: [AsyncStream<AudioSessionNotification>.Continuation])
}

/// What the hardware should be doing: nothing (no session active), or a route with preferred values.
enum HardwareRequest: Hashable, Sendable {
    case idle
    case route(AudioSessionRouteDescription, PreferredHardwareValues)
}
