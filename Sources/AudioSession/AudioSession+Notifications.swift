extension AudioSession {
    /// A stream of every notification for this session, from now on.
    ///
    /// Each call makes a new stream; it buffers without limit, so a slow reader misses nothing.
    /// The stream finishes when the session is released; stop iterating to unsubscribe.
    ///
    /// ```swift
    /// for await case .interruption(let interruption) in session.notifications() { ... }
    /// ```
    ///
    /// Thread safety: safe from any thread. Elements are yielded in the order the changes
    /// happened (see ``AudioSystem`` for delivery).
    public func notifications() -> AsyncStream<AudioSessionNotification> {
        let (stream, continuation) = AsyncStream.makeStream(of: AudioSessionNotification.self, bufferingPolicy: .unbounded)
        let id = self.id
        let streamID = system.withStateLock { state -> UInt64 in
            let streamID = state.makeID()
            state.sessions[id]?.streams[streamID] = continuation
            return streamID
        }
        continuation.onTermination = { [weak system] _ in
            guard let system else { return }
            let removed = system.withStateLock { $0.sessions[id]?.streams.removeValue(forKey: streamID) }
            _ = removed  // released outside the lock
        }
        return stream
    }

    /// Adds an observer closure called with every notification for this session.
    ///
    /// The closure is called synchronously on the thread whose call caused the change, after
    /// the system's lock is released (see ``AudioSystem``), so it may call back into the session.
    /// Keep it short: it delays the caller.
    ///
    /// - Parameter observer: The closure.
    /// - Returns: A token for ``removeObserver(_:)``. Dropping the token does not remove the observer.
    ///
    /// Thread safety: safe from any thread.
    public func addObserver(_ observer: @escaping @Sendable (AudioSessionNotification) -> Void) -> AudioSessionObserverToken {
        let id = self.id
        return system.withStateLock { state in
            let observerID = state.makeID()
            state.sessions[id]?.observers[observerID] = observer
            return AudioSessionObserverToken(sessionID: id, id: observerID)
        }
    }

    /// Removes an observer. A notification already being delivered on another thread may still reach it once.
    ///
    /// Thread safety: safe from any thread.
    public func removeObserver(_ token: AudioSessionObserverToken) {
        guard token.sessionID == id else { return }
        let removed = system.withStateLock { $0.sessions[token.sessionID]?.observers.removeValue(forKey: token.id) }
        _ = removed  // released outside the lock
    }
}
