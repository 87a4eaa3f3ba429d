import Platform

/// Starts a ``PlatformThread`` for AudioIO, its failure as an ``IOError``.
func startThread(name: String, priority: Int32?, body: @escaping @Sendable () -> Void) throws(IOError) -> PlatformThread {
    do {
        return try PlatformThread(name: name, priority: priority, body: body)
    } catch {
        throw .threadCreation(error.code)
    }
}
